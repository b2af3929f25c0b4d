"""TF's legacy `tf.keras.backend` network functions, on tapeshim ops and Keras 3 ops.

Convolutions, pooling, padding, resizing, CTC, control flow (`switch`,
`map_fn`, `foldl`, `foldr`) and `rnn`, as TF 2.21's `tf.keras.backend` has
them. Where tapeshim has the TF op they use it; otherwise they run Keras 3's op
(on JAX) as one tape-aware tapeshim op (`keras_bridge.keras_function`), so they
are recorded by tapes and traced by `tapeshim.function` all the same.
"""

from __future__ import annotations

from typing import Any, Callable

import tapeshim as tf
from tapeshim._src import errors
from tapeshim._src.keras_bridge import keras, keras_function
from tapeshim._src.keras_legacy_backend import _epsilon, zeros_like
from tapeshim._src.typing_aliases import DTypeLike, TensorLike

_conv = keras_function(keras.ops.conv)
_max_pool = keras_function(keras.ops.max_pool)
_average_pool = keras_function(keras.ops.average_pool)
_resize = keras_function(keras.ops.image.resize)
_ctc_loss = keras_function(keras.ops.ctc_loss)
_ctc_decode = keras_function(keras.ops.ctc_decode)

_INTERPOLATIONS = ("area", "bicubic", "bilinear", "gaussian", "lanczos3", "lanczos5", "mitchellcubic", "nearest")


def _data_format(data_format: str | None) -> str:
    data_format = keras.backend.image_data_format() if data_format is None else data_format
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError(f"Unknown data_format: {data_format}")
    return data_format


def _padding(padding: str) -> str:
    if padding not in ("same", "valid"):
        raise ValueError(f"Invalid padding: {padding}")
    return padding


def _to_channels_last(x: TensorLike, data_format: str) -> Any:
    x = tf.convert_to_tensor(x)
    if data_format == "channels_last":
        return x
    rank = len(x.shape)
    return tf.transpose(x, [0] + list(range(2, rank)) + [1])


def _from_channels_last(x: Any, data_format: str) -> Any:
    if data_format == "channels_last":
        return x
    rank = len(x.shape)
    return tf.transpose(x, [0, rank - 1] + list(range(1, rank - 1)))


def _check_convolution(x: TensorLike, kernel: TensorLike, spatial: int, op_name: str, depthwise: bool = False) -> None:
    """TF's InvalidArgumentError for an input or kernel of the wrong rank, or channels the kernel cannot take."""
    x_shape = tf.convert_to_tensor(x).shape.as_list()
    kernel_shape = tf.convert_to_tensor(kernel).shape.as_list()
    if len(x_shape) != spatial + 2:
        raise errors.invalid_argument(
            f"convolution input `x` must be {spatial + 2}-dimensional (batch, {spatial} spatial, channels): {x_shape}",
            op_name,
        )
    if len(kernel_shape) != spatial + 2:
        raise errors.invalid_argument(
            f"convolution `kernel` must be {spatial + 2}-dimensional ({spatial} spatial, in, out): {kernel_shape}",
            op_name,
        )
    channels, kernel_channels = x_shape[-1], kernel_shape[-2]
    if (
        channels is not None
        and kernel_channels
        and (channels != kernel_channels if depthwise else channels % kernel_channels)
    ):
        raise errors.invalid_argument(
            f"input depth must be evenly divisible by filter depth: {channels} vs {kernel_channels} "
            "(the channels of `x` and the input channels of `kernel`)",
            op_name,
        )


def _spatial(x: TensorLike, data_format: str | None, run: Callable[[Any], Any]) -> Any:
    data_format = _data_format(data_format)
    return _from_channels_last(run(_to_channels_last(x, data_format)), data_format)


def bias_add(x: TensorLike, bias: TensorLike, data_format: str | None = None) -> Any:
    """Adds `bias` (one value per channel, or one per position and channel) to `x`.

    Raises:
      ValueError: for an unknown `data_format` or a bias of the wrong rank.
    """
    data_format = _data_format(data_format)
    x, bias = tf.convert_to_tensor(x), tf.convert_to_tensor(bias)
    rank, bias_shape = len(x.shape), tuple(bias.shape.as_list())
    if len(bias_shape) not in (1, rank - 1):
        raise ValueError(f"Unexpected bias dimensions {len(bias_shape)}. Expected it to be 1 or {rank - 1} dimensions")
    if len(bias_shape) == 1:
        return tf.nn.bias_add(x, bias, data_format="NCHW" if data_format == "channels_first" else "NHWC")
    if rank in (3, 4, 5):
        if data_format == "channels_first":
            return x + tf.reshape(bias, (1, bias_shape[-1]) + bias_shape[:-1])
        return x + tf.reshape(bias, (1,) + bias_shape)
    return tf.nn.bias_add(x, bias)


def batch_normalization(
    x: TensorLike,
    mean: TensorLike,
    var: TensorLike,
    beta: TensorLike,
    gamma: TensorLike,
    axis: int = -1,
    epsilon: float = 1e-3,
) -> Any:
    """`(x - mean) / sqrt(var + epsilon) * gamma + beta` (`axis` is unused, as in TF)."""
    del axis
    return tf.nn.batch_normalization(x, mean, var, beta, gamma, epsilon)


# -- convolutions and pooling ------------------------------------------------------------------------
def conv1d(
    x: Any,
    kernel: Any,
    strides: int = 1,
    padding: str = "valid",
    data_format: str | None = None,
    dilation_rate: int = 1,
) -> Any:
    """1D convolution; `padding` may be `"causal"` (left padding only)."""
    kernel = tf.convert_to_tensor(kernel)
    if padding == "causal":
        x = _spatial(x, data_format, lambda t: temporal_padding(t, (dilation_rate * (kernel.shape[0] - 1), 0)))
        padding = "valid"
    padding = _padding(padding)
    return _spatial(x, data_format, lambda t: _checked_conv(t, kernel, 1, "Conv2D", strides, padding, dilation_rate))


def _checked_conv(
    x: TensorLike, kernel: TensorLike, spatial: int, op_name: str, strides: Any, padding: str, dilation_rate: Any
) -> Any:
    _check_convolution(x, kernel, spatial, op_name)
    return _conv(x, kernel, strides=strides, padding=padding, data_format="channels_last", dilation_rate=dilation_rate)


def conv2d(
    x: TensorLike,
    kernel: TensorLike,
    strides: tuple = (1, 1),
    padding: str = "valid",
    data_format: str | None = None,
    dilation_rate: tuple = (1, 1),
) -> Any:
    """2D convolution of `x` with `kernel` of shape `(rows, cols, in, out)`."""
    padding = _padding(padding)
    return _spatial(x, data_format, lambda t: _checked_conv(t, kernel, 2, "Conv2D", strides, padding, dilation_rate))


def conv3d(
    x: TensorLike,
    kernel: TensorLike,
    strides: tuple = (1, 1, 1),
    padding: str = "valid",
    data_format: str | None = None,
    dilation_rate: tuple = (1, 1, 1),
) -> Any:
    """3D convolution of `x` with `kernel` of shape `(depth, rows, cols, in, out)`."""
    padding = _padding(padding)
    return _spatial(x, data_format, lambda t: _checked_conv(t, kernel, 3, "Conv3D", strides, padding, dilation_rate))


def conv2d_transpose(
    x: Any,
    kernel: Any,
    output_shape: Any,
    strides: tuple = (1, 1),
    padding: str = "valid",
    data_format: str | None = None,
    dilation_rate: tuple = (1, 1),
) -> Any:
    """Transposed 2D convolution to `output_shape` (in `data_format`'s layout).

    Raises:
      ValueError: for unequal dilation rates.
    """
    data_format = _data_format(data_format)
    padding = _padding(padding).upper()
    if tuple(dilation_rate) != (1, 1) and dilation_rate[0] != dilation_rate[1]:
        raise ValueError(
            "Expected the 2 dimensions of the `dilation_rate` argument to be equal to each other. "
            f"Received: dilation_rate={dilation_rate}"
        )
    x = _to_channels_last(x, data_format)
    output_shape = tuple(output_shape)
    if data_format == "channels_first":
        output_shape = (output_shape[0], output_shape[2], output_shape[3], output_shape[1])
    if output_shape[0] is None:
        output_shape = (x.shape[0],) + output_shape[1:]
    out = tf.nn.conv2d_transpose(
        x,
        kernel,
        list(output_shape),
        (1,) + tuple(strides) + (1,),
        padding=padding,
        dilations=list(dilation_rate) if tuple(dilation_rate) != (1, 1) else None,
    )
    return _from_channels_last(out, data_format)


def depthwise_conv2d(
    x: TensorLike,
    depthwise_kernel: TensorLike,
    strides: tuple = (1, 1),
    padding: str = "valid",
    data_format: str | None = None,
    dilation_rate: tuple = (1, 1),
) -> Any:
    """Depthwise 2D convolution (each input channel convolved with its own filters)."""
    padding = _padding(padding).upper()
    _check_convolution(
        _to_channels_last(x, _data_format(data_format)), depthwise_kernel, 2, "DepthwiseConv2dNative", depthwise=True
    )
    return _spatial(
        x,
        data_format,
        lambda t: tf.nn.depthwise_conv2d(
            t, depthwise_kernel, strides=(1,) + tuple(strides) + (1,), padding=padding, dilations=dilation_rate
        ),
    )


def separable_conv2d(
    x: TensorLike,
    depthwise_kernel: TensorLike,
    pointwise_kernel: TensorLike,
    strides: tuple = (1, 1),
    padding: str = "valid",
    data_format: str | None = None,
    dilation_rate: tuple = (1, 1),
) -> Any:
    """Depthwise 2D convolution followed by a 1x1 pointwise convolution.

    Raises:
      ValueError: if `strides` is not 2 integers.
    """
    if len(strides) != 2:
        raise ValueError("`strides` must be a tuple of 2 integers.")
    padding = _padding(padding).upper()

    def run(t: Any) -> Any:
        depthwise = tf.nn.depthwise_conv2d(
            t, depthwise_kernel, strides=(1,) + tuple(strides) + (1,), padding=padding, dilations=dilation_rate
        )
        return tf.nn.conv2d(depthwise, pointwise_kernel, strides=1, padding="VALID")

    return _spatial(x, data_format, run)


def _pool(
    x: TensorLike, pool_size: tuple, strides: tuple, padding: str, data_format: str | None, pool_mode: str
) -> Any:
    padding = _padding(padding)
    if pool_mode not in ("max", "avg"):
        raise ValueError(f"Invalid pooling mode: {pool_mode}")
    pool = _max_pool if pool_mode == "max" else _average_pool
    rank = len(tf.convert_to_tensor(x).shape)
    if rank != len(pool_size) + 2:
        raise errors.invalid_argument(
            f"pooling input `x` must have {len(pool_size)} spatial dimensions (rank {len(pool_size) + 2}), got rank "
            f"{rank}",
            "MaxPool" if pool_mode == "max" else "AvgPool",
        )
    return _spatial(
        x,
        data_format,
        lambda t: pool(t, tuple(pool_size), strides=tuple(strides), padding=padding, data_format="channels_last"),
    )


def pool2d(
    x: TensorLike,
    pool_size: tuple,
    strides: tuple = (1, 1),
    padding: str = "valid",
    data_format: str | None = None,
    pool_mode: str = "max",
) -> Any:
    """2D max (`pool_mode="max"`) or average (`"avg"`) pooling.

    Raises:
      ValueError: for pool sizes or strides that are not 2 integers, or an
        unknown mode, padding or data format.
    """
    _data_format(data_format)
    if len(pool_size) != 2:
        raise ValueError("`pool_size` must be a tuple of 2 integers.")
    if len(strides) != 2:
        raise ValueError("`strides` must be a tuple of 2 integers.")
    return _pool(x, pool_size, strides, padding, data_format, pool_mode)


def pool3d(
    x: TensorLike,
    pool_size: tuple,
    strides: tuple = (1, 1, 1),
    padding: str = "valid",
    data_format: str | None = None,
    pool_mode: str = "max",
) -> Any:
    """3D max (`pool_mode="max"`) or average (`"avg"`) pooling."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode)


# -- padding and resizing ----------------------------------------------------------------------------
def temporal_padding(x: TensorLike, padding: tuple = (1, 1)) -> Any:
    """Zero-pads the middle axis of a rank-3 `x` by `padding` (before, after).

    Raises:
      ValueError: if `padding` is not 2 integers.
    """
    if len(padding) != 2:
        raise ValueError(f"Expected `padding` to be a tuple of 2 integers. Received: padding={padding}")
    return tf.pad(x, [[0, 0], [padding[0], padding[1]], [0, 0]])


def spatial_2d_padding(x: TensorLike, padding: tuple = ((1, 1), (1, 1)), data_format: str | None = None) -> Any:
    """Zero-pads the rows and columns of a rank-4 `x`.

    Raises:
      ValueError: if `padding` is not 2 pairs of integers, or for an unknown data format.
    """
    if len(padding) != 2 or len(padding[0]) != 2 or len(padding[1]) != 2:
        raise ValueError(f"Expected `padding` to be a tuple of 2 tuples of 2 integers. Received: padding={padding}")
    pairs = [list(p) for p in padding]
    pattern = [[0, 0], [0, 0]] + pairs if _data_format(data_format) == "channels_first" else [[0, 0]] + pairs + [[0, 0]]
    return tf.pad(x, pattern)


def spatial_3d_padding(x: TensorLike, padding: tuple = ((1, 1), (1, 1), (1, 1)), data_format: str | None = None) -> Any:
    """Zero-pads the depth, rows and columns of a rank-5 `x`.

    Raises:
      ValueError: if `padding` is not 3 pairs of integers, or for an unknown data format.
    """
    if len(padding) != 3 or any(len(p) != 2 for p in padding):
        raise ValueError(f"Expected `padding` to be a tuple of 3 tuples of 2 integers. Received: padding={padding}")
    pairs = [list(p) for p in padding]
    pattern = [[0, 0], [0, 0]] + pairs if _data_format(data_format) == "channels_first" else [[0, 0]] + pairs + [[0, 0]]
    return tf.pad(x, pattern)


def resize_images(
    x: TensorLike, height_factor: int, width_factor: int, data_format: str, interpolation: str = "nearest"
) -> Any:
    """Resizes the images of a rank-4 `x` by integer factors.

    Raises:
      ValueError: for an unknown data format or interpolation.
      NotImplementedError: for `"gaussian"` and `"mitchellcubic"`, which Keras 3
        (and so tapeshim) does not implement.
    """
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Invalid `data_format` argument: {data_format}")
    if interpolation not in _INTERPOLATIONS:
        names = '"' + '", "'.join(_INTERPOLATIONS) + '"'
        raise ValueError(f'`interpolation` argument should be one of: {names}. Received: "{interpolation}".')
    if interpolation in ("gaussian", "mitchellcubic"):
        raise NotImplementedError(
            f"resize_images(interpolation={interpolation!r}) is not supported by tapeshim; "
            "use one of area, bicubic, bilinear, lanczos3, lanczos5, nearest."
        )

    def run(images: Any) -> Any:
        size = (images.shape[1] * height_factor, images.shape[2] * width_factor)
        return _resize(images, size, interpolation=interpolation, data_format="channels_last")

    return _spatial(x, data_format, run)


def resize_volumes(x: TensorLike, depth_factor: int, height_factor: int, width_factor: int, data_format: str) -> Any:
    """Repeats the depth, rows and columns of a rank-5 `x` by integer factors.

    Raises:
      ValueError: for an unknown data format.
    """
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Invalid data_format: {data_format}")
    first = 2 if data_format == "channels_first" else 1
    for offset, factor in enumerate((depth_factor, height_factor, width_factor)):
        x = tf.repeat(x, factor, axis=first + offset)
    return x


# -- CTC -------------------------------------------------------------------------------------------------
def ctc_batch_cost(y_true: Any, y_pred: Any, input_length: Any, label_length: Any) -> Any:
    """CTC loss of each batch element, shape `(batch, 1)`; the last class of `y_pred` is the blank.

    Args:
      y_true: int labels, shape `(batch, max_label_length)`.
      y_pred: softmax outputs, shape `(batch, time, classes)`.
      input_length: shape `(batch, 1)`, the number of steps of each element.
      label_length: shape `(batch, 1)`, the number of labels of each element.
    """
    y_pred = tf.convert_to_tensor(y_pred)
    labels = tf.cast(y_true, tf.int32)
    if labels.shape[0] != y_pred.shape[0]:
        raise ValueError(
            f"Shapes {tuple(labels.shape.as_list())} and {tuple(y_pred.shape.as_list()[:1])} are "
            "incompatible: `y_true` and `y_pred` must have the same batch size."
        )
    label_length = tf.cast(tf.squeeze(label_length, axis=-1), tf.int32)
    input_length = tf.cast(tf.squeeze(input_length, axis=-1), tf.int32)
    log_probabilities = tf.math.log(y_pred + _epsilon())
    losses = _ctc_loss(labels, log_probabilities, label_length, input_length, mask_index=int(y_pred.shape[-1]) - 1)
    return tf.expand_dims(tf.cast(losses, y_pred.dtype), 1)


def ctc_decode(y_pred: Any, input_length: Any, greedy: bool = True, beam_width: int = 100, top_paths: int = 1) -> tuple:
    """Decodes softmax outputs by best path (`greedy`) or beam search; the last class is the blank.

    Returns:
      `(decoded, log_probabilities)`: a list of `top_paths` int64 Tensors of
      shape `(batch, time)` padded with -1, and a float Tensor of shape
      `(batch, top_paths)`.
    """
    y_pred = tf.convert_to_tensor(y_pred)
    log_probabilities = tf.math.log(y_pred + _epsilon())
    decoded, scores = _ctc_decode(
        log_probabilities,
        tf.cast(input_length, tf.int32),
        strategy="greedy" if greedy else "beam_search",
        beam_width=beam_width,
        top_paths=1 if greedy else top_paths,
        mask_index=int(y_pred.shape[-1]) - 1,
    )
    steps = int(y_pred.shape[1])
    paths = []
    for path in tf.unstack(tf.cast(decoded, tf.int64)):
        width = path.shape[1]
        assert width is not None  # tapeshim's shapes are static
        if width < steps:
            path = tf.pad(path, [[0, 0], [0, steps - width]], constant_values=-1)
        paths.append(path[:, :steps])
    return paths, tf.cast(scores, y_pred.dtype)


# -- control flow and gradients ------------------------------------------------------------------------
def switch(
    condition: TensorLike,
    then_expression: TensorLike | Callable[[], Any],
    else_expression: TensorLike | Callable[[], Any],
) -> Any:
    """`then_expression` where `condition` holds, else `else_expression` (either may be a callable).

    A scalar condition chooses one branch (`tf.cond`); a tensor condition
    chooses elementwise, broadcast over the trailing axes of the expressions.

    Raises:
      ValueError: if `condition` has a larger rank than the expressions.
    """
    condition = tf.convert_to_tensor(condition)
    if condition.dtype != tf.bool:
        condition = tf.cast(condition, tf.bool)
    rank = len(condition.shape)
    if not rank:
        then_fn = then_expression if callable(then_expression) else (lambda: then_expression)
        else_fn = else_expression if callable(else_expression) else (lambda: else_expression)
        return tf.cond(condition, then_fn, else_fn)
    then_value = then_expression() if callable(then_expression) else then_expression
    else_value = else_expression() if callable(else_expression) else else_expression
    expression_rank = len(tf.convert_to_tensor(then_value).shape)
    if rank > expression_rank:
        raise ValueError(
            "Rank of `condition` should be less than or equal to rank of `then_expression` and "
            f"`else_expression`. ndim(condition)={rank}, ndim(then_expression)={expression_rank}"
        )
    if rank > 1:
        condition = tf.reshape(condition, condition.shape.as_list() + [1] * (expression_rank - rank))
        condition = tf.logical_and(condition, tf.ones(tf.shape(then_value), tf.bool))
    return tf.where(condition, then_value, else_value)


def map_fn(fn: Callable[[Any], Any], elems: Any, name: str | None = None, dtype: DTypeLike | None = None) -> Any:
    """`fn` applied to each slice of `elems` (a tensor or a nest of them) along axis 0, results stacked."""
    del name, dtype
    flat = [tf.unstack(tf.convert_to_tensor(e)) for e in tf.nest.flatten(elems)]
    results = [fn(tf.nest.pack_sequence_as(elems, [f[i] for f in flat])) for i in range(len(flat[0]))]
    return tf.nest.map_structure(lambda *parts: tf.stack(parts), *results)


def _fold(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any, backwards: bool) -> Any:
    flat = [tf.unstack(tf.convert_to_tensor(e)) for e in tf.nest.flatten(elems)]
    order = list(range(len(flat[0])))
    if backwards:
        order.reverse()
    if initializer is None:
        accumulator = tf.nest.pack_sequence_as(elems, [f[order[0]] for f in flat])
        order = order[1:]
    else:
        accumulator = initializer
    for i in order:
        accumulator = fn(accumulator, tf.nest.pack_sequence_as(elems, [f[i] for f in flat]))
    return accumulator


def foldl(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None, name: str | None = None) -> Any:
    """Reduces `elems` along axis 0 from the first slice: `fn(fn(init, e0), e1)...`."""
    del name
    return _fold(fn, elems, initializer, backwards=False)


def foldr(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None, name: str | None = None) -> Any:
    """Reduces `elems` along axis 0 from the last slice."""
    del name
    return _fold(fn, elems, initializer, backwards=True)


def gradients(loss: Any, variables: Any) -> Any:
    """Symbolic gradients, which TF gives only in graph mode.

    Raises:
      RuntimeError: always, as TF does when executing eagerly; use `tf.GradientTape`.
    """
    del loss, variables
    raise RuntimeError("tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead.")


def name_scope(name: str) -> Any:
    """A context manager that opens the name scope `name`."""
    return tf.name_scope(name)


# -- rnn ---------------------------------------------------------------------------------------------
def _time_major(t: Any) -> Any:
    t = tf.convert_to_tensor(t)
    return tf.transpose(t, [1, 0] + list(range(2, len(t.shape))))


def _select(mask_t: Any, new: Any, old: Any) -> Any:
    new = tf.convert_to_tensor(new)
    while len(mask_t.shape) < len(new.shape):
        mask_t = tf.expand_dims(mask_t, -1)
    return tf.where(mask_t, new, old)


def rnn(
    step_function: Callable[[Any, tuple], tuple],
    inputs: Any,
    initial_states: list,
    go_backwards: bool = False,
    mask: Any = None,
    constants: list | None = None,
    unroll: bool = False,
    input_length: Any = None,
    time_major: bool = False,
    zero_output_for_mask: bool = False,
    return_all_outputs: bool = True,
) -> tuple:
    """Runs `step_function(input_t, states + constants) -> (output_t, new_states)` over the time axis.

    Each step runs as tapeshim ops (so tapes record the whole loop). A masked
    step keeps the previous states and repeats the previous output (zeros with
    `zero_output_for_mask`).

    Returns:
      `(last_output, outputs, new_states)`; `outputs` has a time axis of 1 when
      `return_all_outputs` is False.
    """
    del unroll
    if not time_major:
        inputs = tf.nest.map_structure(_time_major, inputs)
    flat_inputs = [tf.unstack(tf.convert_to_tensor(t)) for t in tf.nest.flatten(inputs)]
    steps = len(flat_inputs[0])
    step_masks: list = [None] * steps
    if mask is not None:
        mask = tf.cast(mask, tf.bool) if tf.convert_to_tensor(mask).dtype != tf.bool else tf.convert_to_tensor(mask)
        if len(mask.shape) == 2:
            mask = tf.expand_dims(mask, -1)
        step_masks = tf.unstack(mask if time_major else _time_major(mask))
    elif input_length is not None and isinstance(input_length, (tf.Tensor, tf.Variable)):
        step_masks = [tf.greater(input_length, t) for t in range(steps)]
        if go_backwards:
            reversed_lengths = tf.reduce_max(input_length, axis=0) - 1 - input_length
            step_masks = [tf.less(reversed_lengths, t) for t in range(steps)][::-1]
    order = list(range(steps))[::-1] if go_backwards else list(range(steps))
    states = tuple(initial_states)
    constant_args = tuple(constants or ())
    outputs: list = []
    previous = None
    for position, t in enumerate(order):
        step_input = tf.nest.pack_sequence_as(inputs, [f[t] for f in flat_inputs])
        output, new_states = step_function(step_input, states + constant_args)
        mask_t = step_masks[t]
        if mask_t is not None:
            flat_output = tf.nest.flatten(output)
            fallback = (
                [zeros_like(o) for o in flat_output]
                if zero_output_for_mask or previous is None
                else tf.nest.flatten(previous)
            )
            output = tf.nest.pack_sequence_as(output, [_select(mask_t, o, f) for o, f in zip(flat_output, fallback)])
            new_states = tf.nest.pack_sequence_as(
                new_states,
                [_select(mask_t, n, s) for n, s in zip(tf.nest.flatten(new_states), tf.nest.flatten(states))],
            )
        states = tuple(new_states) if isinstance(new_states, (list, tuple)) else (new_states,)
        previous = output
        if return_all_outputs or position == steps - 1:
            outputs.append(output)
    stacked = tf.nest.map_structure(lambda *parts: tf.stack(parts), *outputs)
    last_output = tf.nest.map_structure(lambda o: o[-1], stacked)
    if not time_major:
        stacked = tf.nest.map_structure(_time_major, stacked)
    return last_output, stacked, states


__all__ = [
    "batch_normalization",
    "bias_add",
    "conv1d",
    "conv2d",
    "conv2d_transpose",
    "conv3d",
    "ctc_batch_cost",
    "ctc_decode",
    "depthwise_conv2d",
    "foldl",
    "foldr",
    "gradients",
    "map_fn",
    "name_scope",
    "pool2d",
    "pool3d",
    "resize_images",
    "resize_volumes",
    "rnn",
    "separable_conv2d",
    "spatial_2d_padding",
    "spatial_3d_padding",
    "switch",
    "temporal_padding",
]
