"""`tf.debugging.enable_check_numerics` / `disable_check_numerics`: the switch and the per-op check.

While enabled, every op an eager program runs has its floating outputs checked (complex, integer and bool
outputs are not, nor are `Identity` and the ops that only make constants, as TF's callback): one holding a NaN
or an infinity raises TF's `InvalidArgumentError`, whose message names the op, the output, the counts of
each bad kind and the op's inputs, as TF's.

`check(op_name, inputs, outputs)` is the check: `registry.apply` calls it on an op's outputs while `enabled`,
also for an op a tape records (computed at once then, as TF's eager tape runs each op). Ops traced inside
`tapeshim.function` or inside a computation JAX traces (a Keras layer's call) are not checked (TF's graph
mode adds CheckNumerics ops there). Disabled, the cost is one
flag test per op.
"""

from __future__ import annotations

from typing import Any, Sequence

import jax
import numpy as np

from tapeshim._src import errors

enabled = False
"""Whether `enable_check_numerics` is in effect (module-wide, as TF's, which applies to every thread)."""

_IGNORED_OPS = frozenset({"Identity", "IdentityN", "Const", "ZerosLike", "OnesLike", "StopGradient", "Fill"})


def enable_check_numerics(stack_height_limit: int = 30, path_length_limit: int = 50) -> None:
    """Makes every eager op whose floating output holds a NaN or an infinity raise, as TF's.

    Args:
      stack_height_limit: ignored (TF's limit on the stack frames its graph-mode message shows).
      path_length_limit: ignored (TF's limit on the file paths in that message).
    """
    global enabled
    enabled = True


def disable_check_numerics() -> None:
    """Turns `enable_check_numerics` off (a no-op when it is not on)."""
    global enabled
    enabled = False


def _tensor_text(value: Any) -> str:
    from tapeshim._src.tensor import Tensor  # import cycle: tensor -> ops -> this module

    return repr(value) if isinstance(value, Tensor) else str(value)


def message(op_name: str, index: int, n_outputs: int, output: Any, inputs: Sequence[Any]) -> str | None:
    """TF's message for output `index` of `op_name`, or None when it holds no NaN or infinity."""
    array = np.asarray(output.numpy())
    if array.dtype.kind != "f" and str(array.dtype) != "bfloat16":
        return None
    values = array.astype(np.float64)
    counts = {
        "-Inf": int(np.count_nonzero(values == -np.inf)),
        "+Inf": int(np.count_nonzero(values == np.inf)),
        "NaN": int(np.count_nonzero(np.isnan(values))),
    }
    if not any(counts.values()):
        return None
    lines = [
        "",
        "",
        f'!!! Detected Infinity or NaN in output {index} of eagerly-executing op "{op_name}" '
        f"(# of outputs: {n_outputs}) !!!",
        f"  dtype: <dtype: '{output.dtype.name}'>",
        f"  shape: {tuple(output.shape)}",
    ]
    lines += [f"  # of {'+NaN' if kind == 'NaN' else kind} elements: {n}" for kind, n in counts.items() if n]
    lines.append("")
    if len(inputs) == 1:
        lines.append(f"  Input tensor: {_tensor_text(inputs[0])}")
    elif inputs:
        lines.append(f"  Input tensors ({len(inputs)}):")
        lines += [f"         {k}: {_tensor_text(t)}" for k, t in enumerate(inputs)]
    worst = "NaN" if counts["NaN"] else "-Inf" if counts["-Inf"] else "+Inf"
    return "\n".join(lines) + f"\n\n : Tensor had {worst} values"


def check(op_name: str, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
    """Raises TF's `InvalidArgumentError` if a floating output of an eager op holds a NaN or an infinity.

    Raises:
      InvalidArgumentError: as TF's CheckNumericsV2.
    """
    if op_name in _IGNORED_OPS:
        return
    if any(isinstance(output._value, jax.core.Tracer) for output in outputs):
        return  # inside a computation JAX traces (a Keras layer's call): its values are not known here
    for index, output in enumerate(outputs):
        text = message(op_name, index, len(outputs), output, inputs)
        if text is not None:
            raise errors.invalid_argument(text, "CheckNumericsV2")
