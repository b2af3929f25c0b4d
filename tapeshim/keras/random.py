"""`tf.keras.random`: Keras 3's random functions, returning tapeshim Tensors.

In TF they return TF tensors. Here a draw returns a tapeshim Tensor; `dropout`
and `shuffle` of a tapeshim tensor with an integer (or no) seed are tape-aware
tapeshim ops, so gradients flow through them as in TF. With a `SeedGenerator`,
Keras advances the generator, so the draw runs as Keras's own call.
"""

import functools as _functools
from typing import Any as _Any
from typing import Callable as _Callable

import jax as _jax

from tapeshim._src.keras_bridge import keras_function as _keras_function
from tapeshim._src.keras_bridge import passthrough as _passthrough
from tapeshim._src.keras_bridge import public_names as _public_names
from tapeshim._src.keras_bridge import tf_keras as _tf_keras
from tapeshim._src.tensor import Tensor as _Tensor
from tapeshim._src.tensor import convert_to_tensor as _convert_to_tensor
from tapeshim._src.variable import Variable as _Variable

SeedGenerator = _tf_keras.random.SeedGenerator


def _as_tensors(value: _Any) -> _Any:
    return _jax.tree_util.tree_map(
        lambda leaf: _convert_to_tensor(leaf) if isinstance(leaf, _jax.Array) else leaf, value
    )


def _tapeshim_random(function: _Callable[..., _Any]) -> _Callable[..., _Any]:
    on_tape = _keras_function(function)

    @_functools.wraps(function)
    def draw(*args: _Any, **kwargs: _Any) -> _Any:
        if _passthrough(args, kwargs):
            return function(*args, **kwargs)
        leaves = _jax.tree_util.tree_leaves((args, kwargs), is_leaf=lambda leaf: isinstance(leaf, (_Tensor, _Variable)))
        if any(isinstance(leaf, (_Tensor, _Variable)) for leaf in leaves) and not any(
            isinstance(leaf, SeedGenerator) for leaf in leaves
        ):
            return on_tape(*args, **kwargs)
        return _as_tensors(function(*args, **kwargs))

    return draw


globals().update(
    {
        name: _tapeshim_random(value)
        for name, value in _public_names(_tf_keras.random).items()
        if name != "SeedGenerator"
    }
)
__all__ = sorted(_public_names(_tf_keras.random))
