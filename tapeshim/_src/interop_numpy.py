"""`tapeshim.experimental.numpy`: TF's `tf.experimental.numpy`, as `jax.numpy` calls recorded on the tape.

Each function takes tensors, variables, numpy arrays or Python values, runs
the `jax.numpy` function of the same name through tapeshim's one dispatch path
(so a `GradientTape` records it and JAX differentiates it), and returns a
`tf.Tensor`. Dtypes follow NumPy's rules, as TF's `tf.experimental.numpy`
does: a Python float list becomes float64, a float32 tensor times a Python
float stays float32, an int32 sum is int64.

Python scalars in array positions are static arguments of the op (they keep
JAX's weak typing), so a loop that passes a new Python number each step
compiles one kernel per value; pass a tensor instead.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes
from tapeshim._src.interop import from_jax
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike, TensorLike
from tapeshim._src.variable import Variable

_SCALARS = (bool, int, float, complex, np.generic)
SEQ = "seq"
EINSUM = "einsum"


def _static(value: Any) -> Any:
    """A hashable form of a static argument (lists become tuples, tapeshim dtypes numpy ones)."""
    if isinstance(value, dtypes.DType):
        return np.dtype(value._np)
    if isinstance(value, (list, tuple)):
        return tuple(_static(v) for v in value)
    if isinstance(value, np.ndarray):
        return ("__ndarray__", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value)
    hash(value)
    return value


def _unstatic(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 4 and value[0] == "__ndarray__":
        return np.frombuffer(value[3], dtype=np.dtype(value[1])).reshape(value[2])
    return value


def _as_tensor(value: Any) -> Tensor:
    if isinstance(value, (Tensor, Variable)):
        return convert_to_tensor(value)
    try:
        return from_jax(jnp.asarray(value))
    except TypeError:
        raise TypeError(f"Cannot convert {type(value).__name__} to an array.") from None


def _is_array(value: Any) -> bool:
    return isinstance(value, (Tensor, Variable, np.ndarray, list, tuple)) or hasattr(value, "__jax_array__")


def _impl(fn: Callable, template: tuple, kwargs: tuple) -> Callable:
    def run(*arrays: Any) -> Any:
        args = []
        for kind, item in template:
            if kind == "A":
                args.append(arrays[item])
            elif kind == "Q":
                args.append([arrays[i] for i in item])
            else:
                args.append(_unstatic(item))
        out = fn(*args, **{k: _unstatic(v) for k, v in kwargs})
        return tuple(out) if isinstance(out, (list, tuple)) else out

    return run


def _make(name: str, fn: Callable, arrays: Any) -> Callable:
    """A TF-numpy function: `arrays` leading positional arguments (or SEQ/EINSUM) are array inputs."""
    ops: dict[tuple, OpDef] = {}

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        tensors: list[Tensor] = []
        template: list[tuple] = []
        for position, arg in enumerate(args):
            is_input = (
                (arrays == SEQ and position == 0)
                or (arrays == EINSUM and position > 0)
                or (isinstance(arrays, int) and position < arrays)
            )
            if is_input and arrays == SEQ:
                template.append(("Q", tuple(range(len(tensors), len(tensors) + len(arg)))))
                tensors.extend(_as_tensor(a) for a in arg)
            elif is_input and not isinstance(arg, _SCALARS) and arg is not None:
                template.append(("A", len(tensors)))
                tensors.append(_as_tensor(arg))
            else:
                template.append(("S", _static(arg)))
        if name in _FLOAT_RESULTS and "dtype" not in kwargs and tensors and not tensors[0]._dtype._trainable:
            kwargs["dtype"] = np.float64  # NumPy's (and TF's) mean of integers is float64; JAX's float32
        static_kwargs = tuple(sorted((k, _static(v)) for k, v in kwargs.items()))
        key = (tuple(template), static_kwargs)
        if not tensors:
            out = _impl(fn, *key)()
            return tuple(from_jax(o) for o in out) if isinstance(out, tuple) else from_jax(out)
        op = ops.get(key)
        if op is None:
            op = ops[key] = OpDef(f"numpy.{name}", _impl(fn, *key))
        outputs = apply(op, tuple(tensors))
        returns_list = isinstance(jnp_result_kind(fn, name), list)
        return list(outputs) if returns_list else outputs[0] if len(outputs) == 1 else outputs

    call.__doc__ = f"TF's `tf.experimental.numpy.{name}`: `jax.numpy.{fn.__name__}`, recorded on the tape."
    return call


_FLOAT_RESULTS = {"mean", "std", "var", "average", "nanmean"}
_LIST_RESULTS = {"split", "hsplit", "vsplit", "dsplit", "broadcast_arrays", "meshgrid"}


def jnp_result_kind(fn: Callable, name: str) -> Any:
    """`[]` for the functions that return a list of arrays, else None."""
    del fn
    return [] if name in _LIST_RESULTS else None


_UNARY = (
    "abs absolute angle arccos arccosh arcsin arcsinh arctan arctanh cbrt ceil conj conjugate cos cosh deg2rad "
    "exp exp2 expm1 fabs fix floor imag isfinite isinf isnan isneginf isposinf iscomplex isreal log log10 log1p "
    "log2 logical_not negative positive rad2deg real reciprocal round sign signbit sin sinc sinh sqrt square tan "
    "tanh ravel copy transpose squeeze expand_dims reshape sum mean prod max min amax amin argmax argmin std var "
    "cumsum cumprod all any count_nonzero flip fliplr flipud diag diagflat diagonal trace tril triu ptp sort "
    "argsort moveaxis swapaxes tile repeat roll rot90 atleast_1d atleast_2d atleast_3d broadcast_to pad nansum "
    "nanmean nanprod zeros_like ones_like full_like average diff vander split hsplit vsplit dsplit"
).split()
_BINARY = (
    "add subtract multiply divide true_divide floor_divide mod remainder power float_power maximum minimum "
    "arctan2 hypot logaddexp logaddexp2 equal not_equal less less_equal greater greater_equal logical_and "
    "logical_or logical_xor dot matmul inner outer vdot cross kron tensordot heaviside nextafter isclose "
    "array_equal take take_along_axis append polyval gcd lcm"
).split()
_TERNARY = ("where", "clip")
_SEQUENCES = ("concatenate", "stack", "hstack", "vstack", "dstack")
_VARARGS = ("broadcast_arrays", "meshgrid")  # every positional argument is an array
_CREATION = ("arange", "linspace", "logspace", "geomspace", "zeros", "ones", "full", "eye", "identity", "tri")
_ALIASES = {"around": "round", "empty": "zeros", "empty_like": "zeros_like"}


def _float64_divide(x: Any, y: Any) -> Any:
    if jnp.issubdtype(jnp.result_type(x, y), jnp.integer) or jnp.result_type(x, y) == jnp.bool_:
        x, y = jnp.asarray(x, jnp.float64), jnp.asarray(y, jnp.float64)
    return jnp.true_divide(x, y)


def _build() -> dict[str, Callable]:
    table: dict[str, Callable] = {}
    for names, arrays in ((_UNARY, 1), (_BINARY, 2), (_TERNARY, 3), (_SEQUENCES, SEQ), (_CREATION, 0)):
        for name in names:
            fn = getattr(jnp, name, None)
            if fn is not None:
                table[name] = _make(name, fn, arrays)
    for name in _VARARGS:
        table[name] = _make(name, getattr(jnp, name), 1 << 30)
    table["fix"] = _make("fix", jnp.trunc, 1)  # NumPy's fix: round towards zero
    table["tri"] = functools.wraps(jnp.tri)(
        lambda *args, **kwargs: from_jax(jnp.tri(*args, **{"dtype": np.float64, **kwargs}))
    )
    table["nonzero"] = nonzero
    table["pad"] = pad
    table["einsum"] = _make("einsum", jnp.einsum, EINSUM)
    for name in ("divide", "true_divide"):  # NumPy divides integers in float64; JAX in float32
        table[name] = _make(name, _float64_divide, 2)
    for alias, name in _ALIASES.items():
        table[alias] = table[name]
    return table


def asarray(a: TensorLike, dtype: DTypeLike | None = None) -> Tensor:
    """TF's `tf.experimental.numpy.asarray`: a tensor stays itself; other values convert with NumPy's dtypes."""
    if isinstance(a, (Tensor, Variable)) and dtype is None:
        return convert_to_tensor(a)
    if isinstance(a, (Tensor, Variable)):
        return _cast(a, dtype)
    return from_jax(jnp.asarray(a, dtype=_static(dtype) if dtype is not None else None))


def array(a: TensorLike, dtype: DTypeLike | None = None, copy: bool = True) -> Tensor:
    """TF's `tf.experimental.numpy.array`: like `asarray`."""
    del copy
    return asarray(a, dtype)


_cast_op = _make("astype", lambda x, dtype: x.astype(dtype), 1)


def _cast(a: Any, dtype: Any) -> Tensor:
    return _cast_op(a, _static(dtype))


def nonzero(a: TensorLike) -> list:
    """The indices of the non-zero elements, one int64 tensor per dimension (computed at once: its size is data)."""
    found = np.nonzero(np.asarray(_as_tensor(a).value))
    return [from_jax(jnp.asarray(index, jnp.int64)) for index in found]


_pad_op = _make("pad", jnp.pad, 1)


def pad(array: Any, pad_width: Any, mode: str, **kwargs: Any) -> Tensor:
    """TF's `tf.experimental.numpy.pad`: `mode` is required, as in TF."""
    return _pad_op(array, pad_width, mode=mode, **kwargs)


def ndim(a: TensorLike) -> int:
    """The number of dimensions."""
    return len(_as_tensor(a)._shape)


def shape(a: TensorLike) -> tuple:
    """The shape as a tuple of ints."""
    return tuple(_as_tensor(a)._shape)


def size(a: TensorLike) -> np.int64:
    """The number of elements (a numpy int64, as TF's)."""
    return np.int64(np.prod(_as_tensor(a)._shape, dtype=np.int64))


FUNCTIONS = _build()
