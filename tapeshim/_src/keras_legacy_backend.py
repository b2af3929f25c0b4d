"""TF's legacy `tf.keras.backend` functions (Keras 1/2's `K.*`), on tapeshim ops.

TF 2.21's `tf.keras.backend` keeps Keras 2's backend functions, written against
TensorFlow ops. tapeshim gives the same functions on its own ops, so they
accept tapeshim tensors and variables, are recorded by tapes (with gradients)
and traced by `tapeshim.function`. This module holds the math, array, loss,
random and variable helpers; `keras_legacy_backend_nn` the convolution,
pooling, padding, CTC, control-flow and RNN ones.
"""

from __future__ import annotations

import builtins
import math as _math
from typing import Any

import numpy as np

import tapeshim as tf
from tapeshim._src.keras_bridge import keras
from tapeshim._src.typing_aliases import AxisLike, DTypeLike, ShapeLike, TensorLike

_floatx = keras.backend.floatx
_epsilon = keras.backend.epsilon


def _rank(x: TensorLike) -> int:
    return len(tf.convert_to_tensor(x).shape) if not hasattr(x, "shape") else len(x.shape)


# -- elementwise math -------------------------------------------------------------------------------
def abs(x: TensorLike) -> Any:  # noqa: A001 - TF's name
    """Elementwise absolute value."""
    return tf.abs(x)


def cos(x: TensorLike) -> Any:
    """Elementwise cosine."""
    return tf.cos(x)


def sin(x: TensorLike) -> Any:
    """Elementwise sine."""
    return tf.sin(x)


def exp(x: TensorLike) -> Any:
    """Elementwise exponential."""
    return tf.exp(x)


def log(x: TensorLike) -> Any:
    """Elementwise natural logarithm."""
    return tf.math.log(x)


def sign(x: TensorLike) -> Any:
    """Elementwise sign."""
    return tf.sign(x)


def round(x: TensorLike) -> Any:  # noqa: A001 - TF's name
    """Elementwise rounding to the nearest integer, half to even."""
    return tf.round(x)


def square(x: TensorLike) -> Any:
    """Elementwise square."""
    return tf.square(x)


def sqrt(x: TensorLike) -> Any:
    """Elementwise square root, with negative inputs taken as zero."""
    x = tf.convert_to_tensor(x)
    return tf.sqrt(tf.maximum(x, tf.zeros([], x.dtype)))


def pow(x: TensorLike, a: Any) -> Any:  # noqa: A001 - TF's name
    """Elementwise `x ** a`."""
    return tf.pow(x, a)


def tanh(x: TensorLike) -> Any:
    """Elementwise hyperbolic tangent."""
    return tf.tanh(x)


def sigmoid(x: TensorLike) -> Any:
    """Elementwise logistic sigmoid."""
    return tf.sigmoid(x)


def hard_sigmoid(x: TensorLike) -> Any:
    """Piecewise linear sigmoid: `clip(0.2 * x + 0.5, 0, 1)`."""
    x = tf.convert_to_tensor(x)
    scaled = x * tf.constant(0.2, x.dtype) + tf.constant(0.5, x.dtype)
    return tf.clip_by_value(scaled, 0.0, 1.0)


def softplus(x: TensorLike) -> Any:
    """Elementwise `log(exp(x) + 1)`."""
    return tf.math.softplus(x)


def softsign(x: TensorLike) -> Any:
    """Elementwise `x / (abs(x) + 1)`."""
    return tf.math.softsign(x)


def elu(x: Any, alpha: float = 1.0) -> Any:
    """Exponential linear unit with slope `alpha` for negative inputs."""
    activated = tf.nn.elu(x)
    if alpha == 1:
        return activated
    return tf.where(x > 0, activated, alpha * activated)


def relu(x: Any, alpha: float = 0.0, max_value: float | None = None, threshold: float = 0.0) -> Any:
    """Rectified linear unit with an optional leak `alpha`, cap `max_value` and `threshold`.

    Args:
      x: the input.
      alpha: the slope below `threshold`.
      max_value: the largest output (None: no cap).
      threshold: the input value below which the output is `alpha * (x - threshold)`.
    """
    dtype = getattr(x, "dtype", _floatx())
    if alpha != 0.0:
        if max_value is None and threshold == 0:
            return tf.nn.leaky_relu(x, alpha=alpha)
        below = tf.nn.relu(-x + threshold) if threshold != 0 else tf.nn.relu(-x)
    cap = max_value is not None
    if threshold != 0:
        x = x * tf.cast(tf.greater(x, threshold), dtype=dtype)
    elif max_value == 6:
        x = tf.nn.relu6(x)
        cap = False
    else:
        x = tf.nn.relu(x)
    if cap:
        x = tf.clip_by_value(x, tf.constant(0, x.dtype), tf.constant(max_value, x.dtype))
    if alpha != 0.0:
        x = x - tf.constant(alpha, x.dtype) * below
    return x


def softmax(x: TensorLike, axis: int | tuple = -1) -> Any:
    """Softmax over `axis` (an int or a tuple of axes).

    Raises:
      ValueError: if `x` has rank 1 or less.
    """
    x = tf.convert_to_tensor(x)
    if len(x.shape) <= 1:
        raise ValueError(f"Cannot apply softmax to a tensor that is 1D. Received input: {x}")
    if isinstance(axis, int):
        return tf.nn.softmax(x, axis=axis)
    numerator = tf.exp(x - tf.reduce_max(x, axis=axis, keepdims=True))
    return numerator / tf.reduce_sum(numerator, axis=axis, keepdims=True)


# -- comparisons and binary ops -------------------------------------------------------------------------
def equal(x: TensorLike, y: TensorLike) -> Any:
    """Elementwise `x == y`."""
    return tf.equal(x, y)


def not_equal(x: TensorLike, y: TensorLike) -> Any:
    """Elementwise `x != y`."""
    return tf.not_equal(x, y)


def greater(x: TensorLike, y: TensorLike) -> Any:
    """Elementwise `x > y`."""
    return tf.greater(x, y)


def greater_equal(x: TensorLike, y: TensorLike) -> Any:
    """Elementwise `x >= y`."""
    return tf.greater_equal(x, y)


def less(x: TensorLike, y: TensorLike) -> Any:
    """Elementwise `x < y`."""
    return tf.less(x, y)


def less_equal(x: TensorLike, y: TensorLike) -> Any:
    """Elementwise `x <= y`."""
    return tf.less_equal(x, y)


def maximum(x: TensorLike, y: TensorLike) -> Any:
    """Elementwise maximum."""
    return tf.maximum(x, y)


def minimum(x: TensorLike, y: TensorLike) -> Any:
    """Elementwise minimum."""
    return tf.minimum(x, y)


def clip(x: TensorLike, min_value: TensorLike, max_value: TensorLike) -> Any:
    """Clips `x` to `[min_value, max_value]` (None: unbounded; a smaller max is raised to the min)."""
    if isinstance(min_value, (int, float)) and isinstance(max_value, (int, float)) and max_value < min_value:
        max_value = min_value
    return tf.clip_by_value(x, -np.inf if min_value is None else min_value, np.inf if max_value is None else max_value)


# -- reductions --------------------------------------------------------------------------------------
def _float_if_bool(x: TensorLike) -> Any:
    x = tf.convert_to_tensor(x)
    return tf.cast(x, _floatx()) if x.dtype == tf.bool else x


def all(x: TensorLike, axis: AxisLike = None, keepdims: bool = False) -> Any:  # noqa: A001 - TF's name
    """Logical AND over `axis`, of `x` as booleans."""
    return tf.reduce_all(tf.cast(x, tf.bool), axis, keepdims)


def any(x: TensorLike, axis: AxisLike = None, keepdims: bool = False) -> Any:  # noqa: A001 - TF's name
    """Logical OR over `axis`, of `x` as booleans."""
    return tf.reduce_any(tf.cast(x, tf.bool), axis, keepdims)


def sum(x: TensorLike, axis: AxisLike = None, keepdims: bool = False) -> Any:  # noqa: A001 - TF's name
    """Sum over `axis`."""
    return tf.reduce_sum(x, axis, keepdims)


def prod(x: TensorLike, axis: AxisLike = None, keepdims: bool = False) -> Any:
    """Product over `axis`."""
    return tf.reduce_prod(x, axis, keepdims)


def max(x: TensorLike, axis: AxisLike = None, keepdims: bool = False) -> Any:  # noqa: A001 - TF's name
    """Maximum over `axis`."""
    return tf.reduce_max(x, axis, keepdims)


def min(x: TensorLike, axis: AxisLike = None, keepdims: bool = False) -> Any:  # noqa: A001 - TF's name
    """Minimum over `axis`."""
    return tf.reduce_min(x, axis, keepdims)


def mean(x: TensorLike, axis: AxisLike = None, keepdims: bool = False) -> Any:
    """Mean over `axis` (booleans are taken as floatx)."""
    return tf.reduce_mean(_float_if_bool(x), axis, keepdims)


def std(x: TensorLike, axis: AxisLike = None, keepdims: bool = False) -> Any:
    """Standard deviation over `axis` (booleans are taken as floatx)."""
    return tf.math.reduce_std(_float_if_bool(x), axis=axis, keepdims=keepdims)


def var(x: TensorLike, axis: AxisLike = None, keepdims: bool = False) -> Any:
    """Variance over `axis` (booleans are taken as floatx)."""
    return tf.math.reduce_variance(_float_if_bool(x), axis=axis, keepdims=keepdims)


def argmax(x: TensorLike, axis: int = -1) -> Any:
    """Index of the largest value along `axis` (int64)."""
    return tf.argmax(x, axis)


def argmin(x: TensorLike, axis: int = -1) -> Any:
    """Index of the smallest value along `axis` (int64)."""
    return tf.argmin(x, axis)


def cumsum(x: TensorLike, axis: int = 0) -> Any:
    """Cumulative sum along `axis`."""
    return tf.cumsum(x, axis=axis)


def cumprod(x: TensorLike, axis: int = 0) -> Any:
    """Cumulative product along `axis`."""
    return tf.math.cumprod(x, axis=axis)


def l2_normalize(x: TensorLike, axis: AxisLike = None) -> Any:
    """`x` divided by its L2 norm over `axis`."""
    return tf.linalg.l2_normalize(x, axis=axis)


def in_top_k(predictions: Any, targets: Any, k: int) -> Any:
    """Whether each target class is among the `k` largest predictions of its row (ties count as in).

    Args:
      predictions: float Tensor of shape `(batch, classes)`.
      targets: int Tensor of shape `(batch,)`.
      k: how many of the largest predictions count.
    """
    predictions = tf.convert_to_tensor(predictions)
    target_scores = tf.gather(predictions, tf.cast(targets, tf.int32), axis=1, batch_dims=1)
    larger = tf.reduce_sum(tf.cast(predictions > target_scores[:, None], tf.int32), axis=1)
    return tf.logical_and(larger < k, tf.math.is_finite(target_scores))


# -- shapes and layout ---------------------------------------------------------------------------------
def int_shape(x: TensorLike) -> tuple | None:
    """The static shape of `x` as a tuple (None for unknown dimensions)."""
    shape = getattr(x, "shape", None)
    if shape is None:
        return None
    return tuple(shape.as_list()) if hasattr(shape, "as_list") else tuple(shape)


def ndim(x: Any) -> int:
    """The rank of `x`."""
    return len(x.shape)


def shape(x: TensorLike) -> Any:
    """The dynamic shape of `x` as an int32 Tensor."""
    return tf.shape(x)


def dtype(x: Any) -> str:
    """The name of `x`'s dtype."""
    return x.dtype.base_dtype.name


def count_params(x: Any) -> int:
    """The number of elements of a variable or tensor."""
    return _math.prod(x.shape.as_list())


def reshape(x: TensorLike, shape: ShapeLike) -> Any:
    """`x` reshaped to `shape`."""
    return tf.reshape(x, shape)


def flatten(x: TensorLike) -> Any:
    """`x` as a vector."""
    return tf.reshape(x, [-1])


def batch_flatten(x: TensorLike) -> Any:
    """`x` reshaped to `(batch, -1)`."""
    x = tf.convert_to_tensor(x)
    return tf.reshape(x, tf.stack([-1, prod(tf.shape(x)[1:])]))


def expand_dims(x: TensorLike, axis: int = -1) -> Any:
    """`x` with a new axis of size 1 at `axis`."""
    return tf.expand_dims(x, axis)


def squeeze(x: TensorLike, axis: int) -> Any:
    """`x` without its size-1 axis `axis`."""
    return tf.squeeze(x, [axis])


def permute_dimensions(x: TensorLike, pattern: Any) -> Any:
    """`x` with its axes permuted by `pattern`."""
    return tf.transpose(x, perm=pattern)


def transpose(x: TensorLike) -> Any:
    """`x` with its axes reversed."""
    return tf.transpose(x)


def reverse(x: TensorLike, axes: int | list) -> Any:
    """`x` reversed along `axes`."""
    return tf.reverse(x, [axes] if isinstance(axes, int) else axes)


def concatenate(tensors: list, axis: int = -1) -> Any:
    """Joins `tensors` along `axis`."""
    if axis < 0:
        rank = _rank(tensors[0])
        axis = axis % rank if rank else 0
    return tf.concat(list(tensors), axis)


def stack(x: list, axis: int = 0) -> Any:
    """Stacks the tensors `x` along a new axis `axis`."""
    return tf.stack(x, axis=axis)


def tile(x: TensorLike, n: int | list) -> Any:
    """`x` repeated `n` times along each axis."""
    return tf.tile(x, [n] if isinstance(n, int) else n)


def repeat(x: TensorLike, n: int) -> Any:
    """A rank-2 `x` of shape `(batch, d)` repeated to `(batch, n, d)`.

    Raises:
      ValueError: if `x` is not rank 2.
    """
    if ndim(x) != 2:
        raise ValueError(f"Expected input `x` to have rank 2. Received: rank(x)={ndim(x)}")
    return tf.tile(tf.expand_dims(x, 1), [1, n, 1])


def repeat_elements(x: TensorLike, rep: int, axis: int) -> Any:
    """Each slice of `x` along `axis` repeated `rep` times, as `np.repeat`."""
    return tf.repeat(x, rep, axis=axis)


def gather(reference: TensorLike, indices: TensorLike) -> Any:
    """The rows of `reference` at `indices`."""
    return tf.gather(reference, indices)


def one_hot(indices: TensorLike, num_classes: int) -> Any:
    """float32 one-hot vectors of length `num_classes` for `indices`."""
    return tf.one_hot(indices, depth=num_classes, axis=-1)


def dot(x: TensorLike, y: TensorLike) -> Any:
    """Matrix product; for rank > 2, contracts the last axis of `x` with the second-to-last of `y`.

    The result has shape `x.shape[:-1] + y.shape[:-2] + y.shape[-1:]`.
    """
    x, y = tf.convert_to_tensor(x), tf.convert_to_tensor(y)
    if len(x.shape) <= 2 and len(y.shape) <= 2:
        return tf.matmul(x, y)
    x_shape, y_shape = x.shape.as_list(), y.shape.as_list()
    y_axes = list(range(len(y_shape)))
    y_axes = [y_axes.pop(-2)] + y_axes
    flat_x = tf.reshape(x, [-1, x_shape[-1]])
    flat_y = tf.reshape(tf.transpose(y, perm=y_axes), [y_shape[-2], -1])
    return tf.reshape(tf.matmul(flat_x, flat_y), x_shape[:-1] + y_shape[:-2] + y_shape[-1:])


def batch_dot(x: TensorLike, y: TensorLike, axes: Any = None) -> Any:
    """Per-example dot product of `x` and `y` along `axes` (one axis of each, never the batch axis).

    The result has shape `(batch,) + x's other axes + y's other axes`, and
    `(batch, 1)` when both are rank 2.

    Raises:
      ValueError: for inputs of rank < 2, different batch sizes, several axes
        per input, axis 0, or axes of different sizes.
    """
    x, y = tf.convert_to_tensor(x), tf.convert_to_tensor(y)
    x_shape, y_shape = x.shape, y.shape
    x_rank, y_rank = len(x_shape), len(y_shape)
    if x_rank < 2 or y_rank < 2:
        raise ValueError(
            f"Cannot do batch_dot on inputs with rank < 2. Received inputs with tf.shapes {x_shape} and {y_shape}."
        )
    if x_shape[0] is not None and y_shape[0] is not None and x_shape[0] != y_shape[0]:
        raise ValueError(
            "Cannot do batch_dot on inputs with different batch sizes. "
            f"Received inputs with tf.shapes {x_shape} and {y_shape}."
        )
    if isinstance(axes, int):
        axes = [axes, axes]
    if axes is None:
        axes = [x_rank - 1, y_rank - 1 if y_rank == 2 else y_rank - 2]
    if builtins.any(isinstance(a, (list, tuple)) for a in axes):
        raise ValueError(
            f"Multiple target dimensions are not supported. Expected: None, int, (int, int), Provided: {axes}"
        )
    axes = [axes[0] % x_rank if axes[0] < 0 else axes[0], axes[1] % y_rank if axes[1] < 0 else axes[1]]
    if 0 in axes:
        raise ValueError(
            "Cannot perform batch_dot over axis 0. If your inputs are not batched, add a dummy "
            "batch dimension to your inputs using K.expand_dims(x, 0)"
        )
    x_axis, y_axis = axes
    if x_shape[x_axis] is not None and y_shape[y_axis] is not None and x_shape[x_axis] != y_shape[y_axis]:
        raise ValueError(
            f"Cannot do batch_dot on inputs with tf.shapes {x_shape} and {y_shape} with axes={axes}. "
            f"x.shape[{x_axis}] != y.shape[{y_axis}] ({x_shape[x_axis]} != {y_shape[y_axis]})."
        )
    x_rest = [d for i, d in enumerate(x_shape.as_list()) if i not in (0, x_axis)]
    y_rest = [d for i, d in enumerate(y_shape.as_list()) if i not in (0, y_axis)]
    x_last = tf.transpose(x, [i for i in range(x_rank) if i != x_axis] + [x_axis])
    y_second = tf.transpose(y, [0, y_axis] + [i for i in range(1, y_rank) if i != y_axis])
    product = tf.matmul(
        tf.reshape(x_last, [x_shape[0], -1, x_shape[x_axis]]), tf.reshape(y_second, [y_shape[0], y_shape[y_axis], -1])
    )
    return tf.reshape(product, [x_shape[0]] + (x_rest + y_rest or [1]))


# -- conversion, constants and variables ---------------------------------------------------------------
def cast(x: TensorLike, dtype: DTypeLike) -> Any:
    """`x` cast to `dtype`."""
    return tf.cast(x, dtype)


def cast_to_floatx(x: TensorLike) -> Any:
    """`x` cast to floatx: a Tensor for tensors and variables, else a numpy array."""
    if isinstance(x, (tf.Tensor, tf.Variable, keras.Variable)):
        return tf.cast(x, dtype=_floatx())
    return np.asarray(x, dtype=_floatx())


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str | None = None) -> Any:
    """A constant Tensor (floatx unless `dtype` says otherwise)."""
    return tf.constant(value, dtype=_floatx() if dtype is None else dtype, shape=shape, name=name)


def variable(value: TensorLike, dtype: DTypeLike | None = None, name: str | None = None, constraint: Any = None) -> Any:
    """A `tf.Variable` holding `value` (floatx unless `dtype` says otherwise)."""
    return tf.Variable(
        value, dtype=tf.as_dtype(_floatx() if dtype is None else dtype), name=name, constraint=constraint
    )


def _filled(fill: Any, shape: ShapeLike, dtype: DTypeLike, name: str | None) -> Any:
    value = fill(shape=shape, dtype=tf.as_dtype(_floatx() if dtype is None else dtype), name=name)
    # A variable unless the shape has a zero-sized dimension, as TF's backend.
    return variable(value, dtype=value.dtype, name=name) if builtins.all(value.shape.as_list()) else value


def zeros(shape: Any, dtype: Any = None, name: str | None = None) -> Any:
    """A variable of zeros (a Tensor if `shape` has a zero-sized dimension)."""
    return _filled(tf.zeros, shape, dtype, name)


def ones(shape: Any, dtype: Any = None, name: str | None = None) -> Any:
    """A variable of ones (a Tensor if `shape` has a zero-sized dimension)."""
    return _filled(tf.ones, shape, dtype, name)


def eye(size: int, dtype: DTypeLike | None = None, name: str | None = None) -> Any:
    """A variable holding the identity matrix of `size`."""
    dtype = tf.as_dtype(_floatx() if dtype is None else dtype)
    return variable(tf.eye(size, dtype=dtype), dtype, name)


def zeros_like(x: TensorLike, dtype: DTypeLike | None = None, name: str | None = None) -> Any:
    """Zeros of `x`'s shape."""
    return tf.zeros_like(x, dtype=dtype, name=name)


def ones_like(x: TensorLike, dtype: DTypeLike | None = None, name: str | None = None) -> Any:
    """Ones of `x`'s shape."""
    return tf.ones_like(x, dtype=dtype, name=name)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: DTypeLike = "int32") -> Any:
    """`tf.range(start, stop, step)`, cast to `dtype` (a negative lone `start` gives an empty range)."""
    if stop is None and start < 0:
        start = 0
    result = tf.range(start, limit=stop, delta=step, name="arange")
    return result if dtype == "int32" else tf.cast(result, dtype)


def is_sparse(tensor: Any) -> bool:
    """Whether `tensor` is a sparse tensor (tapeshim has none, so always False)."""
    del tensor
    return False


def to_dense(tensor: Any) -> Any:
    """`tensor` itself (tapeshim has no sparse tensors to densify)."""
    return tensor


def get_value(x: TensorLike) -> Any:
    """The value of a tensor or variable as a numpy array (anything else is returned as it is)."""
    if isinstance(x, (tf.Tensor, tf.Variable, keras.Variable)):
        return x.numpy() if hasattr(x, "numpy") else np.asarray(x)
    return x


def eval(x: TensorLike) -> Any:  # noqa: A001 - TF's name
    """The value of a tensor or variable as a numpy array."""
    return get_value(to_dense(x))


def batch_get_value(tensors: list) -> list:
    """The values of several tensors or variables as numpy arrays."""
    return [x.numpy() for x in tensors]


def set_value(x: Any, value: Any) -> None:
    """Assigns a numpy value to a variable, converted to the variable's dtype."""
    x.assign(np.asarray(value, dtype=tf.as_dtype(x.dtype).name))


def batch_set_value(tuples: list) -> None:
    """Assigns `(variable, value)` pairs."""
    for x, value in tuples:
        set_value(x, value)


def update(x: Any, new_x: Any) -> Any:
    """Assigns `new_x` to the variable `x`; returns the variable."""
    return x.assign(new_x)


def update_add(x: Any, increment: Any) -> Any:
    """Adds `increment` to the variable `x`; returns the variable."""
    return x.assign_add(increment)


def update_sub(x: Any, decrement: Any) -> Any:
    """Subtracts `decrement` from the variable `x`; returns the variable."""
    return x.assign_sub(decrement)


def moving_average_update(x: Any, value: Any, momentum: Any) -> Any:
    """Moves the variable `x` towards `value`: `x -= (x - value) * (1 - momentum)`."""
    x_dtype = tf.as_dtype(x.dtype)
    momentum = tf.cast(momentum, x_dtype)
    value = tf.cast(value, x_dtype)
    return x.assign_sub((x - value) * (1 - momentum))


def stop_gradient(variables: Any) -> Any:
    """`variables` (a tensor, or a list or tuple of them) with no gradient flowing back.

    A list or tuple gives a lazy `map` of the results, as TF's backend does.
    """
    if isinstance(variables, (list, tuple)):
        return map(tf.stop_gradient, variables)
    return tf.stop_gradient(variables)


# -- random --------------------------------------------------------------------------------------------
def _seed(seed: Any, high: int = 10_000_000) -> Any:
    return np.random.randint(high) if seed is None else seed


def random_normal(
    shape: ShapeLike, mean: float = 0.0, stddev: float = 1.0, dtype: DTypeLike | None = None, seed: int | None = None
) -> Any:
    """Normal random values (floatx unless `dtype` says otherwise)."""
    return tf.random.normal(shape, mean=mean, stddev=stddev, dtype=dtype or _floatx(), seed=_seed(seed))


def random_uniform(
    shape: ShapeLike, minval: float = 0.0, maxval: float = 1.0, dtype: DTypeLike | None = None, seed: int | None = None
) -> Any:
    """Uniform random values in `[minval, maxval)`."""
    return tf.random.uniform(shape, minval=minval, maxval=maxval, dtype=dtype or _floatx(), seed=_seed(seed))


def truncated_normal(
    shape: ShapeLike, mean: float = 0.0, stddev: float = 1.0, dtype: DTypeLike | None = None, seed: int | None = None
) -> Any:
    """Normal random values redrawn beyond two standard deviations."""
    return tf.random.truncated_normal(shape, mean, stddev, dtype=dtype or _floatx(), seed=_seed(seed))


def random_bernoulli(shape: ShapeLike, p: float = 0.0, dtype: DTypeLike | None = None, seed: int | None = None) -> Any:
    """Random ones (with probability `p`) and zeros."""
    dtype = dtype or _floatx()
    draw = tf.random.uniform(shape, dtype=dtype, seed=_seed(seed))
    return tf.where(draw <= p, tf.ones(shape, dtype=dtype), tf.zeros(shape, dtype=dtype))


def random_normal_variable(
    shape: ShapeLike,
    mean: float,
    scale: float,
    dtype: DTypeLike | None = None,
    name: str | None = None,
    seed: int | None = None,
) -> Any:
    """A variable of normal random values."""
    dtype = tf.as_dtype(dtype or _floatx())
    value = tf.random.normal(shape, mean=mean, stddev=scale, dtype=dtype, seed=_seed(seed, 1_000_000_000))
    return variable(value, dtype=dtype, name=name)


def random_uniform_variable(
    shape: ShapeLike,
    low: float,
    high: float,
    dtype: DTypeLike | None = None,
    name: str | None = None,
    seed: int | None = None,
) -> Any:
    """A variable of uniform random values in `[low, high)`."""
    dtype = tf.as_dtype(dtype or _floatx())
    value = tf.random.uniform(shape, minval=low, maxval=high, dtype=dtype, seed=_seed(seed, 1_000_000_000))
    return variable(value, dtype=dtype, name=name)


def dropout(x: TensorLike, level: float, noise_shape: Any = None, seed: int | None = None) -> Any:
    """`x` with a fraction `level` of entries zeroed and the rest scaled by `1 / (1 - level)`."""
    return tf.nn.dropout(x, rate=level, noise_shape=noise_shape, seed=_seed(seed))


# -- losses --------------------------------------------------------------------------------------------
def _clipped(output: Any) -> Any:
    eps = tf.constant(_epsilon(), output.dtype)
    return tf.clip_by_value(output, eps, 1.0 - eps)


def _check_compatible(target: Any, output: Any) -> None:
    target_shape, output_shape = target.shape.as_list(), output.shape.as_list()
    if len(target_shape) != len(output_shape) or builtins.any(
        a is not None and b is not None and a != b for a, b in zip(target_shape, output_shape)
    ):
        raise ValueError(f"Shapes {target.shape} and {output.shape} are incompatible")


def binary_crossentropy(target: Any, output: Any, from_logits: bool = False) -> Any:
    """Elementwise binary crossentropy of probabilities (or logits) `output` against `target`."""
    target, output = tf.convert_to_tensor(target), tf.convert_to_tensor(output)
    if from_logits:
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    output = _clipped(output)
    log_likelihood = target * tf.math.log(output + _epsilon())
    log_likelihood = log_likelihood + (1 - target) * tf.math.log(1 - output + _epsilon())
    return -log_likelihood


def binary_focal_crossentropy(
    target: Any,
    output: Any,
    apply_class_balancing: bool = False,
    alpha: float = 0.25,
    gamma: float = 2.0,
    from_logits: bool = False,
) -> Any:
    """Binary crossentropy weighted by `(1 - p_t) ** gamma` (and by `alpha` with class balancing)."""
    probabilities = tf.sigmoid(output) if from_logits else output
    p_t = target * probabilities + (1 - target) * (1 - probabilities)
    focal = tf.pow(1.0 - p_t, gamma) * binary_crossentropy(target, output, from_logits=from_logits)
    if apply_class_balancing:
        focal = (target * alpha + (1 - target) * (1 - alpha)) * focal
    return focal


def _normalized_probabilities(target: TensorLike, output: TensorLike, from_logits: bool, axis: int) -> tuple:
    target, output = tf.convert_to_tensor(target), tf.convert_to_tensor(output)
    _check_compatible(target, output)
    if from_logits:
        output = tf.nn.softmax(output, axis=axis)
    return target, _clipped(output / tf.reduce_sum(output, axis=axis, keepdims=True))


def categorical_crossentropy(target: TensorLike, output: TensorLike, from_logits: bool = False, axis: int = -1) -> Any:
    """Categorical crossentropy of probabilities (or logits) `output` against one-hot `target`."""
    if from_logits:
        target, output = tf.convert_to_tensor(target), tf.convert_to_tensor(output)
        _check_compatible(target, output)
        return tf.nn.softmax_cross_entropy_with_logits(labels=target, logits=output, axis=axis)
    target, output = _normalized_probabilities(target, output, False, axis)
    return -tf.reduce_sum(target * tf.math.log(output), axis)


def categorical_focal_crossentropy(
    target: Any, output: Any, alpha: float = 0.25, gamma: float = 2.0, from_logits: bool = False, axis: int = -1
) -> Any:
    """Categorical crossentropy weighted by `alpha * (1 - p) ** gamma`."""
    target, output = _normalized_probabilities(target, output, from_logits, axis)
    weighted = tf.pow(1.0 - output, gamma) * alpha * (-target * tf.math.log(output))
    return tf.reduce_sum(weighted, axis=axis)


def sparse_categorical_crossentropy(
    target: TensorLike, output: TensorLike, from_logits: bool = False, axis: int = -1, ignore_class: int | None = None
) -> Any:
    """Crossentropy of probabilities (or logits) `output` against integer class `target`.

    Entries whose target is `ignore_class` get a loss of zero.
    """
    target = tf.cast(tf.convert_to_tensor(target), tf.int64)
    output = tf.convert_to_tensor(output)
    if not from_logits:
        output = tf.math.log(_clipped(output))
    rank = len(output.shape)
    axis %= rank
    if axis != rank - 1:
        output = tf.transpose(output, perm=[i for i in range(rank) if i != axis] + [axis])
    output_shape = tf.shape(output)
    reshaped = len(target.shape) != rank - 1
    if reshaped:
        target = tf.reshape(target, [-1])
        output = tf.reshape(output, [-1, output.shape[-1]])
    if ignore_class is not None:
        valid = tf.not_equal(target, tf.cast(ignore_class, target.dtype))
        losses = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.where(valid, target, tf.zeros_like(target)), logits=output
        )
        losses = tf.where(valid, losses, tf.zeros_like(losses))
        return tf.reshape(losses, output_shape[:-1])
    losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)
    if reshaped and rank >= 3:
        losses = tf.reshape(losses, output_shape[:-1])
    return losses
