"""The signatures of `tapeshim.function`s and their traces, printed as TF prints its function types."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from tapeshim._src import ragged_function
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec
from tapeshim._src.variable import Variable

if TYPE_CHECKING:
    from tapeshim._src.concrete_function import ConcreteFunction


def _spec_of(leaf: Any) -> Any:
    if isinstance(leaf, TensorSpec):
        return TensorSpec(leaf.shape, leaf.dtype, leaf.name)
    if isinstance(leaf, (Tensor, np.ndarray, np.generic)):
        return TensorSpec(
            np.shape(leaf) if not isinstance(leaf, Tensor) else leaf.shape,
            leaf.dtype if isinstance(leaf, Tensor) else convert_to_tensor(leaf).dtype,
        )
    if ragged_function.is_ragged(leaf):
        return ragged_function.constant_spec(leaf)  # its RaggedTensorSpec
    return leaf


def _type_text(value: Any) -> str:
    """TF's `function_type` text for one parameter or output."""
    if isinstance(value, TensorSpec) or ragged_function.is_ragged_spec(value):
        return repr(value)
    if ragged_function.is_ragged(value):
        return repr(ragged_function.constant_spec(value))
    if isinstance(value, (Tensor, np.ndarray, np.generic)):
        return repr(_spec_of(value))
    if isinstance(value, Variable):
        return repr(TensorSpec(value.shape, value.dtype))
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return f"Tuple[{', '.join(_type_text(v) for v in value)}]"
    if isinstance(value, list):
        return f"List[{', '.join(_type_text(v) for v in value)}]"
    if isinstance(value, dict):
        return f"Dict[{', '.join(f'[{k!r}, {_type_text(v)}]' for k, v in value.items())}]"
    if value is None:
        return "NoneType"
    return f"Literal[{value!r}]"


class FunctionType:
    """A trace's signature, printed as TF's `FunctionType`: `(a: TensorSpec(...)) -> TensorSpec(...)`."""

    def __init__(self, function: ConcreteFunction) -> None:
        self._function = function

    @property
    def parameters(self) -> dict:
        return {name: value for name, _, value in self._function._parameters()}

    def __str__(self) -> str:
        texts, kinds = [], [kind for _, kind, _ in self._function._parameters()]
        for position, (name, kind, value) in enumerate(self._function._parameters()):
            if kind == "KEYWORD_ONLY" and "KEYWORD_ONLY" not in kinds[:position]:
                texts.append("*")
            texts.append(f"{name}: {_type_text(value)}")
            if kind == "POSITIONAL_ONLY" and "POSITIONAL_ONLY" not in kinds[position + 1 :]:
                texts.append("/")
        return f"({', '.join(texts)}) -> {self._function._output_text()}"

    __repr__ = __str__


class PolymorphicFunctionType:
    """A `tf.function`'s own `function_type`, printed as TF prints it.

    Without an `input_signature` it lists the parameters (defaults shown as
    `<captured_default_value>`); with one, each parameter with its spec.
    """

    def __init__(self, signature: Any, input_signature: list | None) -> None:
        self._signature = signature
        self._input_signature = input_signature

    def __str__(self) -> str:
        if self._signature is None:
            return "(*args, **kwargs)"
        texts = []
        for position, parameter in enumerate(self._signature.parameters.values()):
            if self._input_signature is not None:
                if position < len(self._input_signature):
                    texts.append(f"{parameter.name}: {_type_text(self._input_signature[position])}")
                continue
            prefix = {"VAR_POSITIONAL": "*", "VAR_KEYWORD": "**"}.get(parameter.kind.name, "")
            default = "" if parameter.default is parameter.empty else "=<captured_default_value>"
            texts.append(f"{prefix}{parameter.name}{default}")
        return f"({', '.join(texts)})"

    __repr__ = __str__
