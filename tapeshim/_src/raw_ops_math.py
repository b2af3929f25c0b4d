"""`tf.raw_ops`' math ops: element-wise math, comparisons, logic, casts, reductions, scans and segment ops.

Each is tapeshim's public op under TF's op name and argument names (see `raw_ops_base`).
"""

from __future__ import annotations

from typing import Any, Callable

from tapeshim._src import dtypes
from tapeshim._src.ops.common import (
    attr_error,
    dtype_check,
    enum_name,
    is_python_value,
    is_tensor_like,
    missing_kernel,
    tf_type_name,
)
from tapeshim._src.raw_ops_base import RawOp, define, tf_module
from tapeshim._src.state import _thread_state

_ADD_V2_TYPES = dtype_check("AddV2", "fciu")


def _public(path: str) -> Callable[..., Any]:
    """The public tapeshim function at `path` ("math.exp"), looked up when called."""

    def call(*args: Any, **kwargs: Any) -> Any:
        target: Any = tf_module()
        for part in path.split("."):
            target = getattr(target, part)
        return target(*args, **kwargs)

    return call


# op name -> the public function it runs (`fn(x)`), for TF's one-input ops named `x`.
_UNARY = {
    "Neg": "math.negative",
    "Abs": "math.abs",
    "Exp": "math.exp",
    "Expm1": "math.expm1",
    "Log": "math.log",
    "Log1p": "math.log1p",
    "Sqrt": "math.sqrt",
    "Rsqrt": "math.rsqrt",
    "Square": "math.square",
    "Sin": "math.sin",
    "Cos": "math.cos",
    "Tan": "math.tan",
    "Asin": "math.asin",
    "Acos": "math.acos",
    "Atan": "math.atan",
    "Sinh": "math.sinh",
    "Cosh": "math.cosh",
    "Asinh": "math.asinh",
    "Acosh": "math.acosh",
    "Atanh": "math.atanh",
    "Tanh": "math.tanh",
    "Sigmoid": "math.sigmoid",
    "Sign": "math.sign",
    "Floor": "math.floor",
    "Ceil": "math.ceil",
    "Round": "math.round",
    "Rint": "math.rint",
    "Reciprocal": "math.reciprocal",
    "Inv": "math.reciprocal",
    "Erf": "math.erf",
    "Erfc": "math.erfc",
    "Erfinv": "math.erfinv",
    "Lgamma": "math.lgamma",
    "Digamma": "math.digamma",
    "BesselI0e": "math.bessel_i0e",
    "BesselI1e": "math.bessel_i1e",
    "IsNan": "math.is_nan",
    "IsInf": "math.is_inf",
    "IsFinite": "math.is_finite",
    "LogicalNot": "math.logical_not",
    "Invert": "bitwise.invert",
}

# op name -> the public function it runs (`fn(x, y)`), for TF's two-input ops named `x, y`.
_BINARY = {
    "Sub": "math.subtract",
    "Mul": "math.multiply",
    "MulNoNan": "math.multiply_no_nan",
    "FloorDiv": "math.floordiv",
    "FloorMod": "math.floormod",
    "Mod": "truncatemod",
    "TruncateDiv": "truncatediv",
    "TruncateMod": "truncatemod",
    "Maximum": "math.maximum",
    "Minimum": "math.minimum",
    "Pow": "math.pow",
    "SquaredDifference": "math.squared_difference",
    "Xdivy": "math.xdivy",
    "Xlogy": "math.xlogy",
    "Less": "math.less",
    "LessEqual": "math.less_equal",
    "Greater": "math.greater",
    "GreaterEqual": "math.greater_equal",
    "LogicalAnd": "math.logical_and",
    "LogicalOr": "math.logical_or",
    "BitwiseAnd": "bitwise.bitwise_and",
    "BitwiseOr": "bitwise.bitwise_or",
    "BitwiseXor": "bitwise.bitwise_xor",
    "LeftShift": "bitwise.left_shift",
    "RightShift": "bitwise.right_shift",
}

# op name -> the public reduction it runs, for TF's `(input, axis, keep_dims=False)` reductions.
_REDUCTIONS = {
    "Sum": "math.reduce_sum",
    "Mean": "math.reduce_mean",
    "Max": "math.reduce_max",
    "Min": "math.reduce_min",
    "Prod": "math.reduce_prod",
    "All": "math.reduce_all",
    "Any": "math.reduce_any",
    "EuclideanNorm": "math.reduce_euclidean_norm",
}

_SEGMENT = {
    "SegmentSum": "math.segment_sum",
    "SegmentMean": "math.segment_mean",
    "SegmentMax": "math.segment_max",
    "SegmentMin": "math.segment_min",
    "SegmentProd": "math.segment_prod",
}

_UNSORTED_SEGMENT = {
    "UnsortedSegmentSum": "math.unsorted_segment_sum",
    "UnsortedSegmentMax": "math.unsorted_segment_max",
    "UnsortedSegmentMin": "math.unsorted_segment_min",
    "UnsortedSegmentProd": "math.unsorted_segment_prod",
}


def _is_integer(x: Any) -> bool:
    dtype = tf_module().convert_to_tensor(x).dtype
    return bool(dtype.is_integer)


def _div(x: Any, y: Any) -> Any:
    """TF's `Div`: integers divide truncating towards zero, other dtypes exactly (no bool or string)."""
    tf = tf_module()
    x, y = _one_dtype("Div", x, y)
    _numbers_only("Div", x.dtype)
    return tf.truncatediv(x, y) if x.dtype.is_integer else tf.math.truediv(x, y)


_DIV_TYPES = (
    "bfloat16", "half", "float", "double", "uint8", "int8", "uint16", "int16", "int32", "uint32", "uint64", "int64",
    "complex64", "complex128",
)  # fmt: skip
_DIV_CHECKS = {op_name: dtype_check(op_name, "", _DIV_TYPES) for op_name in ("Div", "RealDiv")}


def _numbers_only(op_name: str, dtype: Any) -> None:
    """The attr error of a division kernel (`Div`, `RealDiv`) for bool or string inputs."""
    _DIV_CHECKS[op_name]((((), dtype),), {})


def real_div(x: Any, y: Any) -> Any:
    """TF's `RealDiv` (`tf.realdiv`): floating and complex inputs only (TF has no CPU kernel for integers, and its
    `T` attribute allows no bool or string)."""
    tf = tf_module()
    x, y = (tf.convert_to_tensor(value) for value in same_dtype(x, y))
    _numbers_only("RealDiv", x.dtype)  # (TF checks `T`, the first input's dtype, first)
    has_kernel = x.dtype.is_floating or x.dtype.is_complex
    if not has_kernel and _thread_state.trace is None:  # (eagerly TF looks for T's kernel before it compares dtypes)
        raise missing_kernel("RealDiv", f"T={enum_name(x.dtype)}")
    _refuse_two_dtypes("RealDiv", x, y)
    if not has_kernel:  # (a graph's builder compares the dtypes first, a TypeError; its kernel is missing at run time)
        raise missing_kernel("RealDiv", f"T={enum_name(x.dtype)}")
    return tf.math.truediv(x, y)


def same_dtype(x: Any, y: Any) -> tuple[Any, Any]:
    """`x` and `y` as tensors, a value converting to the other's dtype, strictly where that is a tensor's (as a raw
    op converts its inputs: `tf.raw_ops.AddV2(x=1.5, y=int_tensor)` raises TypeError)."""
    tf = tf_module()
    if is_tensor_like(x):  # (a tensor or a variable keeps its dtype: a mismatch is the kernel's error)
        return x, y if is_tensor_like(y) else tf.convert_to_tensor(y, dtype=x.dtype)
    if is_tensor_like(y):
        return tf.convert_to_tensor(x, dtype=y.dtype), y
    x = tf.convert_to_tensor(x)
    if is_python_value(y):  # (strictly to the first input's dtype, as TF's raw op: `AddV2(x=1, y=2.5)` is TypeError)
        return x, tf.convert_to_tensor(y, dtype=x.dtype)
    return x, tf.convert_to_tensor(y, dtype_hint=x.dtype)  # (an array casts)


def _one_dtype(op_name: str, x: Any, y: Any) -> tuple[Any, Any]:
    """`x` and `y` as tensors of one dtype (`same_dtype`), or the kernel's InvalidArgumentError (TypeError in a
    trace): a raw op has no Python wrapper to refuse two dtypes first, as `tf.math.truediv`'s does."""
    tf = tf_module()
    x, y = (tf.convert_to_tensor(value) for value in same_dtype(x, y))
    _refuse_two_dtypes(op_name, x, y)
    return x, y


def _refuse_two_dtypes(op_name: str, x: Any, y: Any) -> None:
    """The kernel's InvalidArgumentError (TypeError in a trace) for tensors `x` and `y` of two dtypes."""
    if x.dtype != y.dtype:
        raise attr_error(
            f"cannot compute {op_name} as input #1(zero-based) was expected to be a {tf_type_name(x.dtype)} tensor "
            f"but is a {tf_type_name(y.dtype)} tensor",
            op_name,
        )


def _add_v2(x: Any, y: Any) -> Any:
    """TF's `AddV2`: numbers only (`Add` also concatenates strings)."""
    x, y = same_dtype(x, y)
    first = tf_module().convert_to_tensor(x)
    _ADD_V2_TYPES(((first.shape, first.dtype),), {})
    return _public("math.add")(first, y)


def _equal(op: str) -> Callable[..., Any]:
    def compare(x: Any, y: Any, incompatible_shape_error: bool) -> Any:
        tf = tf_module()
        fn = tf.math.equal if op == "Equal" else tf.math.not_equal
        if incompatible_shape_error:
            return fn(x, y)
        x, y = same_dtype(x, y)
        try:
            tf.broadcast_static_shape(x.shape, y.shape)
        except ValueError:
            return tf.constant(op != "Equal")
        return fn(x, y)

    return compare


def _select(condition: Any, x: Any, y: Any) -> Any:
    """TF's `Select`: `condition` of `x`'s shape, or a vector choosing along `x`'s first dimension."""
    tf = tf_module()
    condition, x = tf.convert_to_tensor(condition), tf.convert_to_tensor(x)
    if condition.shape.rank == 1 and x.shape.rank is not None and x.shape.rank > 1:
        condition = tf.reshape(condition, [-1] + [1] * (x.shape.rank - 1))
    return tf.where(condition, x, y)


def _complex(real: Any, imag: Any, Tout: Any) -> Any:  # noqa: N803 - TF's argument name
    return tf_module().complex(real, imag)


def _real_part(fn: str, op_name: str) -> Callable[..., Any]:
    """TF's `Real`, `Imag` or `Angle`: complex inputs only, with the kernel of their `Tout` (float32 for complex64,
    float64 for complex128; another is TF's NotFoundError)."""

    def call(input: Any, Tout: Any) -> Any:  # noqa: A002, N803 - TF's argument names
        x = tf_module().convert_to_tensor(input)
        complex_only((((), x.dtype),), {})
        out = dtypes.as_dtype(Tout)
        if out is not x.dtype.real_dtype:
            raise missing_kernel(op_name, f"T={enum_name(x.dtype)}, Tout={enum_name(out)}")
        return _public(fn)(x)

    complex_only = dtype_check(op_name, "c")
    return call


def _complex_abs(x: Any, Tout: Any) -> Any:  # noqa: N803 - TF's argument name
    return tf_module().math.abs(x)


def _cast(x: Any, DstT: Any, Truncate: bool) -> Any:  # noqa: N803 - TF's argument names
    return tf_module().cast(x, DstT)


def _reduction(fn: str) -> Callable[..., Any]:
    def reduce(input: Any, axis: Any, keep_dims: bool) -> Any:  # noqa: A002 - TF's argument name
        return _public(fn)(input, axis=axis, keepdims=keep_dims)

    return reduce


_ARG_OUTPUT_TYPES = ("int16", "uint16", "int32", "int64")


def _arg(fn: str) -> Callable[..., Any]:
    def arg(input: Any, dimension: Any, output_type: Any) -> Any:  # noqa: A002 - TF's argument name
        tf = tf_module()
        if tf.as_dtype(output_type).name not in _ARG_OUTPUT_TYPES:
            raise tf.errors.InvalidArgumentError(
                None,
                None,
                f"Value for attr 'output_type' of {tf.as_dtype(output_type).name} is not in the list of allowed "
                f"values: {', '.join(_ARG_OUTPUT_TYPES)}",
            )
        return _public(fn)(input, axis=dimension, output_type=output_type)

    return arg


def _scan(fn: str) -> Callable[..., Any]:
    def scan(x: Any, axis: Any, exclusive: bool, reverse: bool) -> Any:
        return _public(fn)(x, axis=axis, exclusive=exclusive, reverse=reverse)

    return scan


def _add_n(inputs: Any) -> Any:
    """TF's `AddN`: the sum of a non-empty list of tensors."""
    tf = tf_module()
    if not isinstance(inputs, tf.Tensor) and len(inputs) == 0:
        raise tf.errors.InvalidArgumentError(None, None, "AddN needs at least one input (got N=0).")
    return tf.math.add_n(inputs)


def _bincount(arr: Any, size: Any, weights: Any) -> Any:
    tf = tf_module()
    weights = tf.convert_to_tensor(weights)
    if weights.shape.num_elements() == 0:
        return tf.math.bincount(arr, minlength=size, maxlength=size, dtype=weights.dtype)
    return tf.math.bincount(arr, weights=weights, minlength=size, maxlength=size, dtype=weights.dtype)


def math_raw_ops() -> dict[str, RawOp]:
    """The math raw ops, op name -> raw op."""
    table: dict[str, RawOp] = {}
    for op_name, fn in _UNARY.items():
        define(table, op_name, "x", lambda x, fn=fn: _public(fn)(x))
    for op_name, fn in _BINARY.items():
        define(table, op_name, "x y", lambda x, y, fn=fn: _public(fn)(x, y))
    # (`tf.add` converts `y` to `x`'s dtype, a raw op to the tensor's)
    define(table, "Add", "x y", lambda x, y: _public("math.add")(*same_dtype(x, y)))
    define(table, "AddV2", "x y", _add_v2)
    define(table, "DivNoNan", "x y", lambda x, y: _public("math.divide_no_nan")(*_one_dtype("DivNoNan", x, y)))
    define(table, "Div", "x y", _div)
    define(table, "RealDiv", "x y", real_div)
    define(table, "Atan2", "y x", lambda y, x: _public("math.atan2")(y, x))
    define(table, "Betainc", "a b x", _public("math.betainc"))
    define(table, "Igamma", "a x", _public("math.igamma"))
    define(table, "Igammac", "a x", _public("math.igammac"))
    define(table, "Polygamma", "a x", _public("math.polygamma"))
    define(table, "Zeta", "x q", _public("math.zeta"))
    define(table, "Equal", "x y", _equal("Equal"), incompatible_shape_error=True)
    define(table, "NotEqual", "x y", _equal("NotEqual"), incompatible_shape_error=True)
    define(table, "Select", "condition x y", _select)
    define(table, "SelectV2", "condition t e", lambda condition, t, e: tf_module().where(condition, t, e))
    define(table, "Cast", "x DstT", _cast, Truncate=False)
    define(table, "AddN", "inputs", _add_n)
    define(table, "ClipByValue", "t clip_value_min clip_value_max", _public("clip_by_value"))
    define(table, "Complex", "real imag", _complex, Tout=dtypes.complex64)
    define(table, "Real", "input", _real_part("math.real", "Real"), Tout=dtypes.float32)
    define(table, "Imag", "input", _real_part("math.imag", "Imag"), Tout=dtypes.float32)
    define(table, "Angle", "input", _real_part("math.angle", "Angle"), Tout=dtypes.float32)
    define(table, "ComplexAbs", "x", _complex_abs, Tout=dtypes.float32)
    define(table, "Conj", "input", lambda input: _public("math.conj")(input))
    for op_name, fn in _REDUCTIONS.items():
        define(table, op_name, "input axis", _reduction(fn), keep_dims=False)
    define(table, "ArgMax", "input dimension", _arg("math.argmax"), output_type=dtypes.int64)
    define(table, "ArgMin", "input dimension", _arg("math.argmin"), output_type=dtypes.int64)
    define(table, "Cumsum", "x axis", _scan("math.cumsum"), exclusive=False, reverse=False)
    define(table, "Cumprod", "x axis", _scan("math.cumprod"), exclusive=False, reverse=False)
    define(table, "CumulativeLogsumexp", "x axis", _scan("math.cumulative_logsumexp"), exclusive=False, reverse=False)
    for op_name, fn in _SEGMENT.items():
        define(table, op_name, "data segment_ids", _public(fn))
    for op_name, fn in _UNSORTED_SEGMENT.items():
        define(table, op_name, "data segment_ids num_segments", _public(fn))
    define(table, "Bincount", "arr size weights", _bincount)
    return table
