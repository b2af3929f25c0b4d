"""`tf.train`: checkpoints."""

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

__all__ = ["Checkpoint", "CheckpointManager", "CheckpointOptions", "CheckpointReader", "get_checkpoint_state",
           "latest_checkpoint", "list_variables", "load_checkpoint", "load_variable"]
