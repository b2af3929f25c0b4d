"""`tf.raw_ops` against TF: each raw op's values, dtypes and shapes, gradients, `tf.function`, errors.

A case is `"Op"` or `"Op:variant"` -> a body calling `tf.raw_ops.Op` with keyword arguments. Every raw op of
tapeshim's table has a case (random ops compare their shapes and dtypes only: TF's random streams differ), and
every name in the table is a TF raw op with TF's argument names and defaults.
"""

import inspect

import numpy as np
import pytest

from oracle import check, check_raises, raising, real_tf, run_taped, squared_sum
from tapeshim._src.raw_ops import RAW_OPS

RNG = np.random.default_rng(11)


def _f32(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, size=shape).astype(np.float32)


A, B = _f32(2, 3), _f32(2, 3)
POS = _f32(2, 3, low=0.2, high=3.0)
UNIT = _f32(2, 3, low=-0.9, high=0.9)
BIG = _f32(2, 3, low=1.1, high=3.0)
INTS, J = np.array([[-7, 5, 3], [8, -9, 4]], np.int32), np.array([[2, -3, 2], [3, 4, -5]], np.int32)
M3 = _f32(3, 3)
SPD = (M3 @ M3.T + 3 * np.eye(3)).astype(np.float32)
BATCH = _f32(2, 3, 4)
IMG = _f32(2, 6, 6, 3)
KERNEL = _f32(3, 3, 3, 4)
DEPTH_KERNEL = _f32(3, 3, 3, 2)
VOL = _f32(1, 4, 4, 4, 2)
VOL_KERNEL = _f32(2, 2, 2, 2, 3)
BOOL_A, BOOL_B = A > 0, B > 0
V4, V6, W45, W42 = _f32(4), _f32(6), _f32(4, 5), _f32(4, 2)
UNIT01 = _f32(2, 3, low=0.1, high=0.9)
LABELS = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]], np.float32)


def _unary(op, x=A):
    return lambda tf: getattr(tf.raw_ops, op)(x=x)


def _binary(op, x=A, y=B):
    return lambda tf: getattr(tf.raw_ops, op)(x=x, y=y)


UNARY = {
    "Neg": A, "Abs": A, "Exp": A, "Expm1": A, "Log": POS, "Log1p": POS, "Sqrt": POS, "Rsqrt": POS, "Square": A,
    "Sin": A, "Cos": A, "Tan": UNIT, "Asin": UNIT, "Acos": UNIT, "Atan": A, "Sinh": A, "Cosh": A, "Asinh": A,
    "Acosh": BIG, "Atanh": UNIT, "Tanh": A, "Sigmoid": A, "Sign": A, "Floor": A, "Ceil": A, "Round": A * 2,
    "Rint": A * 2, "Reciprocal": POS, "Inv": POS, "Erf": A, "Erfc": A, "Erfinv": UNIT, "Lgamma": POS,
    "Digamma": POS, "BesselI0e": A, "BesselI1e": A, "IsNan": A, "IsInf": A, "IsFinite": A,
}  # fmt: skip
BINARY = {
    "Add": (A, B), "AddV2": (A, B), "Sub": (A, B), "Mul": (A, B), "Div": (A, POS), "RealDiv": (A, POS),
    "DivNoNan": (A, B), "MulNoNan": (A, B), "FloorDiv": (A, POS), "FloorMod": (A, POS), "Mod": (INTS, J),
    "TruncateDiv": (INTS, J), "TruncateMod": (INTS, J), "Maximum": (A, B), "Minimum": (A, B), "Pow": (POS, B),
    "SquaredDifference": (A, B), "Xdivy": (A, POS), "Xlogy": (A, POS),
    "Less": (A, B), "LessEqual": (A, B), "Greater": (A, B), "GreaterEqual": (A, B),
    "LogicalAnd": (BOOL_A, BOOL_B), "LogicalOr": (BOOL_A, BOOL_B), "BitwiseAnd": (INTS, J), "BitwiseOr": (INTS, J),
    "BitwiseXor": (INTS, J), "LeftShift": (INTS, np.abs(J)), "RightShift": (INTS, np.abs(J)),
}  # fmt: skip

CASES = {op: _unary(op, x) for op, x in UNARY.items()}
CASES.update({op: _binary(op, x, y) for op, (x, y) in BINARY.items()})
CASES.update(
    {
        "Neg:int": _unary("Neg", INTS),
        "Abs:int": _unary("Abs", INTS),
        "Square:f64": _unary("Square", A.astype(np.float64)),
        "LogicalNot": _unary("LogicalNot", BOOL_A),
        "Invert": _unary("Invert", INTS),
        "Add:broadcast": _binary("Add", A, B[0]),
        "Add:python_scalar": lambda tf: tf.raw_ops.Add(x=tf.constant(A), y=2.0),
        "Add:python_ints": lambda tf: tf.raw_ops.Add(x=1, y=2),
        "AddV2:python_floats": lambda tf: tf.raw_ops.AddV2(x=1.5, y=2.0),
        "Log:f16": lambda tf: tf.raw_ops.Log(x=tf.constant(POS, tf.float16)),
        "Square:complex": _unary("Square", (A + 1j * B).astype(np.complex64)),
        "Relu:int": lambda tf: tf.raw_ops.Relu(features=INTS),
        "Cumsum:int": lambda tf: tf.raw_ops.Cumsum(x=INTS, axis=0),
        "Max:empty": lambda tf: tf.raw_ops.Max(input=np.zeros((0,), np.float32), axis=0),
        "Cast:string_dtype": lambda tf: tf.raw_ops.Cast(x=A, DstT="float16"),
        "MatMul:mixed_numpy": lambda tf: tf.raw_ops.MatMul(a=A, b=tf.constant(B.T, tf.float64)),
        "Reshape:list": lambda tf: tf.raw_ops.Reshape(tensor=[1, 2, 3, 4], shape=[2, 2]),
        "Fill:int": lambda tf: tf.raw_ops.Fill(dims=[2], value=3),
        "Range:int64": lambda tf: tf.raw_ops.Range(start=tf.constant(1, tf.int64), limit=5, delta=1),
        "OneHot:int": lambda tf: tf.raw_ops.OneHot(indices=[0, 1], depth=2, on_value=1, off_value=0),
        "Div:int": _binary("Div", INTS, J),
        "FloorDiv:int": _binary("FloorDiv", INTS, J),
        "FloorMod:int": _binary("FloorMod", INTS, J),
        "Maximum:int": _binary("Maximum", INTS, J),
        "Atan2": lambda tf: tf.raw_ops.Atan2(y=A, x=B),
        "Betainc": lambda tf: tf.raw_ops.Betainc(a=POS, b=POS[::-1], x=UNIT01),
        "Igamma": lambda tf: tf.raw_ops.Igamma(a=POS, x=POS[::-1]),
        "Igammac": lambda tf: tf.raw_ops.Igammac(a=POS, x=POS[::-1]),
        "Polygamma": lambda tf: tf.raw_ops.Polygamma(a=np.ones((2, 3), np.float32), x=POS),
        "Zeta": lambda tf: tf.raw_ops.Zeta(x=BIG, q=POS),
        "Equal": _binary("Equal", INTS, J * 0 + INTS[0]),
        "NotEqual": _binary("NotEqual", A, A),
        "Equal:incompatible": lambda tf: tf.raw_ops.Equal(x=A, y=A[:, :2], incompatible_shape_error=False),
        "NotEqual:incompatible": lambda tf: tf.raw_ops.NotEqual(x=A, y=A[:, :2], incompatible_shape_error=False),
        "Select": lambda tf: tf.raw_ops.Select(condition=BOOL_A, x=A, y=B),
        "Select:rows": lambda tf: tf.raw_ops.Select(condition=np.array([True, False]), x=A, y=B),
        "SelectV2": lambda tf: tf.raw_ops.SelectV2(condition=BOOL_A[0], t=A, e=B),
        "Cast": lambda tf: tf.raw_ops.Cast(x=A * 3, DstT=tf.int32),
        "Cast:bool": lambda tf: tf.raw_ops.Cast(x=INTS, DstT=tf.bool),
        "Cast:f16": lambda tf: tf.raw_ops.Cast(x=A, DstT=tf.float16, Truncate=True),
        "AddN": lambda tf: tf.raw_ops.AddN(inputs=[A, B, POS]),
        "ClipByValue": lambda tf: tf.raw_ops.ClipByValue(t=A, clip_value_min=-0.5, clip_value_max=0.5),
        "Complex": lambda tf: tf.raw_ops.Complex(real=A, imag=B),
        "Complex:128": lambda tf: tf.raw_ops.Complex(
            real=tf.constant(A, tf.float64), imag=tf.constant(B, tf.float64), Tout=tf.complex128
        ),
        "Real": lambda tf: tf.raw_ops.Real(input=A + 1j * B),
        "Imag": lambda tf: tf.raw_ops.Imag(input=(A + 1j * B).astype(np.complex64)),
        "Angle": lambda tf: tf.raw_ops.Angle(input=(A + 1j * B).astype(np.complex64)),
        "ComplexAbs": lambda tf: tf.raw_ops.ComplexAbs(x=(A + 1j * B).astype(np.complex64)),
        "Conj": lambda tf: tf.raw_ops.Conj(input=(A + 1j * B).astype(np.complex64)),
        # reductions
        "Sum": lambda tf: tf.raw_ops.Sum(input=A, axis=1),
        "Sum:keep_dims": lambda tf: tf.raw_ops.Sum(input=A, axis=[0, 1], keep_dims=True),
        "Sum:no_axes": lambda tf: tf.raw_ops.Sum(input=A, axis=[]),
        "Sum:int": lambda tf: tf.raw_ops.Sum(input=INTS, axis=0),
        "Mean": lambda tf: tf.raw_ops.Mean(input=A, axis=-1),
        "Mean:int": lambda tf: tf.raw_ops.Mean(input=INTS, axis=1),
        "Max": lambda tf: tf.raw_ops.Max(input=A, axis=0, keep_dims=True),
        "Min": lambda tf: tf.raw_ops.Min(input=INTS, axis=[0, 1]),
        "Prod": lambda tf: tf.raw_ops.Prod(input=A, axis=1),
        "All": lambda tf: tf.raw_ops.All(input=BOOL_A, axis=1),
        "Any": lambda tf: tf.raw_ops.Any(input=BOOL_A, axis=0, keep_dims=True),
        "EuclideanNorm": lambda tf: tf.raw_ops.EuclideanNorm(input=A, axis=1),
        "ArgMax": lambda tf: tf.raw_ops.ArgMax(input=A, dimension=1),
        "ArgMax:int32": lambda tf: tf.raw_ops.ArgMax(input=A, dimension=0, output_type=tf.int32),
        "ArgMin": lambda tf: tf.raw_ops.ArgMin(input=INTS, dimension=1),
        "Cumsum": lambda tf: tf.raw_ops.Cumsum(x=A, axis=1),
        "Cumsum:exclusive_reverse": lambda tf: tf.raw_ops.Cumsum(x=A, axis=1, exclusive=True, reverse=True),
        "Cumprod": lambda tf: tf.raw_ops.Cumprod(x=A, axis=0, exclusive=True),
        "CumulativeLogsumexp": lambda tf: tf.raw_ops.CumulativeLogsumexp(x=A, axis=1, reverse=True),
        "SegmentSum": lambda tf: tf.raw_ops.SegmentSum(data=BATCH, segment_ids=[0, 0]),
        "SegmentMean": lambda tf: tf.raw_ops.SegmentMean(data=M3, segment_ids=[0, 0, 1]),
        "SegmentMax": lambda tf: tf.raw_ops.SegmentMax(data=M3, segment_ids=[0, 1, 1]),
        "SegmentMin": lambda tf: tf.raw_ops.SegmentMin(data=M3, segment_ids=[0, 1, 1]),
        "SegmentProd": lambda tf: tf.raw_ops.SegmentProd(data=M3, segment_ids=[0, 0, 1]),
        "UnsortedSegmentSum": lambda tf: tf.raw_ops.UnsortedSegmentSum(data=M3, segment_ids=[2, 0, 2], num_segments=3),
        "UnsortedSegmentMax": lambda tf: tf.raw_ops.UnsortedSegmentMax(data=M3, segment_ids=[1, 0, 1], num_segments=2),
        "UnsortedSegmentMin": lambda tf: tf.raw_ops.UnsortedSegmentMin(data=M3, segment_ids=[1, 0, 1], num_segments=2),
        "UnsortedSegmentProd": lambda tf: tf.raw_ops.UnsortedSegmentProd(
            data=M3, segment_ids=[1, 0, 1], num_segments=2
        ),
        "Bincount": lambda tf: tf.raw_ops.Bincount(arr=[1, 1, 3, 0], size=5, weights=tf.constant([], tf.int32)),
        "Bincount:weights": lambda tf: tf.raw_ops.Bincount(arr=[1, 1, 3], size=4, weights=[0.5, 1.0, 2.0]),
        # arrays
        "Reshape": lambda tf: tf.raw_ops.Reshape(tensor=A, shape=[3, -1]),
        "ExpandDims": lambda tf: tf.raw_ops.ExpandDims(input=A, axis=-1),
        "Squeeze": lambda tf: tf.raw_ops.Squeeze(input=A.reshape(1, 2, 1, 3)),
        "Squeeze:axis": lambda tf: tf.raw_ops.Squeeze(input=A.reshape(1, 2, 1, 3), axis=[2]),
        "ConcatV2": lambda tf: tf.raw_ops.ConcatV2(values=[A, B], axis=1),
        "Concat": lambda tf: tf.raw_ops.Concat(concat_dim=0, values=[A, B, POS]),
        "Pack": lambda tf: tf.raw_ops.Pack(values=[A, B]),
        "Pack:axis": lambda tf: tf.raw_ops.Pack(values=[A, B], axis=-1),
        "Unpack": lambda tf: tf.raw_ops.Unpack(value=A, num=3, axis=1),
        "Tile": lambda tf: tf.raw_ops.Tile(input=A, multiples=[2, 1]),
        "Fill": lambda tf: tf.raw_ops.Fill(dims=[2, 3], value=1.5),
        "ZerosLike": lambda tf: tf.raw_ops.ZerosLike(x=INTS),
        "OnesLike": lambda tf: tf.raw_ops.OnesLike(x=A),
        "Shape": lambda tf: tf.raw_ops.Shape(input=BATCH),
        "Shape:int64": lambda tf: tf.raw_ops.Shape(input=BATCH, out_type=tf.int64),
        "ShapeN": lambda tf: tf.raw_ops.ShapeN(input=[A, BATCH]),
        "Size": lambda tf: tf.raw_ops.Size(input=BATCH),
        "Rank": lambda tf: tf.raw_ops.Rank(input=BATCH),
        "Slice": lambda tf: tf.raw_ops.Slice(input=BATCH, begin=[0, 1, 1], size=[-1, 2, 2]),
        "StridedSlice": lambda tf: tf.raw_ops.StridedSlice(
            input=BATCH, begin=[0, 0, 1], end=[2, 3, 4], strides=[1, 2, 2]
        ),
        "StridedSlice:masks": lambda tf: tf.raw_ops.StridedSlice(
            input=BATCH,
            begin=[1, 0, 3],
            end=[0, 0, 0],
            strides=[1, 1, -1],
            begin_mask=2,
            end_mask=3,
            shrink_axis_mask=1,
        ),
        "StridedSlice:ellipsis_new_axis": lambda tf: tf.raw_ops.StridedSlice(
            input=BATCH, begin=[0, 0, 1], end=[0, 0, 3], strides=[1, 1, 1], ellipsis_mask=1, new_axis_mask=2
        ),
        "GatherV2": lambda tf: tf.raw_ops.GatherV2(params=M3, indices=[2, 0, 2], axis=0),
        "GatherV2:axis": lambda tf: tf.raw_ops.GatherV2(params=BATCH, indices=[[1, 3]], axis=2),
        "GatherV2:batch_dims": lambda tf: tf.raw_ops.GatherV2(
            params=BATCH, indices=[[0, 1], [2, 2]], axis=1, batch_dims=1
        ),
        "GatherNd": lambda tf: tf.raw_ops.GatherNd(params=BATCH, indices=[[0, 1], [1, 2]]),
        "ScatterNd": lambda tf: tf.raw_ops.ScatterNd(indices=[[1], [3]], updates=A[:, :2].T.copy(), shape=[5, 2]),
        "TensorScatterUpdate": lambda tf: tf.raw_ops.TensorScatterUpdate(tensor=M3, indices=[[0], [2]], updates=A),
        "TensorScatterAdd": lambda tf: tf.raw_ops.TensorScatterAdd(
            tensor=M3, indices=[[0, 1], [2, 2]], updates=[1.0, 2.0]
        ),
        "TensorScatterSub": lambda tf: tf.raw_ops.TensorScatterSub(tensor=M3, indices=[[1]], updates=A[:1]),
        "TensorScatterMax": lambda tf: tf.raw_ops.TensorScatterMax(tensor=M3, indices=[[1]], updates=A[:1]),
        "TensorScatterMin": lambda tf: tf.raw_ops.TensorScatterMin(tensor=M3, indices=[[1]], updates=A[:1]),
        "OneHot": lambda tf: tf.raw_ops.OneHot(indices=[0, 2, -1], depth=3, on_value=1.0, off_value=0.0),
        "OneHot:axis": lambda tf: tf.raw_ops.OneHot(indices=[[0, 2]], depth=4, on_value=5, off_value=-1, axis=0),
        "Range": lambda tf: tf.raw_ops.Range(start=1, limit=10, delta=3),
        "Range:float": lambda tf: tf.raw_ops.Range(start=tf.constant(0.5), limit=2.0, delta=0.25),
        "LinSpace": lambda tf: tf.raw_ops.LinSpace(start=0.0, stop=1.0, num=5),
        "Pad": lambda tf: tf.raw_ops.Pad(input=A, paddings=[[1, 0], [0, 2]]),
        "PadV2": lambda tf: tf.raw_ops.PadV2(input=A, paddings=[[1, 1], [2, 0]], constant_values=9.0),
        "MirrorPad": lambda tf: tf.raw_ops.MirrorPad(input=M3, paddings=[[1, 1], [2, 0]], mode="REFLECT"),
        "MirrorPad:symmetric": lambda tf: tf.raw_ops.MirrorPad(input=M3, paddings=[[1, 2], [0, 3]], mode="SYMMETRIC"),
        "ReverseV2": lambda tf: tf.raw_ops.ReverseV2(tensor=BATCH, axis=[0, 2]),
        "ReverseSequence": lambda tf: tf.raw_ops.ReverseSequence(input=BATCH, seq_lengths=[2, 4], seq_dim=2),
        "Where": lambda tf: tf.raw_ops.Where(condition=BOOL_A),
        "Identity": lambda tf: tf.raw_ops.Identity(input=A),
        "IdentityN": lambda tf: tf.raw_ops.IdentityN(input=[A, INTS]),
        "Snapshot": lambda tf: tf.raw_ops.Snapshot(input=INTS),
        "StopGradient": lambda tf: tf.raw_ops.StopGradient(input=A),
        "BroadcastTo": lambda tf: tf.raw_ops.BroadcastTo(input=A[0], shape=[4, 3]),
        "BroadcastArgs": lambda tf: tf.raw_ops.BroadcastArgs(s0=[2, 1, 3], s1=[4, 1]),
        "Split": lambda tf: tf.raw_ops.Split(axis=1, value=BATCH, num_split=3),
        "SplitV": lambda tf: tf.raw_ops.SplitV(value=BATCH, size_splits=[1, -1], axis=2, num_split=2),
        "Unique": lambda tf: tf.raw_ops.Unique(x=[3, 1, 3, 2, 1]),
        "Unique:int64": lambda tf: tf.raw_ops.Unique(x=[3.0, 1.0, 3.0], out_idx=tf.int64),
        "LowerBound": lambda tf: tf.raw_ops.LowerBound(sorted_inputs=[[1, 3, 3, 7]], values=[[3, 8]]),
        "UpperBound": lambda tf: tf.raw_ops.UpperBound(
            sorted_inputs=[[1, 3, 3, 7]], values=[[3, 0]], out_type=tf.int64
        ),
        "CheckNumerics": lambda tf: tf.raw_ops.CheckNumerics(tensor=A, message="bad"),
        "CheckNumerics:nan": raising(lambda tf: tf.raw_ops.CheckNumerics(tensor=[1.0, np.nan], message="bad")),
        "SpaceToDepth": lambda tf: tf.raw_ops.SpaceToDepth(input=IMG, block_size=2),
        "DepthToSpace": lambda tf: tf.raw_ops.DepthToSpace(input=IMG[..., :4].repeat(2, -1)[..., :4], block_size=2),
        # nn
        "Relu": lambda tf: tf.raw_ops.Relu(features=A),
        "Relu6": lambda tf: tf.raw_ops.Relu6(features=A * 4),
        "Elu": lambda tf: tf.raw_ops.Elu(features=A),
        "Selu": lambda tf: tf.raw_ops.Selu(features=A),
        "Softplus": lambda tf: tf.raw_ops.Softplus(features=A),
        "Softsign": lambda tf: tf.raw_ops.Softsign(features=A),
        "LeakyRelu": lambda tf: tf.raw_ops.LeakyRelu(features=A),
        "LeakyRelu:alpha": lambda tf: tf.raw_ops.LeakyRelu(features=A, alpha=0.5),
        "Softmax": lambda tf: tf.raw_ops.Softmax(logits=BATCH),
        "LogSoftmax": lambda tf: tf.raw_ops.LogSoftmax(logits=A),
        "BiasAdd": lambda tf: tf.raw_ops.BiasAdd(value=BATCH, bias=V4),
        "BiasAdd:NCHW": lambda tf: tf.raw_ops.BiasAdd(value=IMG, bias=V6, data_format="NCHW"),
        "Conv2D": lambda tf: tf.raw_ops.Conv2D(input=IMG, filter=KERNEL, strides=[1, 1, 1, 1], padding="SAME"),
        "Conv2D:valid_strided": lambda tf: tf.raw_ops.Conv2D(
            input=IMG, filter=KERNEL, strides=[1, 2, 2, 1], padding="VALID"
        ),
        "Conv2D:dilated": lambda tf: tf.raw_ops.Conv2D(
            input=IMG, filter=KERNEL, strides=[1, 1, 1, 1], padding="VALID", dilations=[1, 2, 2, 1]
        ),
        "Conv2D:explicit": lambda tf: tf.raw_ops.Conv2D(
            input=IMG,
            filter=KERNEL,
            strides=[1, 1, 1, 1],
            padding="EXPLICIT",
            explicit_paddings=[0, 0, 1, 2, 0, 1, 0, 0],
        ),
        "DepthwiseConv2dNative": lambda tf: tf.raw_ops.DepthwiseConv2dNative(
            input=IMG, filter=DEPTH_KERNEL, strides=[1, 1, 1, 1], padding="SAME"
        ),
        "DepthwiseConv2dNative:strided": lambda tf: tf.raw_ops.DepthwiseConv2dNative(
            input=IMG, filter=DEPTH_KERNEL, strides=[1, 2, 2, 1], padding="VALID"
        ),
        "Conv3D": lambda tf: tf.raw_ops.Conv3D(input=VOL, filter=VOL_KERNEL, strides=[1, 1, 1, 1, 1], padding="SAME"),
        "MaxPool": lambda tf: tf.raw_ops.MaxPool(input=IMG, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
        "MaxPool:same": lambda tf: tf.raw_ops.MaxPool(
            input=IMG, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME"
        ),
        "MaxPoolV2": lambda tf: tf.raw_ops.MaxPoolV2(
            input=IMG, ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding="SAME"
        ),
        "AvgPool": lambda tf: tf.raw_ops.AvgPool(value=IMG, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME"),
        "MaxPool3D": lambda tf: tf.raw_ops.MaxPool3D(
            input=VOL, ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID"
        ),
        "AvgPool3D": lambda tf: tf.raw_ops.AvgPool3D(
            input=VOL, ksize=[1, 2, 2, 2, 1], strides=[1, 1, 1, 1, 1], padding="SAME"
        ),
        "LRN": lambda tf: tf.raw_ops.LRN(input=IMG, depth_radius=1, bias=2.0, alpha=0.5, beta=0.75),
        "SoftmaxCrossEntropyWithLogits": lambda tf: tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=A, labels=LABELS),
        "SparseSoftmaxCrossEntropyWithLogits": lambda tf: tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(
            features=A, labels=[2, 0]
        ),
        "L2Loss": lambda tf: tf.raw_ops.L2Loss(t=A),
        "TopKV2": lambda tf: tf.raw_ops.TopKV2(input=BATCH, k=2),
        "TopKV2:int64": lambda tf: tf.raw_ops.TopKV2(input=A, k=3, index_type=tf.int64),
        "InTopKV2": lambda tf: tf.raw_ops.InTopKV2(predictions=A, targets=[1, 2], k=2),
        # linalg
        "MatMul": lambda tf: tf.raw_ops.MatMul(a=A, b=B, transpose_b=True),
        "MatMul:transpose_a": lambda tf: tf.raw_ops.MatMul(a=A, b=B, transpose_a=True),
        "MatMul:int": lambda tf: tf.raw_ops.MatMul(a=INTS, b=J.T.copy()),
        "BatchMatMul": lambda tf: tf.raw_ops.BatchMatMul(x=BATCH, y=BATCH, adj_y=True),
        "BatchMatMulV2": lambda tf: tf.raw_ops.BatchMatMulV2(x=BATCH, y=W45),
        "BatchMatMulV2:adj_x": lambda tf: tf.raw_ops.BatchMatMulV2(x=BATCH, y=BATCH, adj_x=True),
        "BatchMatMulV3": lambda tf: tf.raw_ops.BatchMatMulV3(x=BATCH, y=W42, Tout=tf.float32),
        "Einsum": lambda tf: tf.raw_ops.Einsum(inputs=[BATCH, W45], equation="bij,jk->bik"),
        "Einsum:unary": lambda tf: tf.raw_ops.Einsum(inputs=[BATCH], equation="bij->jb"),
        "Transpose": lambda tf: tf.raw_ops.Transpose(x=BATCH, perm=[2, 0, 1]),
        "MatrixInverse": lambda tf: tf.raw_ops.MatrixInverse(input=SPD),
        "MatrixInverse:adjoint": lambda tf: tf.raw_ops.MatrixInverse(input=SPD + M3, adjoint=True),
        "Cholesky": lambda tf: tf.raw_ops.Cholesky(input=SPD),
        "MatrixDeterminant": lambda tf: tf.raw_ops.MatrixDeterminant(input=M3),
        "LogMatrixDeterminant": lambda tf: tf.raw_ops.LogMatrixDeterminant(input=M3),
        "MatrixTriangularSolve": lambda tf: tf.raw_ops.MatrixTriangularSolve(matrix=SPD, rhs=A.T.copy()),
        "MatrixTriangularSolve:upper_adjoint": lambda tf: tf.raw_ops.MatrixTriangularSolve(
            matrix=SPD, rhs=A.T.copy(), lower=False, adjoint=True
        ),
        "MatrixSolve": lambda tf: tf.raw_ops.MatrixSolve(matrix=SPD + M3, rhs=A.T.copy()),
        "MatrixSolve:adjoint": lambda tf: tf.raw_ops.MatrixSolve(matrix=SPD + M3, rhs=A.T.copy(), adjoint=True),
        "Qr": lambda tf: tf.raw_ops.Qr(input=SPD.astype(np.float64)),
        "MatrixExponential": raising(lambda tf: tf.raw_ops.MatrixExponential(input=M3 / 3)),
        "MatrixDiag": lambda tf: tf.raw_ops.MatrixDiag(diagonal=A),
        "MatrixDiagPart": lambda tf: tf.raw_ops.MatrixDiagPart(input=BATCH),
        "MatrixSetDiag": lambda tf: tf.raw_ops.MatrixSetDiag(input=BATCH, diagonal=A),
        "MatrixBandPart": lambda tf: tf.raw_ops.MatrixBandPart(input=BATCH, num_lower=1, num_upper=0),
        "Cross": lambda tf: tf.raw_ops.Cross(a=A, b=B),
        # (more cases of these, and their errors, in test_linalg_fidelity.py)
        "Svd": lambda tf: tf.raw_ops.Svd(input=M3, compute_uv=False).s,
        "SelfAdjointEigV2": lambda tf: tf.raw_ops.SelfAdjointEigV2(input=SPD).e,
        "MatrixSolveLs": lambda tf: tf.raw_ops.MatrixSolveLs(matrix=SPD, rhs=A.T.copy(), l2_regularizer=0.5),
        "Lu": lambda tf: tf.raw_ops.Lu(input=SPD + M3),
        "MatrixSquareRoot": lambda tf: tf.raw_ops.MatrixSquareRoot(input=SPD),
        "Diag": lambda tf: tf.raw_ops.Diag(diagonal=A),
        "SpaceToBatchND": lambda tf: tf.raw_ops.SpaceToBatchND(
            input=IMG, block_shape=[2, 3], paddings=[[0, 0], [0, 0]]
        ),
    }
)


def _shape_and_dtype(op, **kwargs):
    def body(tf):
        out = getattr(tf.raw_ops, op)(**kwargs)
        return out.shape, out.dtype

    return body


RANDOM = {
    "RandomUniform": lambda tf: _shape_and_dtype("RandomUniform", shape=[2, 3], dtype=tf.float32)(tf),
    "RandomStandardNormal": lambda tf: _shape_and_dtype("RandomStandardNormal", shape=[4], dtype=tf.float64)(tf),
    "TruncatedNormal": lambda tf: _shape_and_dtype("TruncatedNormal", shape=[3, 1], dtype=tf.float32, seed=3)(tf),
    "RandomUniformInt": _shape_and_dtype("RandomUniformInt", shape=[5], minval=2, maxval=9),
}
CASES.update(RANDOM)


@pytest.mark.parametrize("case", sorted(CASES))
def test_values(case):
    check(CASES[case])


def test_every_raw_op_has_a_case():
    covered = {case.split(":")[0] for case in CASES}
    assert sorted(set(RAW_OPS) - covered) == []


@pytest.mark.parametrize("op_name", sorted(RAW_OPS))
def test_signature_is_tfs(op_name):
    """Each raw op is a TF raw op with TF's argument names, order and defaults (dtype defaults by name)."""

    def parameters(fn):
        return [
            (p.name, None if p.default is inspect.Parameter.empty else repr(p.default))
            for p in inspect.signature(fn).parameters.values()
        ]

    assert parameters(RAW_OPS[op_name]) == parameters(getattr(real_tf.raw_ops, op_name))


def test_namespace_holds_the_table():
    import tapeshim

    assert sorted(tapeshim.raw_ops.__all__) == sorted(RAW_OPS)
    assert len(RAW_OPS) >= 150
    for op_name in RAW_OPS:
        assert getattr(tapeshim.raw_ops, op_name).__name__ == op_name


# -- gradients ------------------------------------------------------------------------------------------
GRADIENT_EXCLUDED = {
    # not differentiable in TF (no gradient, or a zero/None one tested below) or integer/boolean results
    "IsNan", "IsInf", "IsFinite", "Less", "LessEqual", "Greater", "GreaterEqual", "Sign", "Floor", "Ceil", "Round",
    "Rint", "FloorDiv", "FloorMod", "Equal", "NotEqual",
}  # fmt: skip


def _taped(op, **kwargs):
    """A body: `op(**kwargs)` with its float32 numpy inputs watched, and the gradient of `squared_sum` (summed over
    every output) with respect to each."""
    names = [k for k, v in kwargs.items() if isinstance(v, np.ndarray) and v.dtype == np.float32]

    def body(tf):
        def fn(tf, *xs):
            return getattr(tf.raw_ops, op)(**{**kwargs, **dict(zip(names, xs))})

        def loss(tf, out):
            return tf.add_n([squared_sum(tf, o) for o in tf.nest.flatten(out) if o.dtype.is_floating])

        return run_taped(tf, fn, [kwargs[n] for n in names], loss=loss)

    return body


GRADIENT_CASES = {f"{op}": _taped(op, x=x) for op, x in UNARY.items() if op not in GRADIENT_EXCLUDED}
GRADIENT_CASES.update(
    {op: _taped(op, x=x, y=y) for op, (x, y) in BINARY.items() if x.dtype == np.float32 and op not in GRADIENT_EXCLUDED}
)
GRADIENT_CASES.update(
    {
        "Atan2": _taped("Atan2", y=A, x=B),
        "Select": _taped("Select", condition=BOOL_A, x=A, y=B),
        "SelectV2": _taped("SelectV2", condition=BOOL_A[0], t=A, e=B),
        "Cast": _taped("Cast", x=A, DstT="float64"),
        "AddN": _taped("AddN", inputs=[A, B]),
        "ClipByValue": _taped("ClipByValue", t=A, clip_value_min=np.float32(-0.5), clip_value_max=np.float32(0.5)),
        "Sum": _taped("Sum", input=A, axis=1),
        "Mean": _taped("Mean", input=A, axis=[0, 1], keep_dims=True),
        "Max": _taped("Max", input=A, axis=0),
        "Min": _taped("Min", input=A, axis=1, keep_dims=True),
        "Prod": _taped("Prod", input=A, axis=1),
        "EuclideanNorm": _taped("EuclideanNorm", input=A, axis=1),
        "Cumsum": _taped("Cumsum", x=A, axis=1, exclusive=True),
        "Cumprod": _taped("Cumprod", x=A, axis=1, reverse=True),
        "SegmentSum": _taped("SegmentSum", data=M3, segment_ids=[0, 0, 1]),
        "UnsortedSegmentSum": _taped("UnsortedSegmentSum", data=M3, segment_ids=[1, 0, 1], num_segments=2),
        "Reshape": _taped("Reshape", tensor=A, shape=[-1]),
        "Transpose": _taped("Transpose", x=BATCH, perm=[1, 2, 0]),
        "ConcatV2": _taped("ConcatV2", values=[A, B], axis=0),
        "Pack": _taped("Pack", values=[A, B], axis=1),
        "Unpack": _taped("Unpack", value=A, num=2),
        "Tile": _taped("Tile", input=A, multiples=[1, 2]),
        "Slice": _taped("Slice", input=BATCH, begin=[0, 1, 0], size=[1, -1, 3]),
        "StridedSlice": _taped(
            "StridedSlice", input=BATCH, begin=[1, 0, 3], end=[0, 0, 0], strides=[1, 1, -1], begin_mask=2, end_mask=3
        ),
        "GatherV2": _taped("GatherV2", params=M3, indices=[2, 0, 2], axis=0),
        "GatherNd": _taped("GatherNd", params=BATCH, indices=[[0, 1], [0, 1]]),
        "ScatterNd": _taped("ScatterNd", indices=[[1], [3]], updates=A[:, :2].T.copy(), shape=[5, 2]),
        "TensorScatterUpdate": _taped("TensorScatterUpdate", tensor=M3, indices=[[0], [2]], updates=A),
        "TensorScatterAdd": _taped("TensorScatterAdd", tensor=M3, indices=[[0], [2]], updates=A),
        "Pad": _taped("Pad", input=A, paddings=[[1, 0], [0, 2]]),
        "MirrorPad": _taped("MirrorPad", input=M3, paddings=[[1, 1], [2, 0]], mode="REFLECT"),
        "ReverseV2": _taped("ReverseV2", tensor=BATCH, axis=[1]),
        "BroadcastTo": _taped("BroadcastTo", input=A[0], shape=[4, 3]),
        "Split": _taped("Split", axis=2, value=BATCH, num_split=2),
        "SplitV": _taped("SplitV", value=BATCH, size_splits=[1, -1], axis=2, num_split=2),
        "StopGradient": _taped("StopGradient", input=A),
        "Relu": _taped("Relu", features=A),
        "Relu6": _taped("Relu6", features=A * 4),
        "Elu": _taped("Elu", features=A),
        "Selu": _taped("Selu", features=A),
        "Softplus": _taped("Softplus", features=A),
        "Softsign": _taped("Softsign", features=A),
        "LeakyRelu": _taped("LeakyRelu", features=A, alpha=0.3),
        "Softmax": _taped("Softmax", logits=A),
        "LogSoftmax": _taped("LogSoftmax", logits=A),
        "BiasAdd": _taped("BiasAdd", value=BATCH, bias=V4),
        "Conv2D": _taped("Conv2D", input=IMG, filter=KERNEL, strides=[1, 2, 2, 1], padding="SAME"),
        "DepthwiseConv2dNative": _taped(
            "DepthwiseConv2dNative", input=IMG, filter=DEPTH_KERNEL, strides=[1, 1, 1, 1], padding="VALID"
        ),
        "MaxPool": _taped("MaxPool", input=IMG, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
        "AvgPool": _taped("AvgPool", value=IMG, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME"),
        "SoftmaxCrossEntropyWithLogits": lambda tf: run_taped(
            tf,
            lambda tf, f, lab: tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=f, labels=lab).loss,
            [A, LABELS],
            loss=squared_sum,
        ),
        "SparseSoftmaxCrossEntropyWithLogits": lambda tf: run_taped(
            tf,
            lambda tf, f: tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=f, labels=[2, 0])[0],
            [A],
            loss=squared_sum,
        ),
        "L2Loss": _taped("L2Loss", t=A),
        "TopKV2": _taped("TopKV2", input=BATCH, k=2),
        "MatMul": _taped("MatMul", a=A, b=B, transpose_b=True),
        "BatchMatMulV2": _taped("BatchMatMulV2", x=BATCH, y=W45),
        "Einsum": _taped("Einsum", inputs=[BATCH, W45], equation="bij,jk->bik"),
        "MatrixInverse": _taped("MatrixInverse", input=SPD),
        "Cholesky": lambda tf: run_taped(
            tf, lambda tf, a: tf.raw_ops.Cholesky(input=(a + tf.transpose(a)) / 2), [SPD], loss=squared_sum
        ),
        "MatrixDeterminant": _taped("MatrixDeterminant", input=M3),
        "MatrixSolve": _taped("MatrixSolve", matrix=SPD + M3, rhs=A.T.copy()),
        "MatrixTriangularSolve": _taped("MatrixTriangularSolve", matrix=SPD, rhs=A.T.copy()),
        "MatrixBandPart": _taped("MatrixBandPart", input=BATCH, num_lower=1, num_upper=0),
        "Cross": _taped("Cross", a=A, b=B),
        "Identity": _taped("Identity", input=A),
        "IdentityN": _taped("IdentityN", input=[A, B]),
        "Concat": _taped("Concat", concat_dim=1, values=[A, B]),
        "GatherV2:batch_dims": _taped("GatherV2", params=BATCH, indices=[[0, 1], [2, 2]], axis=1, batch_dims=1),
        "TensorScatterSub": _taped("TensorScatterSub", tensor=M3, indices=[[1]], updates=A[:1]),
        "PadV2": _taped("PadV2", input=A, paddings=[[1, 1], [2, 0]], constant_values=np.float32(9.0)),
        "ReverseSequence": _taped("ReverseSequence", input=BATCH, seq_lengths=[2, 4], seq_dim=2),
        "SpaceToDepth": _taped("SpaceToDepth", input=IMG, block_size=2),
        "DepthToSpace": _taped("DepthToSpace", input=IMG[..., :2].repeat(2, -1), block_size=2),
        "SegmentMean": _taped("SegmentMean", data=M3, segment_ids=[0, 0, 1]),
        "SegmentMax": _taped("SegmentMax", data=M3, segment_ids=[0, 1, 1]),
        "UnsortedSegmentMax": _taped("UnsortedSegmentMax", data=M3, segment_ids=[1, 0, 1], num_segments=2),
        "CumulativeLogsumexp": _taped("CumulativeLogsumexp", x=A, axis=1),
        "Conv3D": _taped("Conv3D", input=VOL, filter=VOL_KERNEL, strides=[1, 1, 2, 1, 1], padding="SAME"),
        "MaxPool3D": _taped("MaxPool3D", input=VOL, ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID"),
        "AvgPool3D": _taped("AvgPool3D", input=VOL, ksize=[1, 2, 2, 2, 1], strides=[1, 1, 1, 1, 1], padding="SAME"),
        "MaxPoolV2": _taped("MaxPoolV2", input=IMG, ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding="SAME"),
        "LRN": _taped("LRN", input=IMG, depth_radius=1, bias=2.0, alpha=0.5, beta=0.75),
        "DepthwiseConv2dNative:strided": _taped(
            "DepthwiseConv2dNative", input=IMG, filter=DEPTH_KERNEL, strides=[1, 2, 2, 1], padding="SAME"
        ),
        "BatchMatMul:adj": _taped("BatchMatMul", x=BATCH, y=BATCH, adj_y=True),
        "BatchMatMulV3": _taped("BatchMatMulV3", x=BATCH, y=W42, Tout="float32"),
        "MatrixInverse:adjoint": _taped("MatrixInverse", input=SPD + M3, adjoint=True),
        "MatrixSolve:adjoint": _taped("MatrixSolve", matrix=SPD + M3, rhs=A.T.copy(), adjoint=True),
        "LogMatrixDeterminant": _taped("LogMatrixDeterminant", input=M3),
        "Qr": _taped("Qr", input=SPD + M3),
        "MatrixDiag": _taped("MatrixDiag", diagonal=A),
        "MatrixDiagPart": _taped("MatrixDiagPart", input=BATCH),
        "MatrixSetDiag": _taped("MatrixSetDiag", input=BATCH, diagonal=A),
        "ExpandDims": _taped("ExpandDims", input=A, axis=0),
        "Squeeze": _taped("Squeeze", input=A.reshape(1, 2, 1, 3)),
    }
)


@pytest.mark.parametrize("case", sorted(GRADIENT_CASES))
def test_gradients(case):
    check(GRADIENT_CASES[case])


def test_non_differentiable_ops_give_no_gradient():
    def body(tf):
        x = tf.constant(A)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            outs = [
                tf.raw_ops.Less(x=x, y=B),
                tf.raw_ops.Shape(input=x),
                tf.cast(tf.raw_ops.ArgMax(input=x, dimension=1), tf.float32),
                tf.raw_ops.Floor(x=x),
                tf.raw_ops.Round(x=x),
                tf.raw_ops.ZerosLike(x=x),
            ]
        return [tape.gradient(o, x) for o in outs]

    check(body)


# -- inside tf.function ----------------------------------------------------------------------------------
def _in_function(fn, *arrays):
    def body(tf):
        return tf.function(lambda *xs: fn(tf, *xs))(*[tf.constant(a) for a in arrays])

    return body


def _function_gradient(tf, fn):
    """The gradient of `squared_sum(fn(x))` taken inside a `tf.function`."""

    @tf.function
    def grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = squared_sum(tf, fn(tf, x))
        return loss, tape.gradient(loss, x)

    return grad(tf.constant(A))


FUNCTION_CASES = {
    "MatMul_Relu_BiasAdd": _in_function(
        lambda tf, a, b: tf.raw_ops.BiasAdd(
            value=tf.raw_ops.Relu(features=tf.raw_ops.MatMul(a=a, b=b, transpose_b=True)), bias=[1.0, -1.0]
        ),
        A,
        B,
    ),
    "StridedSlice": _in_function(
        lambda tf, x: tf.raw_ops.StridedSlice(
            input=x, begin=[0, 1], end=[0, 3], strides=[1, 1], begin_mask=1, end_mask=1, shrink_axis_mask=1
        ),
        A,
    ),
    "TopKV2": _in_function(lambda tf, x: tf.raw_ops.TopKV2(input=x, k=2), BATCH),
    "Conv2D_MaxPool": _in_function(
        lambda tf, x, w: tf.raw_ops.MaxPool(
            input=tf.raw_ops.Conv2D(input=x, filter=w, strides=[1, 1, 1, 1], padding="SAME"),
            ksize=[1, 2, 2, 1],
            strides=[1, 2, 2, 1],
            padding="VALID",
        ),
        IMG,
        KERNEL,
    ),
    "Shape_Reshape_Sum": _in_function(
        lambda tf, x: tf.raw_ops.Sum(
            input=tf.raw_ops.Reshape(
                tensor=x, shape=tf.raw_ops.ReverseV2(tensor=tf.raw_ops.Shape(input=x), axis=[0])
            ),
            axis=0,
            keep_dims=True,
        ),
        BATCH,
    ),
    "gradient": lambda tf: _function_gradient(tf, lambda tf, v: tf.raw_ops.Softmax(logits=tf.raw_ops.Tanh(x=v))),
    "SparseXent_gradient": lambda tf: _function_gradient(
        tf, lambda tf, v: tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=v, labels=[1, 2]).loss
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(FUNCTION_CASES))
def test_in_function(case):
    check(FUNCTION_CASES[case])


# -- errors ----------------------------------------------------------------------------------------------
ERRORS = {
    "positional": lambda tf: tf.raw_ops.AddV2(A, B),
    "positional_matmul": lambda tf: tf.raw_ops.MatMul(A, b=B),
    "missing_argument": lambda tf: tf.raw_ops.Add(x=A),
    "unknown_argument": lambda tf: tf.raw_ops.Relu(features=A, alpha=0.1),
    "mixed_dtypes": lambda tf: tf.raw_ops.AddV2(x=tf.constant(A), y=tf.constant(INTS)),
    "RealDiv_int": lambda tf: tf.raw_ops.RealDiv(x=INTS, y=J),
    "MatMul_shapes": lambda tf: tf.raw_ops.MatMul(a=A, b=B),
    "Reshape_size": lambda tf: tf.raw_ops.Reshape(tensor=A, shape=[4, -1]),
    "ConcatV2_ranks": lambda tf: tf.raw_ops.ConcatV2(values=[A, BATCH], axis=0),
    "GatherV2_out_of_range": lambda tf: tf.raw_ops.GatherV2(params=M3, indices=[5], axis=0),
    "Squeeze_not_one": lambda tf: tf.raw_ops.Squeeze(input=A, axis=[0]),
    "Sqrt_int": lambda tf: tf.raw_ops.Sqrt(x=INTS),
    "Floor_int": lambda tf: tf.raw_ops.Floor(x=INTS),
    "Neg_bool": lambda tf: tf.raw_ops.Neg(x=BOOL_A),
    "Relu_bool": lambda tf: tf.raw_ops.Relu(features=BOOL_A),
    "Softmax_int": lambda tf: tf.raw_ops.Softmax(logits=INTS),
    "Softmax_scalar": lambda tf: tf.raw_ops.Softmax(logits=1.0),
    "L2Loss_int": lambda tf: tf.raw_ops.L2Loss(t=INTS),
    "BitwiseAnd_float": lambda tf: tf.raw_ops.BitwiseAnd(x=A, y=B),
    "Sum_bool": lambda tf: tf.raw_ops.Sum(input=BOOL_A, axis=0),
    "Mean_bool": lambda tf: tf.raw_ops.Mean(input=BOOL_A, axis=0),
    "Sum_axis_out_of_range": lambda tf: tf.raw_ops.Sum(input=A, axis=3),
    "ArgMax_output_type": lambda tf: tf.raw_ops.ArgMax(input=A, dimension=0, output_type=tf.float32),
    "Transpose_bad_perm": lambda tf: tf.raw_ops.Transpose(x=A, perm=[0, 0]),
    "Pack_shapes": lambda tf: tf.raw_ops.Pack(values=[A, A[0]]),
    "Unpack_num": lambda tf: tf.raw_ops.Unpack(value=A, num=3),
    "Select_condition_length": lambda tf: tf.raw_ops.Select(condition=np.array([True, False, True]), x=A, y=B),
    "Conv2D_strides_length": lambda tf: tf.raw_ops.Conv2D(input=IMG, filter=KERNEL, strides=[1, 1], padding="SAME"),
    "TopKV2_k_too_big": lambda tf: tf.raw_ops.TopKV2(input=A, k=5),
    "AddN_empty": lambda tf: tf.raw_ops.AddN(inputs=[]),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    check_raises(ERRORS[case])


def test_positional_message():
    raised = check_raises(lambda tf: tf.raw_ops.MatMul(A, B))
    assert raised.message.startswith("MatMul only takes keyword args (possible keys: ['a', 'b', 'transpose_a'")


@pytest.mark.parametrize("op", ["Real", "Imag", "Angle"])
def test_complex_parts_take_complex_inputs_with_their_kernels_tout(op):
    def part(make, **tout):
        return lambda tf: getattr(tf.raw_ops, op)(input=make(tf), **tout)

    check(part(lambda tf: tf.constant([1.0 + 2.0j], tf.complex64)))
    check(part(lambda tf: tf.constant([1.0 + 2.0j]), Tout=np.float64))
    check_raises(part(lambda tf: tf.constant([1.0 + 2.0j])))  # complex128 with the default Tout: no kernel
    check_raises(part(lambda tf: tf.constant([1.0, -2.0])))  # a real input: the attr error
    check_raises(part(lambda tf: tf.constant([1, 2])))


_V3_DTYPES = [
    ("float32", "float32", "float32"),
    ("int16", "int16", "int16"),
    ("int32", "int32", "int32"),
    ("int64", "int64", "int64"),
    ("float16", "float16", "float16"),
    ("bfloat16", "bfloat16", "bfloat16"),
    ("complex64", "complex64", "complex64"),
    ("uint8", "uint8", "int32"),
    ("int8", "uint8", "int32"),
    ("bfloat16", "int8", "bfloat16"),
    ("float32", "float32", "float64"),
    ("bfloat16", "float32", "float32"),
    ("int32", "int32", "int64"),
    ("uint8", "uint8", "uint8"),
]


@pytest.mark.parametrize("ta, tb, tout", _V3_DTYPES)
def test_batch_matmul_v3_has_tfs_cpu_kernels_only(ta, tb, tout):
    """One dtype (no half; int16 too), (u)int8 into int32, bfloat16 with (u)int8 into bfloat16: TF's CPU kernels.
    Another `Tout` is TF's NotFoundError (its attr error for a (u)int8 `Tout`); it used to cast and compute."""

    def body(tf):
        x = tf.cast(tf.constant([[1, 2], [3, 4]]), ta)
        y = tf.cast(tf.constant([[5, -1], [2, 7]]) if tb not in ("uint8",) else tf.constant([[5, 1], [2, 7]]), tb)
        return tf.raw_ops.BatchMatMulV3(x=x, y=y, Tout=tf.as_dtype(tout), adj_y=True)

    raises = (ta, tb, tout) in {
        ("float16", "float16", "float16"),
        ("float32", "float32", "float64"),
        ("bfloat16", "float32", "float32"),
        ("int32", "int32", "int64"),
        ("uint8", "uint8", "uint8"),
    }
    check(body, raises=raises)
