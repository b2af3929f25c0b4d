"""`tf.train.Example` and friends (wire-compatible with TF's protos) and `tf.io.parse_*example` against TF."""

import math

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises, real_tf


def _example(tf, floats=(1.5, 2.5), ints=(7,), strings=(b"ab", b"c")):
    feature = {}
    if floats is not None:
        feature["f"] = tf.train.Feature(float_list=tf.train.FloatList(value=list(floats)))
    if ints is not None:
        feature["i"] = tf.train.Feature(int64_list=tf.train.Int64List(value=list(ints)))
    if strings is not None:
        feature["s"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=list(strings)))
    return tf.train.Example(features=tf.train.Features(feature=feature))


def test_single_feature_serializations_are_byte_identical():
    def body(tf):
        values = [
            tf.train.FloatList(value=[1.0, -0.0, 0.1, 1e30, float("inf")]),
            tf.train.Int64List(value=[0, 1, -1, 2**63 - 1, -(2**63), 300]),
            tf.train.BytesList(value=[b"", b"x" * 200, bytes(range(256))]),
            tf.train.Feature(int64_list=tf.train.Int64List(value=[5])),
            tf.train.Feature(bytes_list=tf.train.BytesList()),
            tf.train.Features(feature={"": tf.train.Feature()}),
            tf.train.Example(
                features=tf.train.Features(
                    feature={"img": tf.train.Feature(float_list=tf.train.FloatList(value=range(40)))}
                )
            ),
            tf.train.Example(features=tf.train.Features()),
            tf.train.Example(),
        ]
        return [v.SerializeToString() for v in values]

    check(body)


def test_building_reading_and_presence():
    def body(tf):
        x = tf.train.Example()
        before = x.HasField("features")
        fl = x.features.feature["q"].float_list
        touched = (x.HasField("features"), x.features.feature["q"].WhichOneof("kind"))
        fl.value.append(0.1)
        fl.value.extend([2, 3.5])
        feature = tf.train.Feature(float_list=tf.train.FloatList(value=[1]))
        feature.int64_list.value.append(2)
        seq = tf.train.SequenceExample()
        seq.context.feature["a"].int64_list.value.append(3)
        seq.feature_lists.feature_list["t"].feature.add().float_list.value.extend([1, 2])
        seq.feature_lists.feature_list["t"].feature.add().bytes_list.value.append(b"w")
        return (
            before,
            touched,
            x.HasField("features"),
            list(fl.value),
            x.SerializeToString(),
            feature.WhichOneof("kind"),
            feature.HasField("float_list"),
            feature.SerializeToString(),
            "q" in x.features.feature,
            "zz" in x.features.feature,
            len(x.features.feature),
            seq.SerializeToString(),
            len(seq.feature_lists.feature_list["t"].feature),
            list(seq.feature_lists.feature_list["t"].feature[0].float_list.value),
        )

    check(body)


def test_parse_what_tf_serialized_and_the_reverse():
    for source, target in ((real_tf, tapeshim), (tapeshim, real_tf)):
        data = _example(source).SerializeToString()
        parsed = target.train.Example.FromString(data)
        assert list(parsed.features.feature["f"].float_list.value) == [1.5, 2.5]
        assert list(parsed.features.feature["i"].int64_list.value) == [7]
        assert list(parsed.features.feature["s"].bytes_list.value) == [b"ab", b"c"]
        again = target.train.Example()
        again.ParseFromString(data)
        assert again == parsed
        assert sorted(again.features.feature) == ["f", "i", "s"]
        # map order may differ between the two runtimes; the deterministic form is sorted in both
        assert again.SerializeToString(deterministic=True) == _example(source).SerializeToString(deterministic=True)


def test_text_format_equality_copy_and_clear():
    def body(tf):
        e = _example(tf, strings=(b"a\x00\n\"'\\\xff\x7f",))
        f = tf.train.FloatList(value=[1e20, 0.1, float("nan"), float("inf"), -0.0, 3, 1 / 3])
        copy = tf.train.Example()
        copy.CopyFrom(e)
        merged = tf.train.FloatList(value=[1])
        merged.MergeFrom(tf.train.FloatList(value=[2]))
        cleared = _example(tf)
        cleared.features.feature["f"].ClearField("float_list")
        return (
            str(e.features.feature["s"]),
            str(f),
            str(tf.train.Example()),
            copy == e,
            copy is not e,
            tf.train.FloatList(value=[1.0]) == tf.train.FloatList(value=[1]),
            tf.train.FloatList(value=[1.0]) == tf.train.FloatList(value=[2]),
            list(merged.value),
            cleared.features.feature["f"].WhichOneof("kind"),
            e.ByteSize() == len(e.SerializeToString()),
            [str(m) for m in (tf.train.Int64List(value=[-5]), tf.train.Feature())],
        )

    check(body)


def test_float_values_round_to_float32():
    def body(tf):
        v = tf.train.FloatList(value=[0.1, 1 / 3, 16777217]).value
        return (
            [float(x) for x in v],
            math.isnan(tf.train.FloatList(value=[float("nan")]).value[0]),
            list(tf.train.FloatList(value=[np.True_, True, np.float16(1.5)]).value),
            list(tf.train.Int64List(value=[np.int32(3), np.int64(-4)]).value),
        )

    check(body)


@pytest.mark.parametrize(
    "bad",
    [
        lambda tf: tf.train.BytesList(value=["text"]),
        lambda tf: tf.train.BytesList(value=[1]),
        lambda tf: tf.train.Int64List(value=[1.5]),
        lambda tf: tf.train.Int64List(value=[True]),
        lambda tf: tf.train.Int64List(value=[np.True_]),
        lambda tf: tf.train.Int64List(value=[np.uint64(2**63)]),
        lambda tf: tf.train.Int64List(value=[2**64]),
        lambda tf: tf.train.FloatList(value=["a"]),
        lambda tf: tf.train.FloatList(value=[None]),
        lambda tf: tf.train.Feature(foo=1),
        lambda tf: setattr(tf.train.Example(), "features", tf.train.Features()),
        lambda tf: tf.train.Example(features=tf.train.FloatList()),
    ],
)
def test_proto_errors(bad):
    check_raises(bad)


def _spec(tf):
    F, V, S = tf.io.FixedLenFeature, tf.io.VarLenFeature, tf.io.FixedLenSequenceFeature
    return F, V, S


def test_parse_single_example_dense():
    def body(tf):
        F, _, S = _spec(tf)
        data = _example(tf).SerializeToString()
        return (
            tf.io.parse_single_example(
                data,
                {
                    "f": F([2], tf.float32),
                    "i": F([], tf.int64),
                    "s": F([2], tf.string),
                    "m": F([], tf.int64, default_value=-1),
                    "d": F([2], tf.float32, default_value=[3.0, 4.0]),
                    "q": S([], tf.float32, allow_missing=True),
                    "t": S([1], tf.float32, allow_missing=True),
                },
            ),
            tf.io.parse_single_example(tf.constant(data), {"f": F([1, 2], tf.float32)}),
        )

    check(body)


def test_parse_example_batches():
    def body(tf):
        F, _, S = _spec(tf)
        batch = [
            _example(tf).SerializeToString(),
            _example(tf, floats=(3.0, 4.0), ints=None, strings=(b"z",)).SerializeToString(),
        ]
        return (
            tf.io.parse_example(batch, {"f": F([2], tf.float32), "i": F([1], tf.int64, default_value=[0])}),
            tf.io.parse_example(
                tf.constant(batch),
                {
                    "s": S([], tf.string, allow_missing=True),
                    "f": S([2], tf.float32, allow_missing=True),
                    "i": S([], tf.int64, allow_missing=True, default_value=-1),
                },
            ),
            tf.io.parse_example(batch[0], {"f": F([2], tf.float32)}),
        )

    check(body)


@pytest.mark.parametrize(
    "bad",
    [
        lambda tf, F, S: tf.io.parse_single_example(_example(tf).SerializeToString(), {"m": F([], tf.int64)}),
        lambda tf, F, S: tf.io.parse_single_example(_example(tf).SerializeToString(), {"f": F([3], tf.float32)}),
        lambda tf, F, S: tf.io.parse_single_example(_example(tf).SerializeToString(), {"f": F([], tf.int64)}),
        lambda tf, F, S: tf.io.parse_single_example(_example(tf).SerializeToString(), {"f": F([], tf.int32)}),
        lambda tf, F, S: tf.io.parse_single_example(_example(tf).SerializeToString(), {}),
        lambda tf, F, S: tf.io.parse_single_example([_example(tf).SerializeToString()], {"f": F([2], tf.float32)}),
        lambda tf, F, S: tf.io.parse_single_example(
            _example(tf).SerializeToString(), {"x": F([2], tf.float32, default_value=1.0)}
        ),
        lambda tf, F, S: tf.io.parse_example(
            [_example(tf).SerializeToString(), _example(tf, ints=None).SerializeToString()], {"i": F([1], tf.int64)}
        ),
        lambda tf, F, S: tf.io.parse_example([_example(tf).SerializeToString()], {"f": S([], tf.float32)}),
        lambda tf, F, S: tf.io.parse_example(
            [_example(tf, floats=None).SerializeToString(), _example(tf).SerializeToString()], {"f": F([2], tf.int64)}
        ),
        lambda tf, F, S: tf.io.parse_example([_example(tf).SerializeToString()] * 2, {"f": F([3], tf.float32)}),
        lambda tf, F, S: tf.io.parse_example(
            [_example(tf).SerializeToString()], {"f": S([], tf.int64, allow_missing=True)}
        ),
        lambda tf, F, S: tf.io.parse_example(
            [_example(tf).SerializeToString()], {"f": S([3], tf.float32, allow_missing=True)}
        ),
        lambda tf, F, S: tf.io.parse_single_example(
            _example(tf).SerializeToString(), {"f": S([3], tf.float32, allow_missing=True)}
        ),
        lambda tf, F, S: tf.io.parse_single_example(
            _example(tf).SerializeToString(), {"f": tf.io.VarLenFeature(tf.int64)}
        ),
        lambda tf, F, S: tf.io.parse_example(
            [_example(tf).SerializeToString()] * 2, {"i": F([], tf.int64), "f": F([], tf.float32)}
        ),
    ],
)
def test_parse_errors(bad):
    def body(tf):
        F, _, S = _spec(tf)
        try:
            return bad(tf, F, S)
        except tf.errors.OpError as exc:
            raise type(exc)(None, None, str(exc).split("}} ")[-1].split("\n")[0]) from None

    check_raises(body, messages=True)


def test_feature_configs():
    def body(tf):
        F, V, S = _spec(tf)
        return [
            repr(F([2], tf.float32)),
            repr(F([], tf.int64, default_value=0)),
            repr(V(tf.string)),
            repr(S([3], tf.float32, allow_missing=True)),
            F([2], tf.float32).shape,
            V(tf.int64).dtype,
            F(shape=[1], dtype=tf.string, default_value=b"x").default_value,
        ]

    check(body)


def _parts(result):
    """A parse result with each SparseTensor as its (indices, values, dense_shape)."""
    return {k: (v.indices, v.values, v.dense_shape) if hasattr(v, "dense_shape") else v for k, v in result.items()}


def test_var_len_features_are_sparse_tensors():
    def body(tf):
        F, V, _ = _spec(tf)
        one = _example(tf).SerializeToString()
        other = _example(tf, floats=(3.0,), ints=None, strings=(b"z", b"y", b"x")).SerializeToString()
        spec = {
            "s": V(tf.string),
            "f": V(tf.float32),
            "i": V(tf.int64),
            "m": V(tf.int64),
            "d": F([1], tf.int64, default_value=[9]),
        }
        single = tf.io.parse_single_example(one, spec)
        batch = tf.io.parse_example([one, other], spec)
        return (
            list(single),
            _parts(single),
            list(batch),
            _parts(batch),
            isinstance(single["s"], tf.sparse.SparseTensor),
            tf.sparse.to_dense(batch["f"]),
            tf.sparse.to_dense(batch["s"], default_value=b"-"),
        )

    check(body)


def test_var_len_type_mismatch():
    def body(tf):
        _, V, _ = _spec(tf)
        try:
            return tf.io.parse_example([_example(tf).SerializeToString()], {"f": V(tf.int64)})
        except tf.errors.OpError as exc:
            raise type(exc)(None, None, str(exc).split("}} ")[-1].split("\n")[0]) from None

    check_raises(body, messages=True)


def _sequence(tf, steps, length=5):
    s = tf.train.SequenceExample()
    s.context.feature["len"].int64_list.value.append(length)
    tokens = s.feature_lists.feature_list["tok"]
    words = s.feature_lists.feature_list["w"]
    for i in range(steps):
        tokens.feature.add().int64_list.value.extend([i, i + 1])
        words.feature.add().bytes_list.value.extend([b"a%d" % i] * (i + 1))
    return s.SerializeToString()


def test_sequence_examples():
    def body(tf):
        F, V, S = _spec(tf)
        context = {"len": F([], tf.int64), "other": F([], tf.float32, default_value=0.5)}
        sequence = {"tok": S([2], tf.int64), "w": V(tf.string), "gone": S([], tf.float32, allow_missing=True)}
        single = tf.io.parse_single_sequence_example(
            _sequence(tf, 3), context_features=context, sequence_features=sequence
        )
        batch = tf.io.parse_sequence_example(
            [_sequence(tf, 3), _sequence(tf, 1, 7), _sequence(tf, 0)],
            context_features=context,
            sequence_features=sequence,
        )
        only_lists = tf.io.parse_single_sequence_example(_sequence(tf, 2), sequence_features={"tok": S([2], tf.int64)})
        return (
            [list(d) for d in single],
            [_parts(d) for d in single],
            [list(d) for d in batch],
            [_parts(d) for d in batch],
            [_parts(d) for d in only_lists],
        )

    check(body)


@pytest.mark.parametrize(
    "bad",
    [
        lambda tf, F, S: tf.io.parse_single_sequence_example(
            _sequence(tf, 3), sequence_features={"tok": S([3], tf.int64)}
        ),
        lambda tf, F, S: tf.io.parse_single_sequence_example(
            _sequence(tf, 3), sequence_features={"missing": S([2], tf.int64)}
        ),
        lambda tf, F, S: tf.io.parse_single_sequence_example(
            _sequence(tf, 3), sequence_features={"tok": S([2], tf.float32)}
        ),
        lambda tf, F, S: tf.io.parse_single_sequence_example(_sequence(tf, 3)),
        lambda tf, F, S: tf.io.parse_sequence_example(
            [_sequence(tf, 3)], sequence_features={"tok": S([2], tf.int64, default_value=-1)}
        ),
        lambda tf, F, S: tf.io.parse_sequence_example([_sequence(tf, 3)], sequence_features={"tok": F([2], tf.int64)}),
    ],
)
def test_sequence_example_errors(bad):
    def body(tf):
        F, _, S = _spec(tf)
        return bad(tf, F, S)

    check_raises(body)


def test_ragged_features():
    def body(tf):
        F, V, _ = _spec(tf)
        R = tf.io.RaggedFeature
        batch = [
            _example(tf).SerializeToString(),
            _example(tf, floats=(), ints=(4, 5, 6), strings=None).SerializeToString(),
        ]
        spec = {
            "i": R(tf.int64),
            "s": R(tf.string),
            "f2": R(tf.float32, value_key="f"),
            "i2": R(tf.int64, value_key="i"),
            "d": F([], tf.int64, default_value=0),
            "v": V(tf.int64),
        }
        parsed = tf.io.parse_example(batch, spec)
        single = tf.io.parse_single_example(batch[1], spec)
        as_lists = {k: (v.to_list(), v.row_splits.dtype) for k, v in parsed.items() if isinstance(v, tf.RaggedTensor)}
        wide = tf.io.parse_example(batch, {"i": R(tf.int64, row_splits_dtype=tf.int64)})["i"]
        return (
            list(parsed),
            as_lists,
            list(single),
            _parts(single),
            repr(R(tf.int64)),
            wide.to_list(),
            wide.row_splits.dtype,
        )

    check(body)


def test_ragged_feature_splits_types():
    def body(tf):
        R = tf.io.RaggedFeature
        data = [_example(tf).SerializeToString()]
        mixed = tf.io.parse_example(
            data, {"a": R(tf.int64, value_key="i"), "b": R(tf.float32, value_key="f", row_splits_dtype=tf.int64)}
        )
        return {k: (v.to_list(), v.row_splits.dtype) for k, v in mixed.items()}

    check(body)
    check_raises(
        lambda tf: tf.io.parse_example(
            [_example(tf).SerializeToString()],
            {
                "a": tf.io.RaggedFeature(tf.int64, value_key="i"),
                "b": tf.io.RaggedFeature(tf.int64, value_key="i", row_splits_dtype=tf.int64),
            },
        ),
        messages=True,
    )


def test_copy_and_pickle():
    import copy
    import pickle

    def body(tf):
        e = _example(tf)
        clones = [copy.deepcopy(e), pickle.loads(pickle.dumps(e)), copy.copy(e)]
        clones[0].features.feature["new"].int64_list.value.append(1)
        return (
            [c == e for c in clones],
            [c.SerializeToString(deterministic=True) for c in clones[1:]],
            len(e.features.feature),
        )

    check(body)


def _indexed(tf, ix, values):
    return tf.train.Example(
        features=tf.train.Features(
            feature={
                "ix": tf.train.Feature(int64_list=tf.train.Int64List(value=ix)),
                "v": tf.train.Feature(float_list=tf.train.FloatList(value=values)),
            }
        )
    ).SerializeToString()


def test_sparse_features():
    def body(tf):
        S = tf.io.SparseFeature
        single = tf.io.parse_single_example(_indexed(tf, [3, 1], [0.5, 1.5]), {"s": S("ix", "v", tf.float32, 5)})
        batch = tf.io.parse_example(
            [_indexed(tf, [3, 1], [0.5, 1.5]), _indexed(tf, [0], [2.0])],
            {"s": S("ix", "v", tf.float32, 5), "f": tf.io.FixedLenFeature([1], tf.float32, default_value=[0.0])},
        )
        presorted = tf.io.parse_single_example(
            _indexed(tf, [3, 1], [0.5, 1.5]), {"s": S("ix", "v", tf.float32, 5, already_sorted=True)}
        )
        outside = tf.io.parse_single_example(_indexed(tf, [7], [0.5]), {"s": S("ix", "v", tf.float32, 5)})
        return (
            _parts(single),
            list(batch),
            _parts(batch),
            _parts(presorted),
            _parts(outside),
            repr(S("ix", "v", tf.float32, 5)),
        )

    check(body)


def test_sparse_feature_errors():
    check_raises(
        lambda tf: tf.io.parse_single_example(
            _indexed(tf, [3], [0.5, 1.5]), {"s": tf.io.SparseFeature("ix", "v", tf.float32, 5)}
        ),
        messages=True,
    )
