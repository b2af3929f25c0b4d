"""`tf.train`: checkpoints, and `tf.train.Example` protocol buffers."""

from tapeshim._src.checkpoint import Checkpoint, CheckpointManager
from tapeshim._src.checkpoint_io import (
    CheckpointOptions,
    CheckpointReader,
    get_checkpoint_state,
    latest_checkpoint,
    list_variables,
    load_checkpoint,
    load_variable,
)
from tapeshim._src.distribute.multi_worker import ClusterSpec
from tapeshim._src.io.example_proto import (
    BytesList,
    Example,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
    SequenceExample,
)

__all__ = [
    "Checkpoint",
    "ClusterSpec",
    "CheckpointManager",
    "CheckpointOptions",
    "CheckpointReader",
    "get_checkpoint_state",
    "latest_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
]
__all__ += [
    "BytesList",
    "Example",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "SequenceExample",
]
