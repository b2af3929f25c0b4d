"""`tf.summary.experimental`: the default step and summary scopes."""

from tapeshim._src.summary_ops import get_step, set_step, summary_scope, write_raw_pb

__all__ = ["get_step", "set_step", "summary_scope", "write_raw_pb"]
