"""`tf.train.ExponentialMovingAverage`: shadow variables that track moving averages of variables.

`apply(var_list)` makes one non-trainable shadow variable per variable on its first sight (its
initial value is the variable's value read outside any function trace, as TF's `init_scope`
reads it) and then updates every shadow with TF's formula:

    decay = min(decay, (1 + num_updates) / (10 + num_updates))   # only with num_updates
    shadow -= (shadow - variable) * cast(1 - decay, shadow.dtype)

`decay` and `1 - decay` are computed in float32, as TF. Inside a `tapeshim.function`, shadows are
made on the first trace only (as every variable), and the updates are the trace's assignments.
"""

from __future__ import annotations

from typing import Any, Iterable

from tapeshim._src import dtypes
from tapeshim._src.function_trace import init_scope
from tapeshim._src.ops import math_ops
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.variable import Variable

_FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


def _base_name(variable: Variable) -> str:
    """A variable's name without the `:0` suffix (TF's `var.op.name`)."""
    name = variable.name
    return name[: -len(":0")] if name.endswith(":0") else name


class ExponentialMovingAverage:
    """Maintains moving averages of variables, as `tf.train.ExponentialMovingAverage`.

    Args:
      decay: the decay rate (a float or a float tensor), typically close to 1.
      num_updates: an optional count of updates (a number, tensor or variable); the decay then
        becomes `min(decay, (1 + num_updates) / (10 + num_updates))`.
      zero_debias: accepted for compatibility; as in TF, it changes nothing for variables (TF
        debiases only averages of tensors, which eager TF refuses).
      name: the name suffix of the shadow variables (`<variable>/<name>`).
    """

    def __init__(
        self,
        decay: Any,
        num_updates: Any = None,
        zero_debias: bool = False,
        name: str = "ExponentialMovingAverage",
    ) -> None:
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict[int, tuple[Variable, Variable]] = {}

    @property
    def name(self) -> str:
        """The name of this moving average (the shadow variables' name suffix)."""
        return self._name

    def _decay_tensor(self) -> Tensor:
        decay = convert_to_tensor(self._decay, dtype=dtypes.float32)
        if self._num_updates is not None:
            count = math_ops.cast(self._num_updates, dtypes.float32)
            decay = math_ops.minimum(decay, (1.0 + count) / (10.0 + count))
        return decay

    def apply(self, var_list: Iterable[Any] | None = None) -> None:
        """Makes shadow variables for new variables of `var_list` and updates every shadow of it.

        Args:
          var_list: the variables to average (float16, bfloat16, float32 or float64); None averages nothing.

        Raises:
          TypeError: for a variable of another dtype, or a tensor that is not a variable (as eager TF).
        """
        if var_list is None:
            return None
        variables = list(var_list)
        for variable in variables:
            if not isinstance(variable, Variable):
                raise TypeError(
                    "tf.train.ExponentialMovingAverage does not support non-Variable tensors when eager "
                    "execution is enabled."
                )
            if variable.dtype.name not in _FLOAT_DTYPES:
                raise TypeError(f"The variables must be half, float, or double: {variable.name}")
        for variable in variables:
            if id(variable) not in self._averages:
                with init_scope():
                    initial = variable.read_value()
                shadow = Variable(initial, trainable=False, name=self.average_name(variable), dtype=variable.dtype)
                self._averages[id(variable)] = (variable, shadow)
        one_minus = 1.0 - self._decay_tensor()
        for variable in variables:
            shadow = self._averages[id(variable)][1]
            rate = math_ops.cast(one_minus, variable.dtype)
            shadow.assign_sub((shadow.read_value() - variable.read_value()) * rate)
        return None

    def average(self, var: Any) -> Variable | None:
        """The shadow variable of `var`, or None when `apply` has not seen it."""
        entry = self._averages.get(id(var))
        return entry[1] if entry is not None and entry[0] is var else None

    def average_name(self, var: Any) -> str:
        """The name of `var`'s shadow variable: `<var's name>/<this average's name>`, without `:0`."""
        return f"{_base_name(var)}/{self._name}"
