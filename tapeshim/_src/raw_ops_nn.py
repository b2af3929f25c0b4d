"""`tf.raw_ops`' neural-network, linear-algebra and random ops.

Each is tapeshim's public op under TF's op name and argument names (see `raw_ops_base`). Ops with several named
outputs return TF's named tuples (`TopKV2(values, indices)`).
"""

from __future__ import annotations

from typing import Any

from tapeshim._src import dtypes
from tapeshim._src.raw_ops_base import RawOp, define, named_tuple, tf_module
from tapeshim._src.raw_ops_math import same_dtype

TopKV2 = named_tuple("TopKV2", "values indices")
SoftmaxCrossEntropyWithLogits = named_tuple("SoftmaxCrossEntropyWithLogits", "loss backprop")
SparseSoftmaxCrossEntropyWithLogits = named_tuple("SparseSoftmaxCrossEntropyWithLogits", "loss backprop")
Qr = named_tuple("Qr", "q r")
LogMatrixDeterminant = named_tuple("LogMatrixDeterminant", "sign log_abs_determinant")

_NHWC = [1, 1, 1, 1]


def _padding(padding: str, explicit_paddings: Any) -> Any:
    """TF's `padding` attribute, with "EXPLICIT" as the public ops' list of (before, after) pairs."""
    if padding != "EXPLICIT":
        return padding
    flat = list(explicit_paddings)
    return [flat[i : i + 2] for i in range(0, len(flat), 2)]


def _conv2d(
    input: Any,  # noqa: A002 - TF's argument name
    filter: Any,  # noqa: A002 - TF's argument name
    strides: Any,
    padding: str,
    use_cudnn_on_gpu: bool,
    explicit_paddings: Any,
    data_format: str,
    dilations: Any,
) -> Any:
    _check_length("Sliding window strides", strides, 4)
    _check_length("Sliding window dilations", dilations, 4)
    return tf_module().nn.conv2d(
        input, filter, strides, _padding(padding, explicit_paddings), data_format=data_format, dilations=dilations
    )


def _check_length(what: str, values: Any, length: int) -> None:
    """TF's check that a convolution's `strides`/`dilations` attribute has one entry per input dimension."""
    if len(list(values)) != length:
        raise tf_module().errors.InvalidArgumentError(None, None, f"{what} field must specify {length} dimensions")


def _spatial(values: Any, data_format: str) -> list[Any]:
    """The height and width entries of a 4-entry `strides`/`dilations` list."""
    values = list(values)
    return values[2:4] if data_format == "NCHW" else values[1:3]


def _depthwise(
    input: Any,  # noqa: A002 - TF's argument name
    filter: Any,  # noqa: A002 - TF's argument name
    strides: Any,
    padding: str,
    explicit_paddings: Any,
    data_format: str,
    dilations: Any,
) -> Any:
    _check_length("Sliding window strides", strides, 4)
    _check_length("Sliding window dilations", dilations, 4)
    return tf_module().nn.depthwise_conv2d(
        input,
        filter,
        strides,
        _padding(padding, explicit_paddings),
        data_format=data_format,
        dilations=_spatial(dilations, data_format),
    )


def _max_pool(
    input: Any,  # noqa: A002 - TF's argument name
    ksize: Any,
    strides: Any,
    padding: str,
    explicit_paddings: Any,
    data_format: str,
) -> Any:
    return tf_module().nn.max_pool2d(input, ksize, strides, padding, data_format=data_format)


def _softmax_xent(features: Any, labels: Any) -> Any:
    """TF's `SoftmaxCrossEntropyWithLogits`: the loss per row and its gradient (softmax minus labels)."""
    tf = tf_module()
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=features)
    return SoftmaxCrossEntropyWithLogits(loss, tf.nn.softmax(features) - labels)


def _sparse_softmax_xent(features: Any, labels: Any) -> Any:
    """TF's `SparseSoftmaxCrossEntropyWithLogits`: the loss per row and its gradient."""
    tf = tf_module()
    features = tf.convert_to_tensor(features)
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=features)
    depth = tf.shape(features)[-1]
    backprop = tf.nn.softmax(features) - tf.one_hot(labels, depth, dtype=features.dtype)
    return SparseSoftmaxCrossEntropyWithLogits(loss, backprop)


def _top_k(input: Any, k: Any, sorted: bool, index_type: Any) -> Any:  # noqa: A002 - TF's argument names
    values, indices = tf_module().math.top_k(input, k, sorted=sorted, index_type=index_type)
    return TopKV2(values, indices)


def _batch_matmul(x: Any, y: Any, adj_x: bool, adj_y: bool, grad_x: bool, grad_y: bool) -> Any:
    return tf_module().linalg.matmul(*same_dtype(x, y), adjoint_a=adj_x, adjoint_b=adj_y)


def _batch_matmul_v3(x: Any, y: Any, Tout: Any, adj_x: bool, adj_y: bool, grad_x: bool, grad_y: bool) -> Any:  # noqa: N803
    """TF's `BatchMatMulV3`: the product of `x` and `y` into `Tout`, for the dtypes TF's CPU has a kernel of."""
    from tapeshim._src.ops.matmul_types import check_v3_kernel  # (raw ops build on the public modules)

    tf = tf_module()
    x, y = tf.convert_to_tensor(x), tf.convert_to_tensor(y)
    out = tf.as_dtype(Tout)
    check_v3_kernel(x.dtype, y.dtype, out)
    if x.dtype == y.dtype == out:
        if out == tf.int16:  # (no MatMul of int16: an int32 product wraps to the same int16 values)
            product = tf.linalg.matmul(tf.cast(x, tf.int32), tf.cast(y, tf.int32), adjoint_a=adj_x, adjoint_b=adj_y)
            return tf.cast(product, tf.int16)
        return tf.linalg.matmul(x, y, adjoint_a=adj_x, adjoint_b=adj_y)
    return tf.linalg.matmul(x, y, adjoint_a=adj_x, adjoint_b=adj_y, output_type=out)


def _matmul(a: Any, b: Any, transpose_a: bool, transpose_b: bool, grad_a: bool, grad_b: bool) -> Any:
    return tf_module().linalg.matmul(*same_dtype(a, b), transpose_a=transpose_a, transpose_b=transpose_b)


def _qr(input: Any, full_matrices: bool) -> Any:  # noqa: A002 - TF's argument name
    q, r = tf_module().linalg.qr(input, full_matrices=full_matrices)
    return Qr(q, r)


def _slogdet(input: Any) -> Any:  # noqa: A002 - TF's argument name
    sign, log_abs = tf_module().linalg.slogdet(input)
    return LogMatrixDeterminant(sign, log_abs)


def _matrix_inverse(input: Any, adjoint: bool) -> Any:  # noqa: A002 - TF's argument name
    tf = tf_module()
    return tf.linalg.inv(tf.linalg.adjoint(input) if adjoint else input)


def _matrix_exponential(input: Any) -> Any:  # noqa: A002 - TF's argument name
    """TF's `MatrixExponential`, an op TF removed (it raises `UnimplementedError`, as here)."""
    raise tf_module().errors.UnimplementedError(
        None,
        None,
        "Op MatrixExponential is not available in GraphDef version 2474. It has been removed in version 27. "
        "Use Python implementation tf.linalg.matrix_exponential instead.",
    )


def _nn_ops(t: dict[str, RawOp]) -> None:
    tf = tf_module
    for op_name, fn in (
        ("Relu", "relu"),
        ("Relu6", "relu6"),
        ("Elu", "elu"),
        ("Selu", "selu"),
        ("Softplus", "softplus"),
        ("Softsign", "softsign"),
        ("Softmax", "softmax"),
        ("LogSoftmax", "log_softmax"),
    ):
        argument = "logits" if "Softmax" in op_name else "features"
        define(t, op_name, argument, lambda fn=fn, **kw: getattr(tf().nn, fn)(next(iter(kw.values()))))
    define(t, "LeakyRelu", "features", lambda features, alpha: tf().nn.leaky_relu(features, alpha), alpha=0.2)
    define(
        t,
        "BiasAdd",
        "value bias",
        lambda value, bias, data_format: tf().nn.bias_add(value, bias, data_format=data_format),
        data_format="NHWC",
    )
    define(
        t,
        "Conv2D",
        "input filter strides padding",
        _conv2d,
        use_cudnn_on_gpu=True,
        explicit_paddings=[],
        data_format="NHWC",
        dilations=_NHWC,
    )
    define(
        t,
        "DepthwiseConv2dNative",
        "input filter strides padding",
        _depthwise,
        explicit_paddings=[],
        data_format="NHWC",
        dilations=_NHWC,
    )
    define(
        t,
        "Conv3D",
        "input filter strides padding",
        lambda input, filter, strides, padding, data_format, dilations: tf().nn.conv3d(
            input, filter, strides, padding, data_format=data_format, dilations=dilations
        ),
        data_format="NDHWC",
        dilations=[1, 1, 1, 1, 1],
    )
    define(t, "MaxPool", "input ksize strides padding", _max_pool, explicit_paddings=[], data_format="NHWC")
    define(
        t,
        "MaxPoolV2",
        "input ksize strides padding",
        lambda input, ksize, strides, padding, data_format: tf().nn.max_pool2d(
            input, ksize, strides, padding, data_format=data_format
        ),
        data_format="NHWC",
    )
    define(
        t,
        "AvgPool",
        "value ksize strides padding",
        lambda value, ksize, strides, padding, data_format: tf().nn.avg_pool2d(
            value, ksize, strides, padding, data_format=data_format
        ),
        data_format="NHWC",
    )
    for op_name, fn in (("MaxPool3D", "max_pool3d"), ("AvgPool3D", "avg_pool3d")):
        define(
            t,
            op_name,
            "input ksize strides padding",
            lambda input, ksize, strides, padding, data_format, fn=fn: getattr(tf().nn, fn)(
                input, ksize, strides, padding, data_format=data_format
            ),
            data_format="NDHWC",
        )
    define(
        t,
        "LRN",
        "input",
        lambda input, depth_radius, bias, alpha, beta: tf().nn.local_response_normalization(
            input, depth_radius, bias, alpha, beta
        ),
        depth_radius=5,
        bias=1,
        alpha=1,
        beta=0.5,
    )
    define(t, "SoftmaxCrossEntropyWithLogits", "features labels", _softmax_xent)
    define(t, "SparseSoftmaxCrossEntropyWithLogits", "features labels", _sparse_softmax_xent)
    define(t, "L2Loss", "t", lambda t: tf().nn.l2_loss(t))
    define(t, "TopKV2", "input k", _top_k, sorted=True, index_type=dtypes.int32)
    define(
        t,
        "InTopKV2",
        "predictions targets k",
        lambda predictions, targets, k: tf().math.in_top_k(targets, predictions, k),
    )


def _linalg_ops(t: dict[str, RawOp]) -> None:
    tf = tf_module
    define(t, "MatMul", "a b", _matmul, transpose_a=False, transpose_b=False, grad_a=False, grad_b=False)
    for op_name in ("BatchMatMul", "BatchMatMulV2"):
        define(t, op_name, "x y", _batch_matmul, adj_x=False, adj_y=False, grad_x=False, grad_y=False)
    define(t, "BatchMatMulV3", "x y Tout", _batch_matmul_v3, adj_x=False, adj_y=False, grad_x=False, grad_y=False)
    define(t, "Einsum", "inputs equation", lambda inputs, equation: tf().einsum(equation, *inputs))
    define(t, "Transpose", "x perm", lambda x, perm: tf().transpose(x, perm))
    define(t, "MatrixInverse", "input", _matrix_inverse, adjoint=False)
    define(t, "Cholesky", "input", lambda input: tf().linalg.cholesky(input))
    define(t, "MatrixDeterminant", "input", lambda input: tf().linalg.det(input))
    define(t, "LogMatrixDeterminant", "input", _slogdet)
    define(
        t,
        "MatrixTriangularSolve",
        "matrix rhs",
        lambda matrix, rhs, lower, adjoint: tf().linalg.triangular_solve(matrix, rhs, lower=lower, adjoint=adjoint),
        lower=True,
        adjoint=False,
    )
    define(
        t,
        "MatrixSolve",
        "matrix rhs",
        lambda matrix, rhs, adjoint: tf().linalg.solve(matrix, rhs, adjoint=adjoint),
        adjoint=False,
    )
    define(t, "Qr", "input", _qr, full_matrices=False)
    define(t, "MatrixExponential", "input", _matrix_exponential)
    define(t, "MatrixDiag", "diagonal", lambda diagonal: tf().linalg.diag(diagonal))
    define(t, "MatrixDiagPart", "input", lambda input: tf().linalg.diag_part(input))
    define(t, "MatrixSetDiag", "input diagonal", lambda input, diagonal: tf().linalg.set_diag(input, diagonal))
    define(
        t,
        "MatrixBandPart",
        "input num_lower num_upper",
        lambda input, num_lower, num_upper: tf().linalg.band_part(input, num_lower, num_upper),
    )
    define(t, "Cross", "a b", lambda a, b: tf().linalg.cross(a, b))


def _random_ops(t: dict[str, RawOp]) -> None:
    tf = tf_module
    define(
        t,
        "RandomUniform",
        "shape dtype",
        lambda shape, dtype, seed, seed2: tf().random.uniform(shape, dtype=dtype),
        seed=0,
        seed2=0,
    )
    define(
        t,
        "RandomStandardNormal",
        "shape dtype",
        lambda shape, dtype, seed, seed2: tf().random.normal(shape, dtype=dtype),
        seed=0,
        seed2=0,
    )
    define(
        t,
        "TruncatedNormal",
        "shape dtype",
        lambda shape, dtype, seed, seed2: tf().random.truncated_normal(shape, dtype=dtype),
        seed=0,
        seed2=0,
    )
    define(
        t,
        "RandomUniformInt",
        "shape minval maxval",
        lambda shape, minval, maxval, seed, seed2: tf().random.uniform(
            shape, minval, maxval, dtype=tf().convert_to_tensor(minval).dtype
        ),
        seed=0,
        seed2=0,
    )


def nn_raw_ops() -> dict[str, RawOp]:
    """The neural-network, linear-algebra and random raw ops, op name -> raw op."""
    table: dict[str, RawOp] = {}
    _nn_ops(table)
    _linalg_ops(table)
    _random_ops(table)
    return table
