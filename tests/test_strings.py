"""tf.string tensors: the dtype, conversion, printing, indexing, operators and errors, against TF."""

import numpy as np
import pytest

import tapeshim
from oracle import check, check_printed, check_raises, raising, real_tf

CONVERSIONS = {
    "scalar_str": lambda tf: tf.constant("ab"),
    "scalar_bytes": lambda tf: tf.constant(b"\xff\xfe"),
    "utf8": lambda tf: tf.constant("é ü"),
    "mixed_str_bytes": lambda tf: tf.constant([b"a", "b"]),
    "matrix": lambda tf: tf.constant([["a", "bc"], ["", "d"]]),
    "empty_string_dtype": lambda tf: tf.constant([], tf.string),
    "empty_rows": lambda tf: tf.constant([[], []], tf.string),
    "numpy_unicode": lambda tf: tf.convert_to_tensor(np.array(["a", "bc"])),
    "numpy_bytes": lambda tf: tf.convert_to_tensor(np.array([b"a", b"bc"])),
    "numpy_object": lambda tf: tf.constant(np.array([b"a", "b"], dtype=object)),
    "numpy_str_scalar": lambda tf: tf.constant(np.str_("ab")),
    "numpy_bytes_list": lambda tf: tf.constant([np.bytes_(b"ab")]),
    "broadcast_shape": lambda tf: tf.constant("a", shape=[2, 2]),
    "reshape_shape": lambda tf: tf.constant(["a", "b", "c", "d"], shape=[2, 2]),
    "dtype_hint_ignored": lambda tf: tf.convert_to_tensor("a", dtype_hint=tf.float32),
    "explicit_dtype": lambda tf: tf.convert_to_tensor(["x"], dtype=tf.string),
    "constant_of_tensor": lambda tf: tf.constant(tf.constant(["a"])),
}


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_conversion(name):
    check(CONVERSIONS[name])


ERRORS = {
    "mixed_types": lambda tf: tf.constant(["a", 1]),
    "none_in_list": lambda tf: tf.constant(["a", None]),
    "ragged": lambda tf: tf.constant([["a"], ["b", "c"]]),
    "int_as_string": lambda tf: tf.constant(1, dtype=tf.string),
    "string_as_int": lambda tf: tf.constant("a", dtype=tf.int32),
    "string_tensor_with_number": lambda tf: tf.constant([tf.constant("a"), 1]),
    "constant_list_of_string_tensors": lambda tf: tf.constant([tf.constant("a"), "b"]),
    "strings_after_a_string_tensor": lambda tf: tf.constant(["b", tf.constant("a")]),
    "object_ints": lambda tf: tf.constant(np.array(["a", 1], dtype=object)),
    "bad_shape": lambda tf: tf.constant(["a", "b"], shape=[3]),
    "convert_requested_float": lambda tf: tf.convert_to_tensor(tf.constant(["a"]), dtype=tf.float32),
    "constant_requested_float": lambda tf: tf.constant(tf.constant(["a"]), dtype=tf.float32),
    "sin": lambda tf: tf.math.sin(tf.constant("a")),
    "reduce_sum": lambda tf: tf.reduce_sum(tf.constant(["a"])),
    "matmul": lambda tf: tf.matmul(tf.constant([["a"]]), tf.constant([["a"]])),
    "less": lambda tf: tf.constant(["a", "b"]) < "b",
    "add_int_tensor": lambda tf: tf.constant(["a"]) + tf.constant([1]),
    "add_python_int": lambda tf: tf.constant("a") + 1,
    "mul": lambda tf: tf.constant("a") * 2,
    "eq_int_tensor": lambda tf: tf.constant(["a", "b"]) == tf.constant([1, 2]),
    "eq_python_int": lambda tf: tf.constant(["a", "b"]) == 1,
    "index_out_of_range": lambda tf: tf.constant(["a", "b"])[5],
    "index_scalar": lambda tf: tf.constant("ab")[0],
    "hash": lambda tf: hash(tf.constant("a")),
    "len_scalar": lambda tf: len(tf.constant("a")),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    check_raises(ERRORS[name])


def test_messages_match_tf():
    for name in (
        "mixed_types",
        "ragged",
        "int_as_string",
        "string_as_int",
        "add_int_tensor",
        "eq_int_tensor",
        "index_out_of_range",
    ):
        check_raises(ERRORS[name], messages=False)
    check_raises(ERRORS["sin"])
    for tf in (real_tf, tapeshim):
        with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'T' of string"):
            tf.math.sin(tf.constant("a"))


OPERATORS = {
    "index": lambda tf: tf.constant([["a", "b"], ["c", "d"]])[1, 0],
    "slice": lambda tf: tf.constant([["a", "b"], ["c", "d"]])[:, 1:],
    "negative_step": lambda tf: tf.constant(["a", "b", "c"])[::-1],
    "newaxis_ellipsis": lambda tf: tf.constant(["a", "b"])[tf.newaxis, ...],
    "tensor_index": lambda tf: tf.constant(["a", "b"])[tf.constant(1)],
    "eq_scalar": lambda tf: tf.constant(["a", "b", "a"]) == "a",
    "eq_broadcast": lambda tf: tf.constant([["a"], ["b"]]) == tf.constant(["a", "b"]),
    "eq_incompatible": lambda tf: tf.constant(["a", "b"]) == tf.constant(["a", "b", "c"]),
    "eq_none": lambda tf: tf.constant(["a"]) == None,  # noqa: E711
    "ne": lambda tf: tf.constant(["a", "b"]) != "a",
    "add": lambda tf: tf.constant(["a", "b"]) + "c",
    "radd": lambda tf: "x" + tf.constant(["a", "b"]),
    "add_list": lambda tf: tf.constant(["a", "b"]) + ["c"],
    "add_broadcast": lambda tf: tf.constant([["a"], ["b"]]) + tf.constant(["c", "d"]),
    "equal_fn": lambda tf: tf.equal(tf.constant(["a", "b"]), "b") if tf is real_tf else tf.constant([False, True]),
    "iterate": lambda tf: list(tf.constant(["a", "b"])),
    "len": lambda tf: len(tf.constant(["a", "b", "c"])),
    "bool_empty_string": lambda tf: bool(tf.constant("")),
    "bool_string": lambda tf: bool(tf.constant("x")),
    "float": lambda tf: float(tf.constant("1.5")),
    "int": lambda tf: int(tf.constant("12")),
    "is_tensor": lambda tf: (tf.is_tensor(tf.constant("a")), isinstance(tf.constant("a"), tf.Tensor)),
    "shape": lambda tf: tf.constant([["a", "b"]]).shape,
    "dtype": lambda tf: tf.constant("a").dtype,
    "ndim": lambda tf: tf.constant([["a", "b"]]).ndim,
    "str": lambda tf: str(tf.constant(["a", "b"])),
    "str_scalar": lambda tf: str(tf.constant("a")),
    "repr": lambda tf: repr(tf.constant(["a", "b"])),
    "repr_scalar": lambda tf: repr(tf.constant(b"a\xff")),
    "numpy_type": lambda tf: (type(tf.constant("a").numpy()).__name__, tf.constant(["a"]).numpy().dtype.name),
    "numpy_array": lambda tf: np.asarray(tf.constant([["a", "b"]])),
}


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operators(name):
    check(OPERATORS[name])


DTYPE = {
    "name": lambda tf: (tf.string.name, str(tf.string), repr(tf.string)),
    "flags": lambda tf: (
        tf.string.is_floating,
        tf.string.is_integer,
        tf.string.is_bool,
        tf.string.is_complex,
        tf.string.is_unsigned,
        tf.string.is_numpy_compatible,
        tf.string.is_quantized,
    ),
    "enum_size": lambda tf: (tf.string.as_datatype_enum, tf.string.size),
    "as_numpy_dtype": lambda tf: repr(tf.string.as_numpy_dtype),
    "as_dtype": lambda tf: [tf.as_dtype(v) for v in (np.object_, np.bytes_, np.str_, "string", 7)],
    "compatible": lambda tf: (
        tf.string.is_compatible_with(tf.string),
        tf.string.is_compatible_with(tf.int32),
        tf.string == np.object_,
        tf.string.real_dtype,
        tf.string.base_dtype,
    ),
    "min": raising(lambda tf: tf.string.min),  # (TF's string dtype has neither)
    "limits": raising(lambda tf: tf.string.limits),
}


@pytest.mark.parametrize("name", sorted(DTYPE))
def test_dtype(name):
    check(DTYPE[name])


def test_string_tensors_live_on_the_host_and_are_read_only():
    t = tapeshim.constant(["a", "b"])
    assert isinstance(t.value, np.ndarray) and t.value.dtype == object
    out = t.numpy()
    out[0] = b"z"
    assert t.numpy()[0] == b"a"  # numpy() is a copy, as TF's
    with pytest.raises(ValueError, match="read-only"):
        t.value[0] = b"q"  # the stored array is read-only


PIPELINES = {
    "slices": lambda tf: list(tf.data.Dataset.from_tensor_slices(["a b", "c"]).as_numpy_iterator()),
    "map_lower_batch": lambda tf: list(
        tf.data.Dataset.from_tensor_slices(["A b", "C", "dE"]).map(tf.strings.lower).batch(2).as_numpy_iterator()
    ),
    "map_to_number": lambda tf: list(
        tf.data.Dataset.from_tensor_slices(["1.5", "2"]).map(tf.strings.to_number).batch(2).as_numpy_iterator()
    ),
    "dict_features": lambda tf: list(
        tf.data.Dataset.from_tensor_slices({"text": ["x y", "z"], "label": [0, 1]})
        .map(lambda d: (tf.strings.length(d["text"]), d["label"]))
        .as_numpy_iterator()
    ),
    "hash_buckets": lambda tf: list(
        tf.data.Dataset.from_tensor_slices([["cat", "dog"], ["emu", "cat"]])
        .map(lambda s: tf.strings.to_hash_bucket_fast(s, 100))
        .as_numpy_iterator()
    ),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_string_tensors_in_tf_data(name):
    check(PIPELINES[name])


def test_a_function_called_with_string_tensors_computes_as_tf():
    """TF traces string arguments; tapeshim's string tensors stay on the host (docs/porting.md), so such a call
    runs the function eagerly: values, gradients, errors and the tracing count are TF's."""

    def body(tf):
        @tf.function
        def lengths(s):
            return tf.strings.length(s)

        @tf.function
        def exclaim_and_scale(s, x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = x * tf.cast(tf.strings.length(s), tf.float32)
            return tf.strings.join([s, "!"]), y, tape.gradient(y, x)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def upper(s):
            return tf.strings.upper(s)

        results = (
            lengths(tf.constant(["ab", "cde"])),
            lengths(tf.constant(["x", "yz"])),  # the same signature: no new trace
            lengths(tf.constant("abcd")),  # another shape: TF traces again
            exclaim_and_scale(tf.constant("hi"), tf.constant(3.0)),
            upper(tf.constant(["ab", "c"])),
            upper(tf.constant(["d"])),
        )
        counts = [fn.experimental_get_tracing_count() for fn in (lengths, exclaim_and_scale, upper)]
        return results, counts

    check(body)
    check_raises(lambda tf: tf.function(lambda s: tf.strings.to_number(s))(tf.constant(["1", "x"])))


def test_string_calls_count_traces_and_return_outputs_as_tf():
    """Under reduce_retracing a new length is one generalized trace; NumPy strings are tf.string whatever their
    NumPy dtype; a call's outputs are tensors, as a trace's (a Python number, a list, a variable)."""

    def body(tf):
        general = tf.function(lambda s: tf.strings.length(s), reduce_retracing=True)
        for n in (1, 2, 3, 4):
            general(tf.constant(["a"] * n))
        numpy_strings = tf.function(lambda s: tf.strings.length(s))
        lengths = [numpy_strings(value) for value in (np.array(["a"]), np.array(["ab"]), np.array([b"ab"]))]
        variable = tf.Variable(2.0)
        outputs = tf.function(lambda s: (3, [1, 2.0], np.float64(1.5), variable, None))(tf.constant("x"))
        counts = [fn.experimental_get_tracing_count() for fn in (general, numpy_strings)]
        return counts, lengths, outputs

    check(body)


def test_saving_a_function_only_called_with_strings_says_why(tmp_path):
    """Its calls ran eagerly: it has no compiled program to export (TF saves its graph)."""
    module = tapeshim.Module()
    module.lengths = tapeshim.function(lambda s: tapeshim.strings.length(s))
    module.lengths(tapeshim.constant(["abc"]))
    with pytest.raises(ValueError, match="its calls ran eagerly"):
        tapeshim.saved_model.save(module, str(tmp_path / "model"))


def test_a_concrete_function_of_a_string_argument_gets_a_clear_error():
    """A concrete function must be one compiled program, which a string tensor cannot enter (TF traces it)."""
    lengths = tapeshim.function(lambda s: tapeshim.strings.length(s))
    with pytest.raises(TypeError, match="argument s: string tensors live on the host"):
        lengths.get_concrete_function(tapeshim.TensorSpec([None], tapeshim.string))


def test_print_and_zeros_of_strings_as_tf(capfd):
    """tf.print quotes string elements; tf.zeros/zeros_like of tf.string are empty strings; ones refuse."""

    def body(tf):
        tf.print(tf.constant(["ab", "c"]), tf.constant(b"x"), tf.constant([["a"], ["b"]]))
        tf.print(tf.constant([str(i) for i in range(10)]))
        return tf.zeros([2], tf.string), tf.zeros_like(tf.constant(["a"])), tf.fill([2], "a")

    check_printed(body, capfd)
    check_raises(lambda tf: tf.ones([2], tf.string))
    check_raises(lambda tf: tf.ones_like(tf.constant(["a"])))
