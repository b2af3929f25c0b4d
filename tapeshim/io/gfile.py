"""`tf.io.gfile`: TF's file API (local file system)."""

from tapeshim._src.io.gfile import (
    GFile,
    copy,
    exists,
    get_registered_schemes,
    glob,
    isdir,
    join,
    listdir,
    makedirs,
    mkdir,
    remove,
    rename,
    rmtree,
    stat,
    walk,
)

__all__ = [
    "GFile",
    "copy",
    "exists",
    "get_registered_schemes",
    "glob",
    "isdir",
    "join",
    "listdir",
    "makedirs",
    "mkdir",
    "remove",
    "rename",
    "rmtree",
    "stat",
    "walk",
]
