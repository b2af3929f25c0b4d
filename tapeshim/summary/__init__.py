"""`tf.summary`: TensorBoard event files (scalars, histograms, images, text), eagerly and in `tapeshim.function`."""

from tapeshim._src.summary_ops import (
    SummaryWriter,
    audio,
    create_file_writer,
    create_noop_writer,
    flush,
    histogram,
    image,
    record_if,
    scalar,
    should_record_summaries,
    text,
    trace_export,
    trace_off,
    trace_on,
    write,
)
from tapeshim.summary import experimental

__all__ = [
    "SummaryWriter",
    "audio",
    "create_file_writer",
    "create_noop_writer",
    "experimental",
    "flush",
    "histogram",
    "image",
    "record_if",
    "scalar",
    "should_record_summaries",
    "text",
    "trace_export",
    "trace_off",
    "trace_on",
    "write",
]
