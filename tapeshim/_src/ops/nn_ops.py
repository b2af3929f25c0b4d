"""The `tf.nn` rows of the op table needed for training steps."""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tapeshim._src import errors, runtime_checks
from tapeshim._src.ops import array_ops, lax_kernels, math_ops, random_ops, reduction_ops, table
from tapeshim._src.ops.common import convert_same_dtype, dtype_check
from tapeshim._src.ops.ragged_hook import ragged_dispatch
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.state import in_forward_mode
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike, TensorLike


def _exponentials(logits: jax.Array, axis: int) -> tuple[jax.Array, jax.Array, jax.Array, tuple[int, ...]]:
    """`(logits - max, its exp, the exp's sum along axis (reduced), the other axes)`, the max held constant as
    `jax.nn.softmax` and `jax.nn.log_softmax` hold it. The softmax kernels bind `lax` as those functions bind it,
    without their own traces (a kernel's first trace at new shapes pays for each `jnp` function's `jit`)."""
    axis %= logits.ndim
    kept = tuple(d for d in range(logits.ndim) if d != axis)
    peak = lax.stop_gradient(lax.reduce_max(logits, (axis,)))
    shifted = lax.sub(logits, lax.broadcast_in_dim(peak, logits.shape, kept))
    unnormalized = lax.exp(shifted)
    return shifted, unnormalized, lax.reduce_sum(unnormalized, (axis,)), kept


def _softmax_of(parts: tuple) -> jax.Array:
    _, unnormalized, total, kept = parts
    return lax.div(unnormalized, lax.broadcast_in_dim(total, unnormalized.shape, kept))


def _log_softmax_of(parts: tuple) -> jax.Array:
    shifted, _, total, kept = parts
    return lax.sub(shifted, lax.broadcast_in_dim(lax.log(total), shifted.shape, kept))


def _softmax(logits: jax.Array, axis: int) -> jax.Array:
    return _softmax_of(_exponentials(logits, axis))


def _log_softmax(logits: jax.Array, axis: int) -> jax.Array:
    return _log_softmax_of(_exponentials(logits, axis))


@jax.custom_jvp
def _relu(features: jax.Array) -> jax.Array:
    """max(features, 0), bound with `lax` as `jax.nn.relu` binds it (without its `jit`'s trace); NaN stays NaN."""
    return lax.max(features, lax.full_like(features, 0))


def _relu_tangent(tangent: jax.Array, _: jax.Array, features: jax.Array) -> jax.Array:
    """The derivative is 0 at 0 (and at NaN), as TF's ReluGrad and `jax.nn.relu`'s."""
    return lax.select(lax.gt(features, lax.full_like(features, 0)), tangent, lax.full_like(tangent, 0))


_relu.defjvps(_relu_tangent)


def _sparse_xent(labels: jax.Array, logits: jax.Array, checked: bool = False) -> jax.Array:
    sized = all(d.__class__ is int for d in labels.shape)  # (else sizes known per call: a trace for every size)
    empty = sized and labels.size == 0
    classes = logits.shape[-1]
    # (a symbolic class count, `tapeshim.function` traced for any size, made a value as `jnp` makes it)
    zero, count = np.zeros((), labels.dtype), lax_kernels.size_value(classes, labels.dtype)
    last = logits.ndim - 1
    if checked and not empty:  # labels only known when the program runs: TF's CPU kernel check
        everything = tuple(range(labels.ndim))
        lowest, highest = lax.reduce_min(labels, everything), lax.reduce_max(labels, everything)
        runtime_checks.require(
            lax.bitwise_and(lax.ge(lowest, zero), lax.lt(highest, count)),
            "Received a label value of {value} which is outside the valid range of "
            f"[0, {classes}).  Label values: {{labels}} [Op:SparseSoftmaxCrossEntropyWithLogits]",
            value=lax.select(lax.lt(lowest, zero), lowest, highest),  # (the lowest if negative, else the highest)
            labels=labels,  # (printed as NumPy prints an array: `interpret.check_error` writes TF's list)
        )
    else:  # unchecked (off the CPU): a label out of range gives its row NaN, loss and gradient, as TF's GPU kernel
        valid = lax.bitwise_and(lax.ge(labels, zero), lax.lt(labels, count))
        scale = lax.select(valid, lax.full_like(labels, 1, logits.dtype), lax.full_like(labels, np.nan, logits.dtype))
        logits = lax.mul(logits, lax.broadcast_in_dim(scale, logits.shape, tuple(range(last))))
    shifted, _, total, _ = _exponentials(logits, last)
    logsumexp = lax.log(total)
    # the label's class picked by a one-hot mask (its gradient a select, where a gather's is a scatter)
    classes_of = lax.broadcast_in_dim(lax.convert_element_type(labels, np.int32), logits.shape, tuple(range(last)))
    hot = lax.eq(classes_of, lax.broadcasted_iota(np.int32, logits.shape, last))
    return lax.sub(logsumexp, lax.reduce_sum(lax.select(hot, shifted, lax.full_like(shifted, 0)), (last,)))


@jax.custom_jvp
def _held(value: jax.Array) -> jax.Array:
    """`value`, with a derivative of zeros: still connected, where `lax.stop_gradient` disconnects (TF's
    cross-entropy gradient by the labels through `backprop` is zeros, not None)."""
    return value


_held.defjvps(lambda tangent, _, value: lax.full_like(tangent, 0))


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def _xent(labels: jax.Array, logits: jax.Array, axis: int) -> jax.Array:
    return -jnp.sum(labels * _log_softmax(logits, axis), axis=axis)


@_xent.defjvp
def _xent_jvp(axis: int, primals: tuple, tangents: tuple) -> tuple:
    """TF's gradient (`_SoftmaxCrossEntropyWithLogitsGrad`): the logits' is the kernel's `backprop` output,
    softmax - labels, whether or not the labels sum to 1, and holds the labels constant (its derivative by them
    is 0); the labels' is -log_softmax."""
    labels, logits = primals
    labels_dot, logits_dot = tangents
    parts = _exponentials(logits, axis)  # (softmax and log_softmax from one pass)
    log_probs = _log_softmax_of(parts)
    backprop = _softmax_of(parts) - _held(labels)
    return -jnp.sum(labels * log_probs, axis=axis), jnp.sum(backprop * logits_dot - log_probs * labels_dot, axis=axis)


_relu_op = OpDef("Relu", _relu, True, dtype_check("Relu", "fiu"))
_softmax_op = OpDef("Softmax", lambda x, axis: _softmax(x, axis), True, dtype_check("Softmax", "f"))
_log_softmax_op = OpDef("LogSoftmax", lambda x, axis: _log_softmax(x, axis), True, dtype_check("LogSoftmax", "f"))
_sparse_xent_op = OpDef("SparseSoftmaxCrossEntropyWithLogits", _sparse_xent, True)
_xent_op = OpDef("SoftmaxCrossEntropyWithLogits", _xent, True, dtype_check("SoftmaxCrossEntropyWithLogits", "f"))


@table.export("nn.relu", dtypes=table.REAL, note="the gradient at 0 is 0, as TF", op=_relu_op)
@ragged_dispatch()
def relu(features: TensorLike, name: str | None = None) -> Tensor:
    """max(features, 0); the gradient at 0 is 0, as in TF."""
    return apply(_relu_op, (convert_to_tensor(features),))[0]


def _axis(axis: Any, rank: int, op_name: str) -> int:
    axis = -1 if axis is None else int(axis)
    if not -rank <= axis < rank:
        raise errors.invalid_argument(
            f"`axis` must be in the range [{-rank}, {rank}) where {rank} is the number of dimensions in the input."
            f" Received: axis={axis}",
            op_name,
        )
    return axis % rank


@table.export("nn.softmax", "math.softmax", dtypes=table.REAL_FLOAT, op=_softmax_op)
@ragged_dispatch(impl="tapeshim._src.ragged_array:softmax")
def softmax(logits: TensorLike, axis: AxisLike = None, name: str | None = None) -> Tensor:
    """exp(logits) / sum(exp(logits)) along `axis` (default last)."""
    x = convert_to_tensor(logits)
    return apply(_softmax_op, (x,), (("axis", _axis(axis, len(x._shape), "Softmax")),))[0]


@table.export("nn.log_softmax", "math.log_softmax", dtypes=table.REAL_FLOAT, op=_log_softmax_op)
def log_softmax(logits: TensorLike, axis: AxisLike = None, name: str | None = None) -> Tensor:
    """logits - log(sum(exp(logits))) along `axis` (default last)."""
    x = convert_to_tensor(logits)
    return apply(_log_softmax_op, (x,), (("axis", _axis(axis, len(x._shape), "LogSoftmax")),))[0]


@table.export("nn.sparse_softmax_cross_entropy_with_logits", dtypes=table.REAL_FLOAT, op=_sparse_xent_op)
def sparse_softmax_cross_entropy_with_logits(
    labels: TensorLike | None = None, logits: TensorLike | None = None, name: str | None = None
) -> Tensor:
    """Cross-entropy of integer class `labels` against unnormalized `logits`, per example.

    Args:
      labels: int32/int64 tensor of shape `logits.shape[:-1]`.
      logits: float tensor of shape `[..., num_classes]`.

    Returns:
      The loss, of `labels`' shape and `logits`' dtype.

    Raises:
      ValueError: if the ranks or leading shapes do not match.
    """
    if labels is None or logits is None:
        raise ValueError("Both labels= and logits= must be given (as keywords, as in TF).")
    labels_t = convert_to_tensor(labels)
    logits_t = convert_to_tensor(logits)
    if labels_t._dtype.name not in ("int32", "int64"):  # (TF's kernel: no other integers either)
        raise errors.invalid_argument(
            f"Value for attr 'Tlabels' of {labels_t._dtype.name} is not in the list of allowed values: int32, int64",
            "SparseSoftmaxCrossEntropyWithLogits",
        )
    if not logits_t._dtype.is_floating:
        raise errors.invalid_argument(
            f"Value for attr 'T' of {logits_t._dtype.name} is not in the list of allowed values: half, bfloat16, "
            "float, double",
            "SparseSoftmaxCrossEntropyWithLogits",
        )
    if len(labels_t._shape) != len(logits_t._shape) - 1:
        raise ValueError(
            f"Rank mismatch: Rank of labels (received {len(labels_t._shape)}) should equal rank of logits minus 1 "
            f"(received {len(logits_t._shape)})."
        )
    if tuple(labels_t._shape) != tuple(logits_t._shape[:-1]):
        raise ValueError(
            f"Shape mismatch: The shape of labels (received {tuple(labels_t._shape)}) should equal the shape of "
            f"logits except for the last dimension (received {tuple(logits_t._shape)})."
        )
    return apply(_sparse_xent_op, (labels_t, logits_t), _check_sparse_labels(labels_t, logits_t))[0]


def _check_sparse_labels(labels: Tensor, logits: Tensor) -> tuple:
    """TF's CPU kernel errors: no classes, or a label outside [0, num_classes).

    Concrete labels are checked now; labels only known when the program runs
    (computed under a tape, or traced by `tapeshim.function`) are checked inside
    it (`runtime_checks`): the op's static `(("checked", True),)` is returned.
    """
    op_name = "SparseSoftmaxCrossEntropyWithLogits"
    num_classes = logits._shape[-1]
    if num_classes == 0:
        raise errors.invalid_argument(
            f"Must have at least one class, but got logits shape [{','.join(map(str, logits._shape))}]", op_name
        )
    return runtime_checks.checked_static(
        labels, lambda values: _check_label_values(values, num_classes), (num_classes,)
    )


def _check_label_values(values: Any, num_classes: int) -> None:
    op_name = "SparseSoftmaxCrossEntropyWithLogits"
    values = np.asarray(values)
    if not values.size:
        return
    lowest, highest = values.min(), values.max()
    if lowest < 0 or highest >= num_classes:
        bad = lowest if lowest < 0 else highest
        raise errors.invalid_argument(
            f"Received a label value of {bad} which is outside the valid range of [0, {num_classes}).  "
            f"Label values: {' '.join(str(v) for v in values.reshape(-1).tolist())}",
            op_name,
        )


@table.export(
    "nn.softmax_cross_entropy_with_logits",
    dtypes=table.REAL_FLOAT,
    note="gradients flow to labels too, as TF",
    op=_xent_op,
)
def softmax_cross_entropy_with_logits(
    labels: TensorLike | None = None, logits: TensorLike | None = None, axis: int = -1, name: str | None = None
) -> Tensor:
    """Cross-entropy of probability `labels` against unnormalized `logits` along `axis`.

    Gradients flow to both `logits` and `labels`, as in TF.
    """
    if labels is None or logits is None:
        raise ValueError("Both labels= and logits= must be given (as keywords, as in TF).")
    logits_t = convert_to_tensor(logits)
    labels_t = convert_to_tensor(labels)
    if labels_t._dtype != logits_t._dtype and logits_t._dtype.is_floating:  # TF casts the labels to the logits'
        labels_t = math_ops.cast(labels_t, logits_t._dtype)
    labels_t, logits_t = convert_same_dtype((labels_t, logits_t), "SoftmaxCrossEntropyWithLogits")
    if tuple(labels_t._shape) != tuple(logits_t._shape):
        try:  # TF's kernel broadcasts them
            common = np.broadcast_shapes(tuple(labels_t._shape), tuple(logits_t._shape))
        except ValueError:
            raise errors.invalid_argument(
                f"logits and labels must be broadcastable: logits_size=[{','.join(map(str, logits_t._shape))}] "
                f"labels_size=[{','.join(map(str, labels_t._shape))}]",
                "SoftmaxCrossEntropyWithLogits",
            ) from None
        from tapeshim._src.ops import manip_ops  # (manip_ops imports this module's neighbours: imported on use)

        labels_t, logits_t = manip_ops.broadcast_to(labels_t, common), manip_ops.broadcast_to(logits_t, common)
    axis = _axis(axis, len(logits_t._shape), "SoftmaxCrossEntropyWithLogits")
    return apply(_xent_op, (labels_t, logits_t), (("axis", axis),))[0]


# -- activations --------------------------------------------------------------------
def _activation(public_name: str, op_name: str, impl: Any, note: str = "", gradient: str = "jax") -> Any:
    op = OpDef(op_name, impl, True, dtype_check(op_name, "f"))

    def activation(features: Any, name: str | None = None) -> Tensor:
        return apply(op, (convert_to_tensor(features),))[0]

    activation.__name__ = activation.__qualname__ = public_name
    activation.__doc__ = f"The {public_name} activation, as `tf.nn.{public_name}`."
    dispatched = ragged_dispatch()(activation)
    return table.export(f"nn.{public_name}", gradient=gradient, dtypes=table.REAL_FLOAT, note=note, op=op)(dispatched)


def _relu6_impl(x: jax.Array) -> jax.Array:
    return jnp.where(x > 0, jnp.where(x < 6, x, jnp.asarray(6, x.dtype)), jnp.zeros_like(x))


_relu6_op = OpDef("Relu6", _relu6_impl, True, dtype_check("Relu6", "fiu"))


@table.export("nn.relu6", gradient="tf", dtypes=table.REAL, note="the gradient is 0 at 0 and 6, as TF", op=_relu6_op)
@ragged_dispatch()
def relu6(features: TensorLike, name: str | None = None) -> Tensor:
    """min(max(features, 0), 6)."""
    return apply(_relu6_op, (convert_to_tensor(features),))[0]


# TF's Selu kernel constants (cast to the input's dtype, as the kernel does).
SELU_SCALE = 1.0507009873554804934193349852946
SELU_SCALE_ALPHA = 1.7580993408473768599402175208123


@jax.custom_jvp
def _selu_impl(x: jax.Array) -> jax.Array:
    """TF's Selu kernel: scale * alpha * (exp(x) - 1) below 0 (not expm1), scale * x otherwise."""
    scale_alpha = jnp.asarray(SELU_SCALE_ALPHA, x.dtype)
    return jnp.where(x < 0, scale_alpha * (jnp.exp(x) - 1), jnp.asarray(SELU_SCALE, x.dtype) * x)


@_selu_impl.defjvp
def _selu_jvp(primals: tuple, tangents: tuple) -> tuple:
    # TF's SeluGrad works from the outputs: (y + scale * alpha) where y < 0, scale otherwise.
    (x,), (t,) = primals, tangents
    y = _selu_impl(x)
    slope = jnp.where(y < 0, y + jnp.asarray(SELU_SCALE_ALPHA, x.dtype), jnp.asarray(SELU_SCALE, x.dtype))
    return y, slope * t


@jax.custom_jvp
def _elu_impl(x: jax.Array) -> jax.Array:
    return jnp.where(x < 0, jnp.expm1(x), x)


@_elu_impl.defjvp
def _elu_jvp(primals: tuple, tangents: tuple) -> tuple:
    # TF's EluGrad works from the outputs: (y + 1) where y < 0, 1 otherwise.
    (x,), (t,) = primals, tangents
    y = _elu_impl(x)
    return y, jnp.where(y < 0, y + 1, jnp.ones_like(y)) * t


elu = _activation("elu", "Elu", _elu_impl, gradient="tf", note="the gradient is computed from the outputs, as TF")
selu = _activation(
    "selu", "Selu", _selu_impl, gradient="tf", note="TF's kernel: exp(x) - 1 and a gradient computed from the outputs"
)


@jax.custom_vjp
def _swish_reverse(x: jax.Array, beta: jax.Array) -> jax.Array:
    return x * jax.nn.sigmoid(beta * x)


def _swish_fwd(x: jax.Array, beta: jax.Array) -> tuple:
    return _swish_reverse(x, beta), (x, beta)


def _swish_bwd(saved: tuple, g: jax.Array) -> tuple:
    # TF's swish gradient (a custom gradient): dy * s * (1 + beta x (1 - s)) and sum(dy * x^2 s (1 - s)),
    # not conjugated for complex features; conj here undoes the conj(vjp(conj(dy))) that tapes apply.
    x, beta = saved
    s = jax.nn.sigmoid(beta * x)
    activation_grad = s * (1 + beta * x * (1 - s))
    beta_grad = jnp.sum(g * jnp.conj(x * x * s * (1 - s)))
    return g * jnp.conj(activation_grad), beta_grad.reshape(beta.shape)


_swish_reverse.defvjp(_swish_fwd, _swish_bwd)


def _swish_impl(x: jax.Array, beta: jax.Array) -> jax.Array:
    """x * sigmoid(beta * x) with TF's custom gradient (forward mode, which custom_vjp cannot do, uses JAX's)."""
    if in_forward_mode():
        return x * jax.nn.sigmoid(beta * x)
    return _swish_reverse(x, beta)


_swish_op = OpDef("Swish", _swish_impl, True, dtype_check("Swish", "fc"))


def _swish(features: Any, beta: Any) -> Tensor:
    x = convert_to_tensor(features)
    beta_t = math_ops.cast(convert_to_tensor(beta), x.dtype)  # as TF: converted on its own, then cast
    return apply(_swish_op, (x, beta_t))[0]


@table.export(
    "nn.silu",
    gradient="custom",
    dtypes=table.FLOAT,
    note="TF's swish: its custom gradient (not conjugated for complex); beta converted, then cast",
)
@ragged_dispatch()
def silu(features: TensorLike, beta: TensorLike = 1.0, name: str | None = None) -> Tensor:
    """x * sigmoid(beta * x), as `tf.nn.silu` (TF's `tf.nn.swish`, with its custom gradient)."""
    return _swish(features, beta)


@table.export(
    "nn.swish",
    gradient="custom",
    dtypes=table.FLOAT,
    note="TF's custom gradient (not conjugated for complex); beta converted, then cast",
)
@ragged_dispatch()
def swish(features: TensorLike, beta: TensorLike = 1.0, name: str | None = None) -> Tensor:
    """x * sigmoid(beta * x), as `tf.nn.swish`.

    As in TF, `beta` is converted to a tensor on its own (a Python float becomes
    float32) and then cast to the features' dtype; a tensor `beta` gets a
    gradient, and complex features get TF's (unconjugated) custom gradient.
    """
    return _swish(features, beta)


def _float32_constant(value: float, dtype: Any) -> jax.Array:
    """`value` rounded to float32 first, then cast to `dtype`: TF's float attrs and `cast(python_float, dtype)`."""
    return jnp.asarray(np.float32(value)).astype(dtype)


_leaky_op = OpDef(
    "LeakyRelu",
    lambda x, alpha: jnp.where(x > 0, x, x * _float32_constant(alpha, x.dtype)),
    True,
    dtype_check("LeakyRelu", "f"),
)


@table.export(
    "nn.leaky_relu",
    gradient="tf",
    dtypes=table.REAL_FLOAT,
    note="the gradient at 0 is alpha; alpha is a float32 attr (rounded to float32 for float64), as TF",
    op=_leaky_op,
)
@ragged_dispatch()
def leaky_relu(features: TensorLike, alpha: float = 0.2, name: str | None = None) -> Tensor:
    """x for x > 0, alpha * x otherwise (integers are computed as float32, as TF).

    As in TF, `alpha` is an op attribute of type float32: for float64 features
    it is rounded to float32 first.
    """
    x = convert_to_tensor(features)
    if x.dtype.is_integer:
        x = math_ops.cast(x, "float32")
    if isinstance(alpha, np.ndarray):
        alpha = alpha.item()
    return apply(_leaky_op, (x,), (("alpha", float(alpha)),))[0]


def _gelu_impl(x: jax.Array, approximate: bool) -> jax.Array:
    """TF's composite gelu. Its `cast(python_float, dtype)` constants are float32-rounded; bare Python floats
    take the features' dtype directly."""
    half = jnp.asarray(0.5, x.dtype)
    if approximate:
        inner = x + _float32_constant(0.044715, x.dtype) * x**3
        return half * x * (1 + jnp.tanh(jnp.asarray(0.7978845608028654, x.dtype) * inner))
    return half * x * jax.scipy.special.erfc(-x * _float32_constant(0.7071067811865476, x.dtype))


_gelu_op = OpDef("Gelu", _gelu_impl, True, dtype_check("Gelu", "f"))


@table.export(
    "nn.gelu", dtypes=table.REAL_FLOAT, note="TF's formula and constants (float32-rounded ones too)", op=_gelu_op
)
@ragged_dispatch()
def gelu(features: TensorLike, approximate: bool = False, name: str | None = None) -> Tensor:
    """The Gaussian error linear unit (exact, or the tanh approximation), computed as TF composes it."""
    x = convert_to_tensor(features)
    if not x.dtype.is_floating:
        raise ValueError(f"`features.dtype` must be a floating point tensor.Received:features.dtype={x.dtype}")
    return apply(_gelu_op, (x,), (("approximate", bool(approximate)),))[0]


# -- losses -----------------------------------------------------------------------------
@table.export(
    "nn.sigmoid_cross_entropy_with_logits",
    gradient="tf",
    dtypes=table.REAL_FLOAT,
    note="TF's stable formula, so TF's gradient at logits == 0",
)
@ragged_dispatch("labels", "logits")
def sigmoid_cross_entropy_with_logits(
    labels: TensorLike | None = None, logits: TensorLike | None = None, name: str | None = None
) -> Tensor:
    """max(x, 0) - x * z + log(1 + exp(-|x|)) for logits x and labels z."""
    if labels is None or logits is None:
        raise ValueError("Both labels= and logits= must be given (as keywords, as in TF).")
    z, x = convert_same_dtype((labels, logits), "SigmoidCrossEntropy")
    if tuple(z._shape) != tuple(x._shape):
        raise ValueError(f"logits and labels must have the same shape ({list(x._shape)} vs {list(z._shape)})")

    zeros = array_ops.zeros_like(x)
    positive = x >= zeros
    relu_logits = array_ops.where(positive, x, zeros)
    neg_abs_logits = array_ops.where(positive, -x, x)
    return relu_logits - x * z + math_ops.log1p(math_ops.exp(neg_abs_logits))


@table.export("nn.weighted_cross_entropy_with_logits", dtypes=table.REAL_FLOAT)
def weighted_cross_entropy_with_logits(
    labels: TensorLike, logits: TensorLike, pos_weight: TensorLike, name: str | None = None
) -> Tensor:
    """Sigmoid cross-entropy with the positive term weighted by `pos_weight`, as TF computes it."""
    z, x = convert_same_dtype((labels, logits), "WeightedCrossEntropy")
    log_weight = 1 + (convert_to_tensor(pos_weight, dtype_hint=x.dtype) - 1) * z
    return (1 - z) * x + log_weight * (math_ops.log1p(math_ops.exp(-math_ops.abs(x))) + relu(-x))


def _l2_loss_impl(x: jax.Array) -> jax.Array:
    if x.dtype in (jnp.float16, jnp.bfloat16):  # TF's CPU kernel computes half types in float32
        wide = x.astype(jnp.float32)
        return (jnp.sum(wide * wide) / 2).astype(x.dtype)
    return jnp.sum(x * x) / 2


_l2_loss_op = OpDef("L2Loss", _l2_loss_impl, True, dtype_check("L2Loss", "f"))


@table.export(
    "nn.l2_loss",
    dtypes=table.REAL_FLOAT,
    note="float16/bfloat16 are summed in float32, as TF's CPU kernel",
    op=_l2_loss_op,
)
def l2_loss(t: TensorLike, name: str | None = None) -> Tensor:
    """sum(t ** 2) / 2, as `tf.nn.l2_loss` (float16/bfloat16 accumulate in float32)."""
    return apply(_l2_loss_op, (convert_to_tensor(t),))[0]


def _broadcast_bias(x: jax.Array, b: jax.Array, channel: int) -> jax.Array:
    shape = [1] * x.ndim
    shape[channel] = b.shape[0]
    return x + b.reshape(shape)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _bias_add_half(x: jax.Array, b: jax.Array, channel: int) -> jax.Array:
    return _broadcast_bias(x, b, channel)


def _bias_add_half_fwd(x: jax.Array, b: jax.Array, channel: int) -> tuple:
    return _broadcast_bias(x, b, channel), None


def _bias_add_half_bwd(channel: int, _: None, g: jax.Array) -> tuple:
    # TF's BiasAddGrad on CPU: float16 sums in float32; bfloat16 adds row after row in bfloat16.
    rows = jnp.moveaxis(g, channel, -1).reshape(-1, g.shape[channel])
    if g.dtype == jnp.float16:
        return g, jnp.sum(rows.astype(jnp.float32), axis=0).astype(g.dtype)

    def step(total: jax.Array, row: jax.Array) -> tuple:
        return total + row, None

    total, _ = jax.lax.scan(step, jnp.zeros(rows.shape[1:], g.dtype), rows)
    return g, total


_bias_add_half.defvjp(_bias_add_half_fwd, _bias_add_half_bwd)


def _bias_add_impl(x: jax.Array, b: jax.Array, channel: int) -> jax.Array:
    if x.dtype in (jnp.float16, jnp.bfloat16) and not in_forward_mode():
        return _bias_add_half(x, b, channel)
    return _broadcast_bias(x, b, channel)


_bias_add_op = OpDef("BiasAdd", _bias_add_impl, True)


@table.export(
    "nn.bias_add",
    dtypes=table.NUMERIC,
    note="the bias gradient sums float16 in float32 and bfloat16 row by row, as TF's CPU kernel",
    op=_bias_add_op,
)
def bias_add(value: TensorLike, bias: TensorLike, data_format: str | None = None, name: str | None = None) -> Tensor:
    """Adds the 1-D `bias` along the channel axis (last, or 1 for NC... formats), as `tf.nn.bias_add`.

    The bias gradient accumulates as TF's CPU kernel does: float16 in float32,
    bfloat16 row by row in bfloat16.
    """
    x, b = convert_same_dtype((value, bias), "BiasAdd")
    if len(b._shape) != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {len(b._shape)}")
    channel = 1 if data_format and data_format.startswith("NC") else len(x._shape) - 1
    if x._shape[channel] != b._shape[0]:
        raise errors.invalid_argument(
            "Must provide as many biases as the last dimension of the input tensor: "
            f"[{b._shape[0]}] vs. [{','.join(map(str, x._shape))}]",
            "BiasAdd",
        )
    return apply(_bias_add_op, (x, b), (("channel", channel),))[0]


@table.export(
    "nn.moments",
    dtypes=table.REAL_FLOAT,
    note="the variance's gradient stops at the mean; float16 is computed in float32, as TF",
)
def moments(
    x: TensorLike, axes: AxisLike, shift: TensorLike | None = None, keepdims: bool = False, name: str | None = None
) -> tuple:
    """(mean, variance) over `axes`, as `tf.nn.moments` (float16 input is computed in float32, as TF)."""
    t = convert_to_tensor(x)
    if t.dtype.name == "float16":
        mean, variance = moments(math_ops.cast(t, "float32"), axes, shift, keepdims)
        return math_ops.cast(mean, "float16"), math_ops.cast(variance, "float16")
    mean = math_ops.reduce_mean(t, axis=axes, keepdims=True)
    variance = math_ops.reduce_mean(
        math_ops.squared_difference(t, math_ops.stop_gradient(mean)), axis=axes, keepdims=True
    )
    if not keepdims:
        mean = array_ops.squeeze(mean, axes)
        variance = array_ops.squeeze(variance, axes)
    return mean, variance


@table.export("nn.batch_normalization", dtypes=table.REAL_FLOAT)
def batch_normalization(
    x: Any,
    mean: Any,
    variance: Any,
    offset: Any,
    scale: Any,
    variance_epsilon: float,
    name: str | None = None,
) -> Tensor:
    """(x - mean) * scale / sqrt(variance + epsilon) + offset, as TF computes it."""
    t = convert_to_tensor(x)
    # The same expression as TF's, so Python scalars convert where TF converts them (to the peer's dtype,
    # or float32 where both operands are Python values).
    inv = math_ops.rsqrt(variance + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    shift = offset - mean * inv if offset is not None else -mean * inv
    return t * math_ops.cast(inv, t.dtype) + math_ops.cast(shift, t.dtype)


@table.export("nn.embedding_lookup", dtypes=table.ANY, note="IndexedSlices gradients, as TF")
def embedding_lookup(
    params: TensorLike, ids: TensorLike, max_norm: TensorLike | None = None, name: str | None = None
) -> Tensor:
    """The rows of `params` at `ids`."""
    rows = array_ops.gather(params, ids)
    if max_norm is not None:
        rows = reduction_ops.clip_by_norm(rows, max_norm, axes=[-1])
    return rows


@table.export("nn.dropout", gradient="jax", dtypes=table.REAL_FLOAT, note="not TF's random stream")
@ragged_dispatch()
def dropout(
    x: TensorLike, rate: Any, noise_shape: Any = None, seed: TensorLike | None = None, name: str | None = None
) -> Tensor:
    """Zeroes elements with probability `rate` and scales the rest by 1 / (1 - rate)."""
    t = convert_to_tensor(x)
    if not t.dtype.is_floating:
        raise ValueError(
            f"`x.dtype` must be a floating point tensor as `x` will be scaled. Received: x_dtype={t.dtype!r}"
        )
    if not isinstance(rate, Tensor):
        if not 0 <= float(rate) < 1:
            raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={rate}")
        if float(rate) == 0:
            return t
    rate_t = math_ops.cast(convert_to_tensor(rate, dtype_hint=t.dtype), t.dtype)  # may be traced
    shape = list(t._shape) if noise_shape is None else list(array_ops._static_ints(noise_shape, "noise_shape"))
    keep = random_ops.uniform(shape, dtype=t.dtype, seed=seed) >= rate_t
    return array_ops.where(keep, t * (1.0 / (1.0 - rate_t)), array_ops.zeros_like(t))
