"""TF's gradient registry: `tf.RegisterGradient(op_type)` and `tf.no_gradient(op_type)`.

TF keeps one registry of gradient functions by op type. Every op type that has a
gradient in TF is registered when TF starts, and so is every op type TF marks not
differentiable (registered as `None`): registering either again raises `KeyError`,
as in TF. tapeshim's ops differentiate through JAX, so the registry starts with the
op types of tapeshim's raw ops (`tf.raw_ops`) that TF registers; a registration for
a new op type succeeds and is kept (tapeshim has no user-defined op types, so no
gradient computation looks it up; TF's eager tape likewise never reaches it for
TF's own op types, which cannot be registered twice).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, TypeVar

_T = TypeVar("_T")

# Raw op types that TF registers a gradient function for.
_DIFFERENTIABLE = """
Abs Acos Acosh Add AddN AddV2 Angle ArgMax ArgMin Asin Asinh Atan Atan2 Atanh AvgPool AvgPool3D BatchMatMul
BatchMatMulV2 BatchMatMulV3 BesselI0e BesselI1e Betainc BiasAdd BroadcastTo Cast Ceil CheckNumerics Cholesky
ClipByValue Complex ComplexAbs Concat ConcatV2 Conj Conv2D Conv3D Cos Cosh Cross Cumprod Cumsum CumulativeLogsumexp
DepthToSpace DepthwiseConv2dNative Diag Digamma Div DivNoNan Einsum Elu Erf Erfc Erfinv EuclideanNorm Exp ExpandDims
Expm1 Fill Floor FloorDiv FloorMod GatherNd GatherV2 Identity IdentityN Igamma Igammac Imag Inv L2Loss LRN LeakyRelu
Lgamma Log Log1p LogMatrixDeterminant LogSoftmax MatMul MatrixBandPart MatrixDeterminant MatrixDiag MatrixDiagPart
MatrixInverse MatrixSetDiag MatrixSolve MatrixSolveLs MatrixSquareRoot MatrixTriangularSolve Max MaxPool MaxPool3D
MaxPoolV2 Maximum Mean Min Minimum MirrorPad Mul MulNoNan Neg Pack Pad PadV2 Polygamma Pow Prod Qr Real RealDiv
Reciprocal Relu Relu6 Reshape ReverseSequence ReverseV2 Rint Round Rsqrt ScatterNd SegmentMax SegmentMean SegmentMin
SegmentProd SegmentSum Select SelectV2 SelfAdjointEigV2 Selu Sigmoid Sign Sin Sinh Slice Softmax
SoftmaxCrossEntropyWithLogits Softplus Softsign SpaceToBatchND SpaceToDepth SparseSoftmaxCrossEntropyWithLogits
Split SplitV Sqrt Square SquaredDifference Squeeze StridedSlice Sub Sum Svd Tan Tanh TensorScatterAdd
TensorScatterMax TensorScatterMin TensorScatterSub TensorScatterUpdate Tile TopKV2 Transpose TruncateDiv Unpack
UnsortedSegmentMax UnsortedSegmentMin UnsortedSegmentProd UnsortedSegmentSum Xdivy Xlogy Zeta
""".split()

# Raw op types that TF marks not differentiable (registered with no gradient function).
_NOT_DIFFERENTIABLE = """
BitwiseAnd BitwiseOr BitwiseXor Equal Greater GreaterEqual Invert LeftShift Less LessEqual LinSpace LogicalAnd
LogicalNot LogicalOr NotEqual OneHot OnesLike RandomStandardNormal RandomUniform Range Rank RightShift Shape ShapeN
Size StopGradient TruncatedNormal ZerosLike
""".split()


class _Builtin:
    """The registry's entry for an op type whose gradient tapeshim computes through JAX."""

    def __init__(self, op_type: str) -> None:
        self.op_type = op_type

    def __repr__(self) -> str:
        return f"<tapeshim's built-in gradient of {self.op_type}>"


class _Registry:
    """Op type -> (gradient function, or None for not differentiable; where it was registered)."""

    def __init__(self) -> None:
        here = f"<module> {__file__}:1"
        self._entries: dict[str, tuple[Any, str]] = {name: (_Builtin(name), here) for name in _DIFFERENTIABLE}
        self._entries.update({name: (None, here) for name in _NOT_DIFFERENTIABLE})

    def register(self, op_type: str, fn: Any) -> None:
        """Registers `fn` (None: not differentiable) for `op_type`; `KeyError` if it is registered."""
        if op_type in self._entries:
            raise KeyError(
                f"Registering two gradient with name '{op_type}'! "
                f"(Previous registration was in {self._entries[op_type][1]})"
            )
        frame = inspect.currentframe()
        caller = frame.f_back.f_back if frame is not None and frame.f_back is not None else None
        where = (
            "<unknown>" if caller is None else f"{caller.f_code.co_name} {caller.f_code.co_filename}:{caller.f_lineno}"
        )
        self._entries[op_type] = (fn, where)

    def lookup(self, op_type: str) -> Any:
        """The gradient function registered for `op_type` (None: not differentiable); `LookupError` if none."""
        if op_type not in self._entries:
            raise LookupError(f"gradient registry has no entry for: {op_type}")
        return self._entries[op_type][0]

    def list(self) -> list[str]:
        """The registered op types."""
        return list(self._entries)


registry = _Registry()
"""The gradient registry."""


def _check_op_type(op_type: Any) -> None:
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")


class RegisterGradient:
    """A decorator registering a gradient function for an op type, as `tf.RegisterGradient`.

    `@tf.RegisterGradient("MyOp")` above `def _my_op_grad(op, grad)` registers it for
    "MyOp". Registering an op type that is registered already (every TF op type with a
    gradient, or one marked not differentiable) raises `KeyError`.

    Args:
        op_type: the op type's name.

    Raises:
        TypeError: if `op_type` is not a string.
    """

    def __init__(self, op_type: str) -> None:
        _check_op_type(op_type)
        self._op_type = op_type

    def __call__(self, f: _T) -> _T:
        """Registers `f` as the gradient function of the op type and returns it.

        Raises:
            KeyError: if the op type is registered already.
        """
        registry.register(self._op_type, f)
        return f


def no_gradient(op_type: str) -> None:
    """Marks `op_type` as not differentiable, as `tf.no_gradient`.

    Args:
        op_type: the op type's name.

    Raises:
        TypeError: if `op_type` is not a string.
        KeyError: if the op type is registered already.
    """
    _check_op_type(op_type)
    registry.register(op_type, None)


NoGradient = no_gradient
NotDifferentiable = no_gradient


def get_gradient_function(op_type: str) -> Callable[..., Any] | None:
    """The gradient function registered for `op_type` (None: not differentiable).

    Raises:
        LookupError: if nothing is registered for `op_type`.
    """
    return registry.lookup(op_type)
