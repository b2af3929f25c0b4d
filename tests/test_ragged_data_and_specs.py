"""Ragged tensors where TF users meet them outside plain ops, against real TensorFlow: `tf.RaggedTensorSpec`
(construction, printing, comparison, compatibility), `tf.type_spec_from_value`, ragged elements of `tf.data`
(slices, batches, `ragged_batch`, `map` returning RaggedTensors, `from_generator`, iteration eagerly and inside a
function), `tf.function` with RaggedTensor arguments and `input_signature=[tf.RaggedTensorSpec(...)]`, and
`tf.experimental.DynamicRaggedShape` (what `tf.shape(rt)` gives in TF).

Every body runs with `tensorflow` and with `tapeshim`; results are compared by `_d`: a RaggedTensor as its type,
dtype, ragged rank, shape, nested row splits and flat values (a Tensor stays a Tensor, so a Tensor where TF gives a
RaggedTensor fails), a spec or shape by its printed form.
"""

import pytest
from ragged_describe import describe as _d

import tapeshim
from oracle import check, check_raises, real_tf
from tapeshim._src import ragged_shape


def _rt(tf):
    return tf.ragged.constant([[1.0, 2.0], [3.0], [4.0, 5.0, 6.0], [7.0]])


def _rt2(tf):
    return tf.ragged.constant([[[1.0, 2.0], [3.0]], [[4.0]], [[5.0], [], [6.0]]])


def _rt_uniform(tf):
    return tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]], []], ragged_rank=1)


# -- tf.RaggedTensorSpec -------------------------------------------------------------------------------------
SPECS = {
    "default_rank2": lambda tf: tf.RaggedTensorSpec([None, None], tf.float32),
    "uniform_inner_int32_splits": lambda tf: tf.RaggedTensorSpec([2, None, 3], tf.int32, 1, tf.int32),
    "unknown_shape_rank2": lambda tf: tf.RaggedTensorSpec(None, tf.int32, 2),
    "ragged_rank0": lambda tf: tf.RaggedTensorSpec([None], tf.int32),
    "strings": lambda tf: tf.RaggedTensorSpec(tf.TensorShape([3, None, 2]), tf.string, 1),
    "float_splits_accepted": lambda tf: tf.RaggedTensorSpec([None, None], tf.int32, row_splits_dtype=tf.float32),
    "flat_values_spec": lambda tf: tf.RaggedTensorSpec(
        [None, None], tf.int32, flat_values_spec=tf.TensorSpec([None], tf.int32)
    ),
    "flat_values_spec_dtype_none": lambda tf: tf.RaggedTensorSpec(
        [None, None], None, flat_values_spec=tf.TensorSpec([None], tf.int64)
    ),
    "str": lambda tf: str(tf.RaggedTensorSpec([None, None])),
}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_spec_printed(name):
    check(lambda tf: _d(SPECS[name](tf)) if name != "str" else SPECS[name](tf))


SPEC_ERRORS = {
    "no_rank": lambda tf: tf.RaggedTensorSpec(),
    "ragged_rank_too_big": lambda tf: tf.RaggedTensorSpec([2, None, 3], tf.int32, 3),
    "ragged_rank_float": lambda tf: tf.RaggedTensorSpec([None, None], tf.int32, 1.0),
    "no_dtype": lambda tf: tf.RaggedTensorSpec([None, None], None),
    "dtype_not_flat_values": lambda tf: tf.RaggedTensorSpec(
        [None, None], tf.float32, flat_values_spec=tf.TensorSpec([None], tf.int32)
    ),
}


@pytest.mark.parametrize("name", sorted(SPEC_ERRORS))
def test_spec_errors(name):
    check_raises(SPEC_ERRORS[name], messages=name != "no_rank")


def test_spec_properties():
    def body(tf):
        s = tf.RaggedTensorSpec([None, None, 2], tf.int64, 1, tf.int32)
        fields = [
            getattr(s, name) for name in ("shape", "dtype", "ragged_rank", "row_splits_dtype", "flat_values_spec")
        ]
        rank0 = tf.RaggedTensorSpec([None], ragged_rank=0)
        return fields, s.value_type.__name__, rank0.value_type.__name__, s.value_type is tf.RaggedTensor

    check(body)


FROM_VALUE = {
    "rank2": lambda tf: tf.RaggedTensorSpec.from_value(_rt(tf)),
    "rank3": lambda tf: tf.RaggedTensorSpec.from_value(_rt2(tf)),
    "uniform_inner": lambda tf: tf.RaggedTensorSpec.from_value(_rt_uniform(tf)),
    "int32_splits": lambda tf: tf.RaggedTensorSpec.from_value(tf.ragged.constant([[1], []], row_splits_dtype=tf.int32)),
    "type_spec_from_value": lambda tf: tf.type_spec_from_value(_rt2(tf)),
    "type_spec_from_value_tensor": lambda tf: tf.type_spec_from_value(tf.constant([1, 2])),
    "type_spec_from_value_python": lambda tf: tf.type_spec_from_value(3),
    "type_spec_from_value_list": lambda tf: tf.type_spec_from_value([[1.0], [2.0]]),
    "type_spec_from_value_string": lambda tf: tf.type_spec_from_value("a"),
    "_type_spec": lambda tf: _rt(tf)._type_spec,
    "with_row_splits_dtype": lambda tf: tf.type_spec_from_value(_rt2(tf).with_row_splits_dtype(tf.int32)),
}


@pytest.mark.parametrize("name", sorted(FROM_VALUE))
def test_spec_from_value(name):
    check(lambda tf: _d(FROM_VALUE[name](tf)))


def test_with_row_splits_dtype():
    check(lambda tf: _d(_rt2(tf).with_row_splits_dtype(tf.int32)))
    check_raises(lambda tf: _rt(tf).with_row_splits_dtype(tf.float32), messages=True)


def test_spec_equality_and_hash():
    def body(tf):
        s, spec = tf.RaggedTensorSpec([None, None], tf.float32), tf.RaggedTensorSpec
        same = [s == spec([None, None]), s == spec([None, None], ragged_rank=1), s != spec([None, None, None])]
        other = [s == spec([None, None], row_splits_dtype=tf.int32), s == spec([3, None]), s == tf.TensorSpec([None])]
        hashed = [hash(s) == hash(spec([None, None])), len({s, spec([None, None]), spec([2, None])})]
        return same, other, hashed

    check(body)


COMPATIBLE = {
    "ragged_value": lambda tf, s: s.is_compatible_with(_rt(tf)),
    "deeper_value": lambda tf, s: s.is_compatible_with(_rt2(tf)),
    "narrower_spec": lambda tf, s: tf.RaggedTensorSpec([3, None]).is_compatible_with(s),
    "other_nrows": lambda tf, s: tf.RaggedTensorSpec([2, None]).is_compatible_with(_rt(tf)),
    "dense_tensor": lambda tf, s: s.is_compatible_with(tf.constant([[1.0]])),
    "rank0_dense": lambda tf, s: tf.RaggedTensorSpec([None], tf.float32, 0).is_compatible_with(tf.constant([1.0])),
    "rank0_tensor_spec": lambda tf, s: tf.RaggedTensorSpec([None], tf.float32, 0).is_compatible_with(
        tf.TensorSpec([3])
    ),
    "tensor_spec": lambda tf, s: s.is_compatible_with(tf.TensorSpec([3, 3])),
    "other_dtype": lambda tf, s: s.is_compatible_with(tf.RaggedTensorSpec([None, None], tf.int32)),
    "other_splits_dtype": lambda tf, s: s.is_compatible_with(_rt(tf).with_row_splits_dtype(tf.int32)),
    "python_number": lambda tf, s: s.is_compatible_with(3),
    "tensor_spec_with_ragged": lambda tf, s: tf.TensorSpec([1]).is_compatible_with(s),
    "subtype": lambda tf, s: (
        tf.RaggedTensorSpec([3, None]).is_subtype_of(s),
        s.is_subtype_of(tf.RaggedTensorSpec([3, None])),
    ),
    "common_supertype": lambda tf, s: _d(s.most_specific_common_supertype([tf.RaggedTensorSpec([3, None])])),
    "common_supertype_none": lambda tf, s: s.most_specific_common_supertype([tf.RaggedTensorSpec([3, None], tf.int32)]),
    "compatible_type": lambda tf, s: _d(
        tf.RaggedTensorSpec([2, None]).most_specific_compatible_type(tf.RaggedTensorSpec([3, None]))
    ),
    "compatible_type_same": lambda tf, s: _d(s.most_specific_compatible_type(tf.RaggedTensorSpec([3, None]))),
}


@pytest.mark.parametrize("name", sorted(COMPATIBLE))
def test_spec_compatibility(name):
    check(lambda tf: COMPATIBLE[name](tf, tf.RaggedTensorSpec([None, None], tf.float32)))


@pytest.mark.parametrize(
    "other",
    [
        lambda tf: tf.RaggedTensorSpec([3, None], tf.int32),
        lambda tf: tf.TensorSpec([3, None]),
        lambda tf: tf.RaggedTensorSpec([None, None, None]),
    ],
)
def test_spec_no_compatible_type(other):
    check_raises(lambda tf: tf.RaggedTensorSpec([None, None]).most_specific_compatible_type(other(tf)))


# -- tf.data: sources ------------------------------------------------------------------------------------------
def _elements(ds):
    return _d(list(ds))


def _slices(tf, make=_rt):
    """`from_tensor_slices` of a RaggedTensor (`_rt` by default)."""
    return tf.data.Dataset.from_tensor_slices(make(tf))


SOURCES = {
    "slices_rank2": lambda tf: _slices(tf),
    "slices_rank3": lambda tf: _slices(tf, _rt2),
    "slices_uniform_inner": lambda tf: _slices(tf, _rt_uniform),
    "slices_int32_splits": lambda tf: tf.data.Dataset.from_tensor_slices(_rt2(tf).with_row_splits_dtype(tf.int32)),
    "slices_strings": lambda tf: tf.data.Dataset.from_tensor_slices(tf.ragged.constant([["a", "b"], [], ["c"]])),
    "slices_tuple": lambda tf: tf.data.Dataset.from_tensor_slices((_rt(tf), tf.range(4))),
    "slices_dict": lambda tf: tf.data.Dataset.from_tensor_slices({"x": _rt2(tf), "y": tf.constant([1, 2, 3])}),
    "slices_with_strings": lambda tf: tf.data.Dataset.from_tensor_slices(
        (tf.ragged.constant([["a", "b"], [], ["c"]]), tf.constant(["x", "y", "z"]), tf.constant([[1], [2], [3]]))
    ),
    "tensors": lambda tf: tf.data.Dataset.from_tensors(_rt(tf)),
    "tensors_tuple": lambda tf: tf.data.Dataset.from_tensors((_rt2(tf), tf.constant(1))),
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_source_elements_and_spec(name):
    check(lambda tf: (_d(SOURCES[name](tf).element_spec), _elements(SOURCES[name](tf)), len(SOURCES[name](tf))))


def test_source_errors():
    check_raises(lambda tf: tf.data.Dataset.from_tensor_slices((_rt(tf), tf.range(3))))
    check_raises(lambda tf: tf.data.Dataset.from_tensor_slices([[1, 2], [3]]))


# -- tf.data: transformations -----------------------------------------------------------------------------------
def _lines(tf):
    return tf.data.Dataset.from_tensor_slices(["a b c", "d", "e f", "g h i j", ""])


def _ranges(tf):
    return tf.data.Dataset.range(1, 6).map(lambda x: tf.range(x))


PIPELINES = {
    "batch": lambda tf: _slices(tf).batch(3),
    "batch_drop_remainder": lambda tf: _slices(tf).batch(3, drop_remainder=True),
    "batch_rank3": lambda tf: _slices(tf, _rt2).batch(2),
    "batch_uniform_inner": lambda tf: _slices(tf, _rt_uniform).batch(2),
    "batch_int32_splits": lambda tf: tf.data.Dataset.from_tensor_slices(_rt(tf).with_row_splits_dtype(tf.int32)).batch(
        2
    ),
    "batch_dict": lambda tf: tf.data.Dataset.from_tensor_slices({"a": _rt(tf), "b": tf.range(4)}).batch(3),
    "batch_tensors": lambda tf: tf.data.Dataset.from_tensors(_rt(tf)).repeat(3).batch(2),
    "batch_twice": lambda tf: _slices(tf).batch(2).batch(2),
    "batch_unbatch": lambda tf: _slices(tf).batch(3).unbatch(),
    "batch_unbatch_rank3": lambda tf: _slices(tf, _rt2).batch(2).unbatch(),
    "unbatch_tensors": lambda tf: tf.data.Dataset.from_tensors(_rt2(tf)).unbatch(),
    "ragged_batch": lambda tf: _slices(tf).ragged_batch(3),
    "ragged_batch_int32": lambda tf: _slices(tf).ragged_batch(3, row_splits_dtype=tf.int32),
    "ragged_batch_dense": lambda tf: _ranges(tf).ragged_batch(2),
    "ragged_batch_dense_drop": lambda tf: _ranges(tf).ragged_batch(2, drop_remainder=True),
    "ragged_batch_dense_int32": lambda tf: _ranges(tf).ragged_batch(2, row_splits_dtype=tf.int32),
    "ragged_batch_fixed_shape": lambda tf: tf.data.Dataset.from_tensor_slices(tf.ones([5, 3])).ragged_batch(2),
    "ragged_batch_scalars": lambda tf: tf.data.Dataset.range(3).ragged_batch(2),
    "ragged_batch_rows_vary": lambda tf: tf.data.Dataset.range(3).map(lambda x: tf.fill([x, 2], x)).ragged_batch(2),
    "ragged_batch_columns_vary": lambda tf: tf.data.Dataset.range(3).map(lambda x: tf.fill([2, x], x)).ragged_batch(2),
    "ragged_batch_tuple": lambda tf: tf.data.Dataset.range(3).map(lambda x: (tf.range(x), x)).ragged_batch(2),
    "dense_to_ragged_batch": lambda tf: _ranges(tf).apply(tf.data.experimental.dense_to_ragged_batch(2)),
    "padded_batch_dense": lambda tf: _ranges(tf).padded_batch(2),
    "padded_batch_shapes": lambda tf: _ranges(tf).padded_batch(
        2, padded_shapes=[6], padding_values=tf.constant(-1, tf.int64)
    ),
    "map_split_lines": lambda tf: _lines(tf).map(tf.strings.split),
    "map_split_batched_lines": lambda tf: _lines(tf).batch(2).map(tf.strings.split),
    "map_split_batched_unbatch": lambda tf: _lines(tf).batch(2).map(tf.strings.split).unbatch(),
    "map_split_ragged_batch": lambda tf: _lines(tf).map(tf.strings.split).ragged_batch(2),
    "map_from_tensor": lambda tf: (
        tf.data.Dataset.from_tensor_slices(tf.constant([[1, 0, 0], [2, 3, 0], [4, 0, 0]]))
        .batch(2)
        .map(lambda x: tf.RaggedTensor.from_tensor(x, padding=0))
    ),
    "map_from_tensor_row": lambda tf: tf.data.Dataset.from_tensor_slices(tf.constant([[1, 0, 0], [2, 3, 0]])).map(
        lambda x: tf.RaggedTensor.from_tensor(x[None], padding=0)
    ),
    "map_rows_dense": lambda tf: _slices(tf).map(lambda x: x * 2),
    "map_ragged_to_dense": lambda tf: _slices(tf).batch(3).map(lambda x: tf.reduce_sum(x, axis=1)),
    "map_ragged_parts": lambda tf: (
        _slices(tf).batch(2).map(lambda x: (x.to_tensor(), x.row_lengths(), x.bounding_shape()))
    ),
    "map_ragged_to_ragged": lambda tf: _slices(tf, _rt2).batch(2).map(lambda x: x + 1.0),
    "map_dict": lambda tf: _slices(tf).batch(2).map(lambda x: {"x": x, "n": x.nrows()}),
    "filter_rows": lambda tf: _slices(tf).filter(lambda x: tf.size(x) > 1),
    "filter_batches": lambda tf: _slices(tf).batch(3).filter(lambda x: x.nrows() > 1),
    "take_skip": lambda tf: _slices(tf, _rt2).skip(1).take(1),
    "repeat_cache_prefetch": lambda tf: _slices(tf).batch(2).cache().repeat(2).prefetch(1),
    "concatenate": lambda tf: _slices(tf, _rt2).concatenate(_slices(tf, _rt2)),
    "zip_batch": lambda tf: tf.data.Dataset.zip((_slices(tf), _slices(tf))).batch(2),
    "shuffle_no_reorder": lambda tf: _slices(tf).shuffle(1),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_pipeline_elements_and_spec(name):
    check(lambda tf: (_d(PIPELINES[name](tf).element_spec), _elements(PIPELINES[name](tf))))


def test_pipeline_cardinality_and_reduce():
    def body(tf):
        ds = _slices(tf)
        counts = [ds.cardinality(), ds.batch(3).cardinality(), ds.ragged_batch(3, drop_remainder=True).cardinality()]
        sums = [ds.reduce(0.0, lambda s, x: s + tf.reduce_sum(x)), ds.batch(3).reduce(0.0, lambda s, x: s + x[0, 0])]
        return counts, sums, _d(ds.batch(3).take(1).get_single_element())

    check(body)


def test_as_numpy_iterator():
    check(lambda tf: _d(list(_slices(tf).as_numpy_iterator())))
    check(lambda tf: _d(list(_slices(tf).batch(2).as_numpy_iterator())))
    check(lambda tf: _d(list(_slices(tf, _rt2).as_numpy_iterator())))
    check(lambda tf: _d([tf.ragged.constant([[1.0, 2.0], [3.0, 4.0]]).numpy(), tf.ragged.constant([[[4]]]).numpy()]))


PIPELINE_ERRORS = {
    "padded_batch_ragged": lambda tf: _slices(tf).padded_batch(2),
    "padded_batch_ragged_rank3": lambda tf: _slices(tf, _rt2).padded_batch(2),
    "concatenate_other_ragged_rank": lambda tf: _slices(tf).concatenate(_slices(tf, _rt2)),
    "ragged_batch_size_0": lambda tf: _slices(tf).ragged_batch(0),
    "batch_variable_lengths": lambda tf: list(_ranges(tf).batch(2)),
}


@pytest.mark.parametrize("name", sorted(PIPELINE_ERRORS))
def test_pipeline_errors(name):
    check_raises(PIPELINE_ERRORS[name], messages=name.startswith("padded"))


# -- tf.data: from_generator -----------------------------------------------------------------------------------
def _generated(tf, values, signature=None):
    spec = signature(tf) if signature is not None else tf.RaggedTensorSpec([None, None], tf.float32)
    return tf.data.Dataset.from_generator(lambda: (v(tf) for v in values), output_signature=spec)


def test_from_generator():
    values = [lambda tf: tf.ragged.constant([[1.0, 2.0], [3.0]]), lambda tf: tf.ragged.constant([[1.0]])]
    check(lambda tf: (_d(_generated(tf, values).element_spec), _elements(_generated(tf, values))))
    check(lambda tf: (_d(_generated(tf, values).batch(2).element_spec), _elements(_generated(tf, values).batch(2))))
    check(lambda tf: _elements(_generated(tf, values).ragged_batch(2).unbatch()))


def test_from_generator_tuple_signature():
    def body(tf):
        def gen():
            yield tf.ragged.constant([[1.0, 2.0], [3.0]]), 1
            yield tf.ragged.constant([[4.0]]), 2

        signature = (tf.RaggedTensorSpec([None, None], tf.float32), tf.TensorSpec([], tf.int32))
        ds = tf.data.Dataset.from_generator(gen, output_signature=signature)
        return _d(ds.element_spec), _elements(ds), _elements(ds.batch(2))

    check(body)


GENERATOR_ERRORS = {
    "python_list": lambda tf: [[1.0, 2.0], [3.0]],
    "other_dtype": lambda tf: tf.ragged.constant([[1, 2], [3]]),
    "other_ragged_rank": lambda tf: tf.ragged.constant([[[1.0]]]),
    "dense": lambda tf: tf.constant([[1.0]]),
}


@pytest.mark.parametrize("name", sorted(GENERATOR_ERRORS))
def test_from_generator_errors(name):
    check_raises(lambda tf: list(_generated(tf, [GENERATOR_ERRORS[name]])))


def test_from_generator_ragged_rank0_refuses_dense():
    check_raises(
        lambda tf: list(_generated(tf, [lambda tf: [1.0, 2.0]], lambda tf: tf.RaggedTensorSpec([None], tf.float32, 0)))
    )


# -- tf.data: iteration, eagerly and inside a function -----------------------------------------------------------
def test_iterate_eagerly():
    def body(tf):
        ds = _slices(tf, _rt2)
        seen = [_d(x) for x in ds]
        it = iter(ds.batch(2))
        first, second = next(it), it.get_next()
        rest = it.get_next_as_optional()
        return seen, _d(first), _d(second), rest.has_value()

    check(body)


def test_for_loop_inside_function():
    def body(tf):
        ds = _slices(tf)

        @tf.function
        def total(d):
            s = tf.constant(0.0)
            for x in d:
                s += tf.reduce_sum(x)
            return s

        @tf.function
        def lengths():
            s = tf.constant(0, tf.int64)
            for x in ds.batch(3):
                s += tf.reduce_sum(x.row_lengths())
            return s

        @tf.function
        def first_batch():
            return tf.reduce_sum(next(iter(ds.batch(3))), axis=1)

        @tf.function
        def reduced(d):
            return d.reduce(tf.constant(0.0), lambda s, x: s + tf.reduce_max(x))

        return total(ds), total(ds.batch(2)), lengths(), first_batch(), reduced(ds.batch(3))

    check(body)


def test_next_inside_function_of_outer_iterator_says_what_to_do():
    # (TF pulls the ragged element inside the function; tapeshim's per-call inputs are dense tensors: it
    # refuses with the rewrite, a documented difference)
    import tapeshim as tf

    it = iter(_slices(tf).batch(2))

    @tf.function
    def step():
        return tf.reduce_sum(next(it))

    with pytest.raises(NotImplementedError, match="iterate the dataset inside the function"):
        step()


# -- tf.function with ragged arguments ---------------------------------------------------------------------------
def _other(tf):
    return tf.ragged.constant([[1.0], [3.0, 4.0, 5.0, 6.0]])


def test_input_signature_traces_once():
    def body(tf):
        @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.float32)])
        def f(x):
            return tf.reduce_sum(x, axis=1), x.row_lengths(), x.to_tensor()

        results = [f(_rt(tf)), f(_other(tf)), f(_rt(tf) * 2.0)]
        return results, f.experimental_get_tracing_count(), _d(tuple(f.input_signature))

    check(body)


def test_input_signature_with_tensor_and_nest():
    def body(tf):
        @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.float32), tf.TensorSpec([], tf.float32)])
        def f(x, scale):
            return tf.reduce_sum(x, axis=1) * scale

        @tf.function(input_signature=[(tf.RaggedTensorSpec([None, None], tf.float32), tf.TensorSpec([None]))])
        def g(pair):
            x, y = pair
            return tf.reduce_sum(x, axis=1) + y

        pair = (_rt(tf), tf.constant([1.0, 2.0, 3.0, 4.0]))
        return f(_rt(tf), 2.0), f(x=_other(tf), scale=3.0), g(pair), f.experimental_get_tracing_count()

    check(body)


SIGNATURES = {
    "rank3": (lambda tf: tf.RaggedTensorSpec([None, None, None], tf.float32, 2), _rt2),
    "uniform_inner": (lambda tf: tf.RaggedTensorSpec([None, None, 2], tf.int32, 1), _rt_uniform),
    "known_rows": (lambda tf: tf.RaggedTensorSpec([4, None], tf.float32), _rt),
    "int32_splits": (
        lambda tf: tf.RaggedTensorSpec([None, None], tf.float32, row_splits_dtype=tf.int32),
        lambda tf: _rt(tf).with_row_splits_dtype(tf.int32),
    ),
    "ragged_rank0_dense": (
        lambda tf: tf.RaggedTensorSpec([None], tf.float32, ragged_rank=0),
        lambda tf: tf.constant([1.0, 2.0]),
    ),
}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_input_signature_kinds(name):
    spec, value = SIGNATURES[name]

    def body(tf):
        @tf.function(input_signature=[spec(tf)])
        def f(x):
            return tf.reduce_sum(x), tf.reduce_max(x)

        return f(value(tf)), f.experimental_get_tracing_count()

    check(body)


def test_input_signature_strings():
    def body(tf):
        @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.string)])
        def f(x):
            return tf.strings.reduce_join(x, axis=1, separator=" ")

        return f(tf.ragged.constant([["a", "b"], ["c"]]))

    check(body)


BINDING_ERRORS = {
    "dense_value": lambda tf: tf.constant([[1.0, 2.0]]),
    "other_dtype": lambda tf: tf.ragged.constant([[1, 2]]),
    "deeper": lambda tf: _rt2(tf),
    "other_splits_dtype": lambda tf: _rt(tf).with_row_splits_dtype(tf.int32),
    "python_list": lambda tf: [[1.0, 2.0], [3.0]],
    "other_rows": lambda tf: _rt(tf)[:2],
}


@pytest.mark.parametrize("name", sorted(BINDING_ERRORS))
def test_input_signature_binding_errors(name):
    def body(tf):
        @tf.function(input_signature=[tf.RaggedTensorSpec([4, None], tf.float32)])
        def f(x):
            return tf.reduce_sum(x)

        return f(BINDING_ERRORS[name](tf))

    check_raises(body)


def test_input_signature_ragged_rank0_refuses_ragged():
    def body(tf):
        @tf.function(input_signature=[tf.RaggedTensorSpec([None], tf.float32, ragged_rank=0)])
        def f(x):
            return x * 2

        return f(_rt(tf))

    check_raises(body)


def test_concrete_function_of_signature():
    def body(tf):
        @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.float32)])
        def f(x):
            return tf.reduce_sum(x, axis=1)

        concrete = f.get_concrete_function()
        calls = [concrete(_other(tf)), concrete(_rt(tf)), f(_rt(tf))]
        return calls, f.experimental_get_tracing_count(), _d(concrete.structured_input_signature)

    check(body)


def test_concrete_function_of_spec():
    def body(tf):
        @tf.function
        def f(x):
            return tf.reduce_max(x, axis=1)

        concrete = f.get_concrete_function(tf.RaggedTensorSpec([None, None], tf.float32))
        return concrete(_other(tf)), concrete(_rt(tf)), _d(concrete.structured_input_signature)

    check(body)


CONCRETE_BINDING_ERRORS = {
    "other_dtype": lambda tf: tf.ragged.constant([[1, 2]]),
    "dense": lambda tf: tf.constant([[1.0]]),
    "deeper": _rt2,
}


@pytest.mark.parametrize("name", sorted(CONCRETE_BINDING_ERRORS))
def test_concrete_function_of_spec_binding_errors(name):
    value = CONCRETE_BINDING_ERRORS[name]

    def body(tf):
        @tf.function
        def f(x):
            return tf.reduce_sum(x)

        return f.get_concrete_function(tf.RaggedTensorSpec([None, None], tf.float32))(value(tf))

    check_raises(body)


def test_ragged_arguments_without_signature():
    def body(tf):
        @tf.function
        def f(x, y):
            return tf.reduce_sum(x, axis=1) + tf.cast(y.nrows(), tf.float32), x.bounding_shape()

        # the same value twice, another partition, other values of the same partition, a nested argument
        rt = _rt(tf)
        out = [f(rt, _rt2(tf)), f(rt, _rt2(tf)), f(_other(tf), _rt2(tf)), f(rt + 1.0, _rt2(tf))]

        @tf.function
        def g(pair):
            return tf.reduce_sum(pair[0]) * pair[1]

        out.append(g((rt, tf.constant(2.0))))
        return out

    check(body)


def test_ragged_argument_ids_are_not_reused():
    """Traces are found by a RaggedTensor's values, not its id: a new value at a freed object's address gets its
    own results."""

    def body(tf):
        @tf.function
        def f(x):
            return tf.reduce_sum(x)

        return [f(tf.ragged.constant([[float(i)], [1.0, 2.0]])) for i in range(6)]

    check(body)


# -- tf.experimental.DynamicRaggedShape (tf.shape of a RaggedTensor) -------------------------------------------------
def _shape(tf, value, **kwargs):
    return tf.experimental.DynamicRaggedShape.from_tensor(value, **kwargs)


def _lengths(tf, lengths, **kwargs):
    return tf.experimental.DynamicRaggedShape.from_lengths(lengths, **kwargs)


def _rp(tf, lengths):
    return tf.experimental.RowPartition.from_row_lengths(lengths)


SHAPES = {
    "rank2": lambda tf: _shape(tf, _rt(tf)),
    "rank3": lambda tf: _shape(tf, _rt2(tf)),
    "uniform_inner": lambda tf: _shape(tf, _rt_uniform(tf)),
    "uniform_partition": lambda tf: _shape(tf, tf.RaggedTensor.from_uniform_row_length(tf.range(6), 2)),
    "dense": lambda tf: _shape(tf, tf.ones([2, 3])),
    "scalar": lambda tf: _shape(tf, tf.constant(1.0)),
    "from_lengths": lambda tf: _lengths(tf, [2, (2, 1), 3]),
    "from_lengths_two_partitions": lambda tf: _lengths(tf, [2, (2, 1), 3], num_row_partitions=2),
    "from_lengths_dense": lambda tf: _lengths(tf, [2, 3]),
    "from_lengths_uniform_partition": lambda tf: _lengths(tf, [2, 3], num_row_partitions=1),
    "from_lengths_nested": lambda tf: _lengths(tf, [2, (2, 1), (2, 1, 1)]),
    "from_lengths_empty": lambda tf: _lengths(tf, []),
    "from_row_partitions": lambda tf: tf.experimental.DynamicRaggedShape.from_row_partitions(
        [
            _rp(tf, [2, 1]),
            _rp(tf, [1, 1, 2]),
        ]
    ),
    "constructor": lambda tf: tf.experimental.DynamicRaggedShape([_rp(tf, [2, 1])], [3]),
    "slice_prefix": lambda tf: _shape(tf, _rt(tf))[0:1],
    "slice_all": lambda tf: _shape(tf, _rt(tf))[:],
    "slice_empty": lambda tf: _shape(tf, _rt(tf))[2:],
    "slice_to_last": lambda tf: _shape(tf, _rt(tf))[:-1],
    "slice_rank3": lambda tf: _shape(tf, _rt2(tf))[:2],
    "slice_dense_tail": lambda tf: _shape(tf, tf.ones([2, 3, 4]))[1:],
    "slice_uniform_tail": lambda tf: _shape(tf, tf.RaggedTensor.from_uniform_row_length(tf.range(6), 2))[1:],
    "with_dtype": lambda tf: _shape(tf, _rt(tf)).with_dtype(tf.int32),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_ragged_shape(name):
    def body(tf):
        shape = SHAPES[name](tf)
        fields = [getattr(shape, name) for name in ("rank", "num_row_partitions", "dtype", "inner_shape")]
        return _d(shape), str(shape), fields, shape.static_lengths(), [_d(p) for p in shape.row_partitions]

    check(body)


DIMENSIONS = {
    "nrows": lambda tf: _shape(tf, _rt(tf))[0],
    "nrows_int32": lambda tf: _shape(tf, _rt(tf), dtype=tf.int32)[0],
    "negative": lambda tf: _shape(tf, _rt(tf))[-2],
    "uniform_inner": lambda tf: _shape(tf, _rt_uniform(tf))[2],
    "uniform_inner_negative": lambda tf: _shape(tf, _rt_uniform(tf))[-1],
    "uniform_partition": lambda tf: _shape(tf, tf.RaggedTensor.from_uniform_row_length(tf.range(6), 2))[1],
    "dense": lambda tf: _shape(tf, tf.ones([2, 3]))[1],
    "static_lengths_no_ragged": lambda tf: _shape(tf, _rt2(tf)).static_lengths(ragged_lengths=False),
    "is_uniform": lambda tf: [_shape(tf, _rt_uniform(tf)).is_uniform(i) for i in range(3)],
    "to_tensor_shape": lambda tf: _shape(tf, _rt_uniform(tf))._to_tensor_shape(),
}


@pytest.mark.parametrize("name", sorted(DIMENSIONS))
def test_ragged_shape_dimensions(name):
    check(lambda tf: DIMENSIONS[name](tf))


SHAPE_ERRORS = {
    "ragged_index": lambda tf: _shape(tf, _rt(tf))[1],
    "ragged_negative_index": lambda tf: _shape(tf, _rt(tf))[-1],
    "index_too_big": lambda tf: _shape(tf, _rt(tf))[5],
    "index_at_rank": lambda tf: _shape(tf, _rt(tf))[2],
    "index_too_negative": lambda tf: _shape(tf, _rt(tf))[-3],
    "stride": lambda tf: _shape(tf, _rt(tf))[::2],
    "string_index": lambda tf: _shape(tf, _rt(tf))["a"],
    "slice_from_ragged": lambda tf: _shape(tf, _rt(tf))[1:],
    "slice_negative_start": lambda tf: _shape(tf, _rt(tf))[-1:],
    "is_uniform_negative": lambda tf: _shape(tf, _rt(tf)).is_uniform(-1),
    "is_uniform_too_big": lambda tf: _shape(tf, _rt(tf)).is_uniform(2),
    "with_float_dtype": lambda tf: _shape(tf, _rt(tf)).with_dtype(tf.float32),
    "lengths_not_list": lambda tf: _lengths(tf, (2, 3)),
    "lengths_float": lambda tf: _lengths(tf, [2, 2.5]),
    "lengths_inconsistent": lambda tf: _lengths(tf, [2, (1, 1, 1)]),
    "lengths_scalar_partitions": lambda tf: _lengths(tf, [], num_row_partitions=1),
    "lengths_too_many_partitions": lambda tf: _lengths(tf, [3], num_row_partitions=1),
    "row_partition_bad_splits": lambda tf: tf.experimental.RowPartition.from_row_splits([1, 2, 3]),
}


@pytest.mark.parametrize("name", sorted(SHAPE_ERRORS))
def test_ragged_shape_errors(name):
    check_raises(SHAPE_ERRORS[name], messages=name not in ("row_partition_bad_splits", "with_float_dtype"))


ROW_PARTITIONS = {
    "splits": lambda tf: tf.experimental.RowPartition.from_row_splits([0, 2, 3]),
    "splits_int32": lambda tf: tf.experimental.RowPartition.from_row_splits(tf.constant([0, 2, 3], tf.int32)),
    "lengths": lambda tf: _rp(tf, [2, 1]),
    "uniform": lambda tf: tf.experimental.RowPartition.from_uniform_row_length(2, nvals=6),
}


@pytest.mark.parametrize("name", sorted(ROW_PARTITIONS))
def test_row_partition(name):
    def body(tf):
        p = ROW_PARTITIONS[name](tf)
        methods = ("row_splits", "row_lengths", "nrows", "nvals", "is_uniform", "uniform_row_length")
        return repr(p), p.dtype, [getattr(p, method)() for method in methods]

    check(body)


def _ragged_op(tf, name):
    """TF's op, or tapeshim's implementation of what it does with a DynamicRaggedShape (`ragged_shape`): the op
    functions reach it only once they dispatch a ragged shape argument there."""
    return getattr(tf, name) if tf is real_tf else getattr(ragged_shape, name)


RAGGED_SHAPE_OPS = {
    "broadcast_scalar": lambda tf: _ragged_op(tf, "broadcast_to")(tf.constant(1.0), _shape(tf, _rt(tf))),
    "broadcast_per_row": lambda tf: _ragged_op(tf, "broadcast_to")(
        tf.constant([[1.0], [2.0], [3.0], [4.0]]), _shape(tf, _rt(tf))
    ),
    "broadcast_inner": lambda tf: _ragged_op(tf, "broadcast_to")(tf.constant([1, 2]), _lengths(tf, [2, (2, 2)])),
    "broadcast_ragged_same_shape": lambda tf: _ragged_op(tf, "broadcast_to")(_rt(tf), _shape(tf, _rt(tf))),
    "broadcast_dense_shape": lambda tf: _ragged_op(tf, "broadcast_to")(tf.constant([1, 2]), _lengths(tf, [2, 2])),
    "broadcast_trailing_uniform": lambda tf: _ragged_op(tf, "broadcast_to")(
        tf.constant([1, 2, 3]), _lengths(tf, [2, (2, 1), 3])
    ),
    "reshape_dense": lambda tf: _ragged_op(tf, "reshape")(tf.range(6), _lengths(tf, [2, (2, 1), 2])),
    "reshape_ragged": lambda tf: _ragged_op(tf, "reshape")(_rt(tf), _shape(tf, _rt(tf))),
    "reshape_to_dense": lambda tf: _ragged_op(tf, "reshape")(tf.range(6), _lengths(tf, [2, 3])),
    "zeros": lambda tf: _ragged_op(tf, "zeros")(_lengths(tf, [2, (2, 1)])),
    "ones_int32": lambda tf: _ragged_op(tf, "ones")(_lengths(tf, [2, (2, 1)]), dtype=tf.int32),
}


@pytest.mark.parametrize("name", sorted(RAGGED_SHAPE_OPS))
def test_ops_with_ragged_shapes(name):
    check(lambda tf: _d(RAGGED_SHAPE_OPS[name](tf)))


def test_broadcast_to_ragged_shape_error():
    check_raises(lambda tf: _ragged_op(tf, "broadcast_to")(tf.constant([1, 2, 3]), _lengths(tf, [2, (2, 1)])))


def test_tf_shape_of_ragged():
    def body(tf):
        shape = tf.shape(_rt(tf))
        return _d(shape), shape[0], shape.dtype, _d(tf.shape(_rt2(tf), out_type=tf.int64))

    check(body)


def test_public_names():
    for name in ("RaggedTensorSpec", "type_spec_from_value"):
        assert getattr(tapeshim, name).__name__ == name
    assert tapeshim.experimental.DynamicRaggedShape is ragged_shape.DynamicRaggedShape
    assert tapeshim.experimental.RowPartition is ragged_shape.RowPartition
    assert callable(tapeshim.data.experimental.dense_to_ragged_batch)
    assert callable(tapeshim.data.Dataset.ragged_batch)
