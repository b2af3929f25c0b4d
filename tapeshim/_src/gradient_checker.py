"""`tf.test.compute_gradient`: a function's Jacobians from the tape and from central finite differences.

Both Jacobians of `y = f(*xs)` with respect to each argument are 2-D NumPy arrays of `y.size` rows and
`x.size` columns (a complex value counts as two reals: real part, then imaginary part). The theoretical
one is built row by row from `GradientTape.gradient` with a one-hot `output_gradients`; the numeric one
column by column from `(f(x + delta) - f(x - delta)) / (2 * delta)`, computed in NumPy in `y`'s dtype,
as TF computes both.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tapeshim._src import dtypes
from tapeshim._src.indexed_slices import IndexedSlices
from tapeshim._src.tape import GradientTape
from tapeshim._src.tensor import Tensor, convert_to_tensor

_DIFFERENTIABLE = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


def _dims(shape: Any) -> tuple[int, ...]:
    """A fully known shape (eager tensors always have one) as a tuple of ints."""
    return tuple(int(dimension) for dimension in shape)


def _size(shape: Any) -> int:
    size = 1
    for dimension in _dims(shape):
        size *= dimension
    return size


def _host(value: Any) -> np.ndarray:
    """A tensor (or `IndexedSlices`) result as a NumPy array."""
    if isinstance(value, IndexedSlices):
        value = convert_to_tensor(value)
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value)


def _real_numpy(dtype: dtypes.DType) -> np.dtype:
    return np.dtype(dtype.real_dtype.as_numpy_dtype)


def _check_dtype(dtype: dtypes.DType, what: str) -> None:
    if dtype.base_dtype.name not in _DIFFERENTIABLE:
        raise AssertionError(f"Cannot compute gradient for unsupported type {dtype.name} of {what}")


def _theoretical_jacobian(
    f: Callable[..., Any], y_shape: tuple[int, ...], y_dtype: dtypes.DType, xs: list[Tensor], param: int
) -> np.ndarray:
    """The Jacobian of `f` at `xs` with respect to `xs[param]`, from the tape (one backward pass per row).

    Raises:
      ValueError: `f`'s result is empty and its gradient is not zeros of `x`'s shape.
    """
    x = xs[param]
    x_columns = _size(x.shape) * (2 if x.dtype.is_complex else 1)
    y_rows = _size(y_shape) * (2 if y_dtype.is_complex else 1)
    jacobian = np.zeros((y_rows, x_columns), dtype=_real_numpy(x.dtype))
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = f(*xs)
    # One-hot cotangents: the flat real view of `dy` walks real and imaginary parts of a complex `y`.
    dy: np.ndarray = np.zeros(y_shape, dtype=y_dtype.as_numpy_dtype)
    dy_flat = dy.reshape(-1).view(_real_numpy(y_dtype))
    for row in range(y_rows):
        dy_flat[row] = 1
        gradient = tape.gradient(y, x, output_gradients=convert_to_tensor(dy.copy(), dtype=y_dtype))
        dy_flat[row] = 0
        if gradient is not None:
            row_values: np.ndarray = _host(gradient).astype(x.dtype.as_numpy_dtype, copy=False)
            jacobian[row, :] = row_values.reshape(-1).view(jacobian.dtype)
    if y_rows == 0:
        gradient = tape.gradient(y, x, output_gradients=convert_to_tensor(dy, dtype=y_dtype))
        values = np.zeros(_dims(x.shape), jacobian.dtype) if gradient is None else _host(gradient)
        if values.shape != _dims(x.shape):
            raise ValueError(f"Empty gradient has wrong shape: expected {x.shape}, got {values.shape}")
        if np.any(values):
            raise ValueError("Empty tensor with nonzero gradients")
    return jacobian


def _numeric_jacobian(
    f: Callable[..., Any], y_size: int, y_dtype: dtypes.DType, xs: list[Tensor], param: int, delta: float
) -> np.ndarray:
    """The Jacobian of `f` at `xs` with respect to `xs[param]`, by central differences (two calls per column)."""
    x = xs[param]
    x_numpy = np.dtype(x.dtype.as_numpy_dtype)
    x_real, y_real = _real_numpy(x.dtype), _real_numpy(y_dtype)
    values = [np.array(_host(t)) for t in xs]
    # The perturbed argument lives in `flat`, a 1-D real array; each call rebuilds it in `x`'s shape and dtype.
    flat = np.array(values[param], dtype=x_numpy).reshape(-1).view(x_real).copy()
    shape = values[param].shape

    def call() -> np.ndarray:
        arguments = list(values)
        arguments[param] = flat.view(x_numpy).reshape(shape).copy()
        return _host(f(*(convert_to_tensor(a) for a in arguments)))

    scale = np.asarray(2 * delta, dtype=y_real)[()]
    columns = flat.size
    rows = y_size * (2 if y_dtype.is_complex else 1)
    jacobian = np.zeros((rows, columns), dtype=x_real)
    for column in range(columns):
        original = flat[column]
        flat[column] = original + x_real.type(delta)
        above = call()
        flat[column] = original - x_real.type(delta)
        below = call()
        flat[column] = original
        jacobian[:, column] = ((above - below) / scale).reshape(-1).view(y_real)
    return jacobian


def compute_gradient(
    f: Callable[..., Any], x: list[Any] | tuple[Any, ...], delta: float | None = None
) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """The theoretical and numeric Jacobians of `f` at `x`, as `tf.test.compute_gradient`.

    Args:
      f: the function; called with one tensor per element of `x`, it returns one tensor.
      x: the arguments of `f`: a list or tuple of values convertible to tensors (float or complex).
      delta: the step of the central differences (default `1/1024`, exact in binary floating point).

    Returns:
      `(theoretical, numeric)`: two tuples with one 2-D array per argument, of `f(*x)`'s size rows and the
      argument's size columns (twice either size for a complex value), in the argument's real dtype.

    Raises:
      ValueError: `x` is not a list or tuple, or `f`'s result is empty but its gradient is not zero.
      AssertionError: an argument or the result is not of a float or complex dtype (as TF's assertion).

    Example:

    >>> theoretical, numeric = tf.test.compute_gradient(lambda x: x * x, [3.0])
    >>> theoretical, numeric  # ((array([[6.]], dtype=float32),), (array([[6.]], dtype=float32),))
    """
    if not isinstance(x, (list, tuple)):
        raise ValueError(
            "`x` must be a list or tuple of values convertible to a Tensor (arguments to `f`), not a %s" % type(x)
        )
    step = 1.0 / 1024 if delta is None else delta
    xs = [convert_to_tensor(value) for value in x]
    y = convert_to_tensor(f(*(convert_to_tensor(value) for value in xs)))
    y_shape = _dims(y.shape)
    theoretical, numeric = [], []
    for param, argument in enumerate(xs):
        _check_dtype(argument.dtype, f"argument {param}")
        _check_dtype(y.dtype, "y")
        theoretical.append(_theoretical_jacobian(f, y_shape, y.dtype, xs, param))
        numeric.append(_numeric_jacobian(f, _size(y_shape), y.dtype, xs, param, step))
    return tuple(theoretical), tuple(numeric)


def max_error(grad1: Sequence[np.ndarray], grad2: Sequence[np.ndarray]) -> float:
    """The largest elementwise gap between two lists of Jacobians (TF's `gradient_checker_v2.max_error`)."""
    error = 0.0
    for first, second in zip(grad1, grad2):
        if first.size or second.size:
            error = max(error, float(np.max(np.fabs(first - second))))
    return error
