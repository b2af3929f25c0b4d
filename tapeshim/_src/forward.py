"""`tf.autodiff.ForwardAccumulator`: forward mode as `jax.jvp` over the same replay."""

from __future__ import annotations

from types import TracebackType
from typing import Any

from tapeshim._src import differentiate as diff
from tapeshim._src import nest, tf_logging
from tapeshim._src.state import _thread_state
from tapeshim._src.tape import Recorder, UnconnectedGradients, _zeros, parse_unconnected
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.variable import Variable


class ForwardAccumulator(Recorder):
    """Computes Jacobian-vector products while ops run, as `tf.autodiff.ForwardAccumulator`.

    Args:
      primals: a Tensor or Variable, or a nest of them, to differentiate at.
      tangents: the matching nest of tangents (same shapes and dtypes).

    Raises:
      ValueError: if a primal is given twice or the nests differ; entering the
        accumulator raises it if a tangent's shape differs from its primal's
        (TF raises it at the first op).
    """

    def __init__(self, primals: Any, tangents: Any) -> None:
        super().__init__(watch_accessed_variables=False)
        flat_primals = nest.flatten(primals)
        seen: set[int] = set()
        for primal in flat_primals:
            if id(primal) in seen:
                raise ValueError(
                    "Tensor {} was specified as a primal multiple times. This may indicate an error. If it was "
                    "intended, please sum the corresponding tangents."
                )
            seen.add(id(primal))
        nest.assert_same_structure(primals, tangents)
        self._shape_error: str | None = None
        self._enclosing: list[Recorder] = []
        self._primals: list[Any] = []
        self._tangents: list[Tensor] = []
        for primal, tangent in zip(flat_primals, nest.flatten(tangents)):
            if not isinstance(primal, (Tensor, Variable)):
                primal = convert_to_tensor(primal)
            if not primal._dtype.is_floating:
                tf_logging.warn_first_n(
                    f"The dtype of the watched primal must be floating (e.g. tf.float32), got {primal._dtype!r}", 5
                )
            tangent = convert_to_tensor(tangent, dtype=primal._dtype)
            if tuple(tangent._shape) != tuple(primal._shape) and self._shape_error is None:
                self._shape_error = (
                    f"Shapes must be equal: the tangent of a primal of shape {list(primal._shape)} has shape "
                    f"{list(tangent._shape)}."
                )
            self._watch_one(primal)
            self._primals.append(primal)
            self._tangents.append(tangent)

    def __enter__(self) -> "ForwardAccumulator":
        if self._recording:
            raise ValueError("Accumulator is already recording.")
        if self._shape_error is not None:
            raise ValueError(self._shape_error)
        self._entered = True
        # TF computes tangents as ops run, so the recorders around this one record them then.
        self._enclosing = list(_thread_state.recorders)
        self._push()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._recording:
            self._pop()

    def jvp(self, primals: Any, unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE) -> Any:
        """The tangent of each tensor in `primals` (a nest) computed under this accumulator.

        Returns:
          A nest like `primals`: the Jacobian-vector products, `None` (or zeros
          with `unconnected_gradients='zero'`) for tensors that do not depend on
          the accumulator's primals.
        """
        unconnected = parse_unconnected(unconnected_gradients)
        results = []
        for target in nest.flatten(primals):
            result = None
            if self._entered and isinstance(target, (Tensor, Variable)):
                request = diff.Request(self, [target], self._primals, recorded_by=self._enclosing)
                tangents = [self._tangents[i] for i in request.connected]
                values = diff.differentiate(self, diff.JVP, request, tangents, recorded_by=self._enclosing)
                result = values[0] if values else None
                if result is None and request.identity:
                    result = self._tangents[next(iter(request.identity))]
            if result is None and unconnected is UnconnectedGradients.ZERO:
                result = _zeros(tuple(target._shape), target._dtype)
            results.append(result)
        return nest.pack_sequence_as(primals, results)
