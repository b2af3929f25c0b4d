"""AutoGraph for `tapeshim.function`: Python `if`/`while`/`for` over tensors become `tf.cond`/`tf.while_loop`.

`conversion.py` turns a function's source into its converted form (once per
function, cached), `transformer.py` is the `ast` rewrite, and `operators.py` holds
what the converted code calls at run time.
"""

from tapeshim._src.autograph.conversion import (
    control_status,
    convert,
    convert_if_enabled,
    converted_call,
    do_not_convert,
    to_code,
    to_graph,
)

__all__ = [
    "control_status",
    "convert",
    "convert_if_enabled",
    "converted_call",
    "do_not_convert",
    "to_code",
    "to_graph",
]
