"""`tf.debugging`: (filled in by the op-surface issue)."""
