"""`tf.train`: checkpoints."""

from tapeshim._src.checkpoint import Checkpoint, CheckpointManager
from tapeshim._src.checkpoint_io import (
    CheckpointReader,
    latest_checkpoint,
    list_variables,
    load_checkpoint,
    load_variable,
)

__all__ = ["Checkpoint", "CheckpointManager", "CheckpointReader", "latest_checkpoint", "list_variables",
           "load_checkpoint", "load_variable"]
