"""tf.nn.ctc_greedy_decoder, tf.nn.ctc_beam_search_decoder, tf.nn.ctc_unique_labels, tf.nn.fractional_max_pool
and tf.nn.fractional_avg_pool against real TF: values, SparseTensor parts, dtypes, gradients, traced and errors.

The fractional pools' sequences are random (TF's Philox stream, tapeshim's jax.random), so their bodies report,
for whichever module runs them, the results' dtypes and shapes, whether the pooling sequences obey TF's rule,
and whether the output and the gradient equal a NumPy model of TF's kernels applied to the module's own
sequences; the model is checked against TF by the same comparison.
"""

import numpy as np
import pytest

from oracle import check, check_raises, real_tf

RNG = np.random.default_rng(6)
LOGITS = RNG.normal(size=(7, 4, 5)).astype(np.float32)
TIED_LOGITS = RNG.integers(0, 3, size=(7, 4, 5)).astype(np.float32)  # equal beams and equal maxima
with np.errstate(divide="ignore"):
    IMPOSSIBLE_LOGITS = np.log(RNG.integers(0, 3, size=(7, 4, 5)).astype(np.float32))  # -inf logits
LENGTHS = np.array([7, 4, 0, 6], np.int32)


def _parts(sparse):
    return sparse.indices, sparse.values, sparse.dense_shape


def _decoded(result):
    """A decoder's `(decoded, log_probabilities)` as tensors: each SparseTensor's parts, then the scores."""
    decoded, scores = result
    return [_parts(sparse) for sparse in decoded], scores


# -- ctc_greedy_decoder -----------------------------------------------------------------------------------
@pytest.mark.parametrize("logits", (LOGITS, TIED_LOGITS, IMPOSSIBLE_LOGITS), ids=("normal", "ties", "impossible"))
@pytest.mark.parametrize("merge_repeated", (True, False))
@pytest.mark.parametrize("blank_index", (None, 0, 2, -2))
@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_ctc_greedy_decoder_values(logits, merge_repeated, blank_index, dtype):
    def body(tf):
        x = tf.constant(logits, getattr(tf, dtype))
        return _decoded(tf.nn.ctc_greedy_decoder(x, LENGTHS, merge_repeated=merge_repeated, blank_index=blank_index))

    check(body)


def test_ctc_greedy_decoder_conversions_and_lengths():
    # numpy logits become float32 (TF's preferred dtype); lengths convert to int32. (Not numpy float64 logits:
    # TF's eager fast path keeps them float64 on some calls and its fallback makes them float32 on others.)
    check(lambda tf: _decoded(tf.nn.ctc_greedy_decoder(LOGITS, LENGTHS.astype(np.int64))))
    check(lambda tf: _decoded(tf.nn.ctc_greedy_decoder(TIED_LOGITS.astype(np.int32), [1, 2, 3, 7])))
    check(lambda tf: _decoded(tf.nn.ctc_greedy_decoder(LOGITS.astype(np.float16), [-1, 0, 7, 2], blank_index=1.0)))
    check(lambda tf: _decoded(tf.nn.ctc_greedy_decoder(LOGITS.tolist(), tf.constant(LENGTHS))))


def test_ctc_greedy_decoder_has_no_gradient_and_runs_in_function():
    def taped(tf):
        x = tf.constant(LOGITS)
        with tf.GradientTape() as tape:
            tape.watch(x)
            decoded, scores = tf.nn.ctc_greedy_decoder(x, LENGTHS)
        return _parts(decoded[0]), scores, tape.gradient(scores, x)

    check(taped)

    def traced(tf):
        fn = tf.function(lambda x, n: _decoded(tf.nn.ctc_greedy_decoder(x, n, blank_index=0)))
        return fn(tf.constant(TIED_LOGITS), tf.constant(LENGTHS)), fn(tf.constant(LOGITS), tf.constant(LENGTHS))

    check(traced)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.nn.ctc_greedy_decoder(LOGITS, [8, 1, 1, 1]),
        lambda tf: tf.nn.ctc_greedy_decoder(LOGITS, [1, 1, 1]),
        lambda tf: tf.nn.ctc_greedy_decoder(LOGITS, [[1, 1, 1, 1]]),
        lambda tf: tf.nn.ctc_greedy_decoder(LOGITS[0], [1, 1, 1, 1]),
        lambda tf: tf.nn.ctc_greedy_decoder(LOGITS[:0], [0, 0, 0, 0]),
        lambda tf: tf.nn.ctc_greedy_decoder(LOGITS[:, :, :0], [0, 0, 0, 0]),
        lambda tf: tf.nn.ctc_greedy_decoder(LOGITS, LENGTHS, blank_index=5),
        lambda tf: tf.nn.ctc_greedy_decoder(LOGITS, LENGTHS, blank_index=-6),
        lambda tf: tf.nn.ctc_greedy_decoder(LOGITS, LENGTHS, blank_index="a"),
        lambda tf: tf.nn.ctc_greedy_decoder(LOGITS, LENGTHS, merge_repeated=1),
        lambda tf: tf.nn.ctc_greedy_decoder(tf.constant(LOGITS, tf.float16), LENGTHS),
        lambda tf: tf.nn.ctc_greedy_decoder(tf.constant(LOGITS.astype(np.int32)), LENGTHS),
        lambda tf: tf.nn.ctc_greedy_decoder(LOGITS, tf.constant(LENGTHS, tf.int64)),
        lambda tf: tf.nn.ctc_greedy_decoder(LOGITS, [1.0, 2.0, 3.0, 4.0]),
    ],
)
def test_ctc_greedy_decoder_errors(body):
    check_raises(body)


def test_ctc_greedy_decoder_errors_while_traced():
    check_raises(lambda tf: tf.function(lambda x: tf.nn.ctc_greedy_decoder(x, [1, 1, 1, 1]))(tf.constant(LOGITS[0])))
    check_raises(lambda tf: tf.function(lambda x: tf.nn.ctc_greedy_decoder(x, [1, 1]))(tf.constant(LOGITS)))
    check_raises(lambda tf: tf.function(lambda x: tf.nn.ctc_greedy_decoder(x, [9, 1, 1, 1]))(tf.constant(LOGITS)))


# -- ctc_beam_search_decoder ------------------------------------------------------------------------------
BEAMS = [(1, 1), (2, 2), (3, 1), (5, 3), (8, 5), (100, 1), (100, 4)]


@pytest.mark.parametrize("logits", (LOGITS, TIED_LOGITS, IMPOSSIBLE_LOGITS), ids=("normal", "ties", "impossible"))
@pytest.mark.parametrize("beam_width, top_paths", BEAMS)
@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_ctc_beam_search_decoder_values(logits, beam_width, top_paths, dtype):
    lengths = np.array([7, 4, 3, 6], np.int32)  # (every sequence long enough for top_paths prefixes)

    def body(tf):
        x = tf.constant(logits, getattr(tf, dtype))
        return _decoded(tf.nn.ctc_beam_search_decoder(x, lengths, beam_width=beam_width, top_paths=top_paths))

    check(body)


@pytest.mark.parametrize("seed", range(4))
def test_ctc_beam_search_decoder_wide_beams_keep_tfs_order(seed):
    # beams of equal probability, more than 16 of them (std::sort's introsort, not only its insertion sort),
    # and full beams (TopN's heap)
    rng = np.random.default_rng(seed)
    tied = rng.integers(0, 2, size=(9, 2, 7)).astype(np.float32)
    for width, top in ((40, 12), (11, 11), (6, 3)):
        decode = lambda tf, w=width, n=top: tf.nn.ctc_beam_search_decoder(tied, [9, 8], beam_width=w, top_paths=n)  # noqa: E731
        check(lambda tf, decode=decode: _decoded(decode(tf)))


def test_ctc_beam_search_decoder_defaults_and_conversions():
    check(lambda tf: _decoded(tf.nn.ctc_beam_search_decoder(LOGITS, LENGTHS)))
    check(lambda tf: _decoded(tf.nn.ctc_beam_search_decoder(LOGITS.astype(np.float16), [7, 1, -1, 2], 4.0, 1)))
    check(lambda tf: _decoded(tf.nn.ctc_beam_search_decoder(LOGITS[:, :, :1], [3, 2, 1, 0])))  # only blanks
    check(lambda tf: _decoded(tf.nn.ctc_beam_search_decoder(LOGITS, LENGTHS, tf.constant(3), tf.constant(1))))


def test_ctc_beam_search_decoder_has_no_gradient_and_runs_in_function():
    def taped(tf):
        x = tf.constant(LOGITS)
        with tf.GradientTape() as tape:
            tape.watch(x)
            decoded, scores = tf.nn.ctc_beam_search_decoder(x, LENGTHS, beam_width=3)
        return _parts(decoded[0]), scores, tape.gradient(scores, x)

    check(taped)

    def traced(tf):
        fn = tf.function(lambda x, n: _decoded(tf.nn.ctc_beam_search_decoder(x, n, beam_width=4, top_paths=2)))
        return fn(tf.constant(TIED_LOGITS), tf.constant([7, 4, 3, 6])), fn(tf.constant(LOGITS), tf.constant([2] * 4))

    check(traced)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.nn.ctc_beam_search_decoder(LOGITS, LENGTHS, beam_width=2, top_paths=3),
        lambda tf: tf.nn.ctc_beam_search_decoder(LOGITS, LENGTHS, beam_width=0),
        lambda tf: tf.nn.ctc_beam_search_decoder(LOGITS, LENGTHS, top_paths=0),
        lambda tf: tf.nn.ctc_beam_search_decoder(LOGITS, LENGTHS, beam_width="a"),
        lambda tf: tf.nn.ctc_beam_search_decoder(LOGITS, LENGTHS, top_paths=2),  # a length-0 sequence
        lambda tf: tf.nn.ctc_beam_search_decoder(LOGITS, [1, 1, 1, 1], top_paths=6),  # fewer prefixes
        lambda tf: tf.nn.ctc_beam_search_decoder(LOGITS, [8, 1, 1, 1]),
        lambda tf: tf.nn.ctc_beam_search_decoder(LOGITS, [1, 1]),
        lambda tf: tf.nn.ctc_beam_search_decoder(LOGITS, [[1, 1, 1, 1]]),
        lambda tf: tf.nn.ctc_beam_search_decoder(LOGITS[0], [1, 1, 1, 1]),
        lambda tf: tf.nn.ctc_beam_search_decoder(LOGITS[:0], [0, 0, 0, 0]),
        lambda tf: tf.nn.ctc_beam_search_decoder(tf.constant(LOGITS, tf.float16), LENGTHS),
        lambda tf: tf.nn.ctc_beam_search_decoder(tf.constant(LOGITS, tf.complex64), LENGTHS),
        lambda tf: tf.nn.ctc_beam_search_decoder(LOGITS, tf.constant(LENGTHS, tf.int64)),
    ],
)
def test_ctc_beam_search_decoder_errors(body):
    check_raises(body)


def test_ctc_beam_search_decoder_errors_while_traced():
    check_raises(lambda tf: tf.function(lambda x: tf.nn.ctc_beam_search_decoder(x, [1, 1]))(tf.constant(LOGITS)))
    check_raises(lambda tf: tf.function(lambda x: tf.nn.ctc_beam_search_decoder(x, [1]))(tf.constant(LOGITS[0])))
    check_raises(lambda tf: tf.function(lambda x: tf.nn.ctc_beam_search_decoder(x, [9] * 4))(tf.constant(LOGITS)))


# -- ctc_unique_labels ------------------------------------------------------------------------------------
LABELS = np.array([[3, 4, 4, 3, 0, 0], [1, 2, 0, 0, 0, 0], [5, 5, 5, 5, 5, 5], [2, 7, 1, 7, 2, 9]])


@pytest.mark.parametrize("dtype", ("int32", "int64", "float32", "uint8", "int16"))
def test_ctc_unique_labels_values(dtype):
    check(lambda tf: tf.nn.ctc_unique_labels(tf.constant(LABELS, getattr(tf, dtype))))


def test_ctc_unique_labels_other_inputs_and_in_function():
    check(lambda tf: tf.nn.ctc_unique_labels(LABELS.tolist()))
    check(lambda tf: tf.nn.ctc_unique_labels([[True, False, True]]))
    check(lambda tf: tf.nn.ctc_unique_labels(np.array([[1.5, -0.5, 1.5, np.nan, np.nan]], np.float32)))
    check(lambda tf: tf.nn.ctc_unique_labels(np.zeros([0, 3], np.int32)))
    check(lambda tf: tf.nn.ctc_unique_labels(np.zeros([2, 0], np.int32)))
    check(lambda tf: tf.function(tf.nn.ctc_unique_labels)(tf.constant(LABELS)))


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.nn.ctc_unique_labels([3, 4]),
        lambda tf: tf.nn.ctc_unique_labels([[[3, 4]]]),
        lambda tf: tf.nn.ctc_unique_labels([["a", "b"]]),
    ],
)
def test_ctc_unique_labels_errors(body):
    check_raises(body)


# -- fractional pools -------------------------------------------------------------------------------------
def _windows(sequence, size, overlapping):
    return [(int(a), int(min(b if overlapping else b - 1, size - 1))) for a, b in zip(sequence[:-1], sequence[1:])]


def _reference(x, rows, cols, overlapping, average, upstream):
    """TF's FractionalMaxPool / FractionalAvgPool and their gradient kernels, for the given sequences."""
    n, h, w, c = x.shape
    dtype = x.dtype
    out = np.zeros((n, len(rows) - 1, len(cols) - 1, c), dtype)
    grad = np.zeros(x.shape, np.float64 if average else dtype)
    with np.errstate(over="ignore"):
        for b in range(n):
            for i, (r0, r1) in enumerate(_windows(rows, h, overlapping)):
                for j, (c0, c1) in enumerate(_windows(cols, w, overlapping)):
                    cells = [(y, z) for y in range(r0, r1 + 1) for z in range(c0, c1 + 1)]  # (row-major)
                    if average:
                        total = np.zeros(c, dtype)
                        for y, z in cells:
                            total = total + x[b, y, z]
                        if np.issubdtype(dtype, np.integer):  # C's division truncates toward 0
                            out[b, i, j] = np.sign(total) * (np.abs(total) // len(cells))
                        else:
                            out[b, i, j] = total / dtype.type(len(cells))
                        if upstream is not None:
                            for y, z in cells:
                                grad[b, y, z] += upstream[b, i, j].astype(np.float64) / len(cells)
                        continue
                    for d in range(c):
                        best = cells[0]
                        for y, z in cells[1:]:
                            if x[b, best[0], best[1], d] < x[b, y, z, d]:
                                best = (y, z)
                        lowest = np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min
                        out[b, i, j, d] = max(x[b, best[0], best[1], d], lowest)
                        if upstream is not None:
                            grad[b, best[0], best[1], d] += upstream[b, i, j, d]
    return out, grad.astype(dtype)


def _follows_tfs_rule(sequence, size, pseudo_random):
    """Whether a pooling sequence is one TF's `GeneratePoolingSequence` can give."""
    sequence = [int(v) for v in sequence]
    cells = len(sequence) - 1
    k = size // cells
    gaps = np.diff(sequence)
    if sequence[0] != 0 or sequence[-1] != size or not set(gaps.tolist()) <= {k, k + 1}:
        return False
    if not pseudo_random:
        return int(np.sum(gaps == k + 1)) == size % cells
    # boundaries ceil(alpha * (i + u)) - 1 for one u in [0, u_max): the u each boundary allows must meet
    alpha = size / cells
    low, high = 0.0, min((k + 2) / alpha - 1, (size + 1 - k) / alpha - (cells - 1))
    for i in range(1, cells):
        low = max(low, sequence[i] / alpha - i)
        high = min(high, (sequence[i] + 1) / alpha - i)
    return low <= high


def _pool_report(tf, op, x, ratio, upstream=None, **options):
    """What a fractional pool gives, described independently of its random sequences."""
    value = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(value)
        output, rows, cols = getattr(tf.nn, op)(value, ratio, **options)
    grad = None
    if upstream is not None:
        grad = tape.gradient(output, value, output_gradients=tf.constant(upstream)).numpy()
    rows_, cols_ = rows.numpy(), cols.numpy()
    overlapping = options.get("overlapping", False)
    expected, expected_grad = _reference(x, rows_, cols_, overlapping, op == "fractional_avg_pool", upstream)
    pseudo = options.get("pseudo_random", False)
    return {
        "types": [t.dtype for t in (output, rows, cols)],
        "shapes": [tuple(t.shape) for t in (output, rows, cols)],
        "rows follow TF's rule": _follows_tfs_rule(rows_, x.shape[1], pseudo),
        "cols follow TF's rule": _follows_tfs_rule(cols_, x.shape[2], pseudo),
        "output is the kernel's": bool(np.array_equal(output.numpy(), expected)),
        "gradient is the kernel's": None if grad is None else bool(np.array_equal(grad, expected_grad)),
    }


def _check_report(body):
    """`check(body)` for a body returning a report, and every yes/no in it (the same in TF's) is yes."""
    report = check(body)
    flags = [value for value in report.values() if isinstance(value, bool)]
    flags += [v for value in report.values() if isinstance(value, list) for v in value if isinstance(v, bool)]
    assert flags and all(flags), report


POOL_IMAGE = RNG.normal(size=(2, 11, 9, 3)).astype(np.float32)
POOL_TIES = RNG.integers(-2, 2, size=(2, 11, 9, 3)).astype(np.float32)  # equal maxima: TF's element


@pytest.mark.parametrize("op", ("fractional_max_pool", "fractional_avg_pool"))
@pytest.mark.parametrize("ratio", ([1.0, 1.44, 1.73, 1.0], [1.0, 2.6, 1.1, 1.0], [1.0, 1.0, 2.0, 1.0]))
@pytest.mark.parametrize("pseudo_random", (False, True))
@pytest.mark.parametrize("overlapping", (False, True))
def test_fractional_pool_values_and_gradients(op, ratio, pseudo_random, overlapping):
    options = {"pseudo_random": pseudo_random, "overlapping": overlapping, "seed": 7}
    for image in (POOL_IMAGE, POOL_TIES):
        upstream = RNG.normal(size=(2, int(11 / ratio[1]), int(9 / ratio[2]), 3)).astype(np.float32)
        _check_report(lambda tf, x=image, g=upstream: _pool_report(tf, op, x, ratio, g, **options))


@pytest.mark.parametrize("op", ("fractional_max_pool", "fractional_avg_pool"))
@pytest.mark.parametrize("dtype", ("float64", "int32", "int64"))
def test_fractional_pool_dtypes(op, dtype):
    image = (POOL_TIES * 7 + 3).astype(dtype)
    upstream = RNG.normal(size=(2, 7, 6, 3)).astype(dtype) if dtype == "float64" else None
    for pseudo in (False, True):
        _check_report(
            lambda tf, p=pseudo: _pool_report(tf, op, image, [1.0, 1.5, 1.5, 1.0], upstream, pseudo_random=p, seed=3)
        )


def test_fractional_max_pool_ratio_forms_and_seeds():
    for ratio in (1.5, (1.0, 2.0, 1.3, 1.0), [1, 1], 2):
        _check_report(lambda tf, r=ratio: _pool_report(tf, "fractional_max_pool", POOL_IMAGE, r, overlapping=True))
    _check_report(lambda tf: _pool_report(tf, "fractional_avg_pool", POOL_IMAGE, (1, 1.2, 1.9, 1), pseudo_random=True))
    # an all -inf window: TF's maximum starts at the dtype's lowest value
    _check_report(lambda tf: _pool_report(tf, "fractional_max_pool", np.full([1, 4, 4, 1], -np.inf, np.float32), 2.0))


def _sequences(tf, op, seed, pseudo_random, calls=6):
    image = tf.constant(RNG.normal(size=(1, 31, 29, 1)).astype(np.float32))
    return [
        [t.numpy().tolist() for t in getattr(tf.nn, op)(image, [1.0, 1.6, 1.3, 1.0], pseudo_random, False, seed)[1:]]
        for _ in range(calls)
    ]


@pytest.mark.parametrize("op", ("fractional_max_pool", "fractional_avg_pool"))
@pytest.mark.parametrize("pseudo_random", (False, True))
def test_fractional_pool_seeds(op, pseudo_random):
    def body(tf):
        fixed = _sequences(tf, op, 5, pseudo_random)
        fresh = _sequences(tf, op, 0, pseudo_random)
        return {
            "a seed repeats its sequences": all(s == fixed[0] for s in fixed),
            "seed 0 draws new ones": any(s != fresh[0] for s in fresh),
            "two seeds differ": _sequences(tf, op, 6, pseudo_random, 1)[0] != fixed[0],
        }

    _check_report(body)


def test_fractional_pool_in_function():
    upstream = RNG.normal(size=(2, 7, 5, 3)).astype(np.float32)

    def body(tf):
        def fn(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                output, rows, cols = tf.nn.fractional_max_pool(x, [1.0, 1.5, 1.7, 1.0], overlapping=True, seed=2)
            return output, rows, cols, tape.gradient(output, x, output_gradients=tf.constant(upstream))

        output, rows, cols, grad = tf.function(fn)(tf.constant(POOL_TIES))
        expected, expected_grad = _reference(POOL_TIES, rows.numpy(), cols.numpy(), True, False, upstream)
        return {
            "shapes": [tuple(t.shape) for t in (output, rows, cols, grad)],
            "values": [bool(np.array_equal(output.numpy(), expected)), bool(np.array_equal(grad, expected_grad))],
            "rule": _follows_tfs_rule(rows.numpy(), 11, False) and _follows_tfs_rule(cols.numpy(), 9, False),
        }

    _check_report(body)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.nn.fractional_max_pool(POOL_IMAGE, [1.5, 2.0]),
        lambda tf: tf.nn.fractional_max_pool(POOL_IMAGE, [1.0, 1.5, 2.0]),
        lambda tf: tf.nn.fractional_max_pool(POOL_IMAGE, [1.0, 1.5, 2.0, 1.0, 1.0]),
        lambda tf: tf.nn.fractional_max_pool(POOL_IMAGE, [1.0, 0.5, 2.0, 1.0]),
        lambda tf: tf.nn.fractional_max_pool(POOL_IMAGE, [2.0, 1.5, 2.0, 1.0]),
        lambda tf: tf.nn.fractional_max_pool(POOL_IMAGE, 0.5),
        lambda tf: tf.nn.fractional_max_pool(POOL_IMAGE, "a"),
        lambda tf: tf.nn.fractional_max_pool(POOL_IMAGE, np.array([1.0, 1.5, 1.5, 1.0])),
        lambda tf: tf.nn.fractional_max_pool(POOL_IMAGE, [1.0, 12.0, 2.0, 1.0]),
        lambda tf: tf.nn.fractional_max_pool(POOL_IMAGE[:0], 1.5),
        lambda tf: tf.nn.fractional_max_pool(POOL_IMAGE[0], 1.5),
        lambda tf: tf.nn.fractional_max_pool(POOL_IMAGE.astype(np.float16), 1.5),
        lambda tf: tf.nn.fractional_max_pool(POOL_IMAGE.astype(np.uint8), 1.5),
        lambda tf: tf.nn.fractional_avg_pool(POOL_IMAGE, 1.5),
        lambda tf: tf.nn.fractional_avg_pool(POOL_IMAGE, [1.5, 2.0]),
        lambda tf: tf.nn.fractional_avg_pool(POOL_IMAGE, [1.0, 1.5, 2.0, 1.0, 1.0]),
        lambda tf: tf.nn.fractional_avg_pool(POOL_IMAGE, [1.0, 0.5, 2.0, 1.0]),
        lambda tf: tf.nn.fractional_avg_pool(POOL_IMAGE, [2.0, 1.5, 2.0, 1.0]),
        lambda tf: tf.nn.fractional_avg_pool(POOL_IMAGE, [1.0, 1.5, 2.0, 3.0]),
        lambda tf: tf.nn.fractional_avg_pool(POOL_IMAGE, [1.0, 1.5, 10.0, 1.0]),
        lambda tf: tf.nn.fractional_avg_pool(POOL_IMAGE[0], [1.0, 1.5, 2.0, 1.0]),
        lambda tf: tf.nn.fractional_avg_pool(tf.constant(POOL_IMAGE, tf.bfloat16), [1.0, 1.5, 2.0, 1.0]),
    ],
)
def test_fractional_pool_errors(body):
    check_raises(body)


def test_fractional_pool_rank_error_while_traced():
    check_raises(lambda tf: tf.function(lambda x: tf.nn.fractional_max_pool(x, 1.5))(tf.constant(POOL_IMAGE[0])))


def test_reference_model_agrees_with_tf_kernels_on_fixed_sequences():
    # the gradient kernels, called directly on sequences chosen here, equal the NumPy model (the model the
    # differential cases above hold both modules to)
    gen = real_tf.raw_ops
    x = POOL_TIES[:1]
    rows, cols = np.array([0, 2, 3, 5, 8, 11]), np.array([0, 1, 3, 5, 7, 9])
    upstream = RNG.normal(size=(1, 5, 5, 3)).astype(np.float32)
    for overlapping in (False, True):
        out, _ = _reference(x, rows, cols, overlapping, False, None)
        _, grad = _reference(x, rows, cols, overlapping, False, upstream)
        tf_grad = gen.FractionalMaxPoolGrad(
            orig_input=x,
            orig_output=out,
            out_backprop=upstream,
            row_pooling_sequence=rows,
            col_pooling_sequence=cols,
            overlapping=overlapping,
        )
        np.testing.assert_array_equal(tf_grad.numpy(), grad)
        _, grad = _reference(x, rows, cols, overlapping, True, upstream)
        tf_grad = gen.FractionalAvgPoolGrad(
            orig_input_tensor_shape=x.shape,
            out_backprop=upstream,
            row_pooling_sequence=rows,
            col_pooling_sequence=cols,
            overlapping=overlapping,
        )
        np.testing.assert_array_equal(tf_grad.numpy(), grad)
