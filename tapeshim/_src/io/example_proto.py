"""`tf.train.Example` and its parts, wire-compatible with TF's `example.proto` and `feature.proto`."""

from __future__ import annotations

from tapeshim._src.io.proto import Field, Message


class BytesList(Message):
    """A list of byte strings (`repeated bytes value = 1`)."""

    FIELDS = (Field("value", 1, "bytes", repeated=True),)


class FloatList(Message):
    """A list of float32 values (`repeated float value = 1 [packed = true]`)."""

    FIELDS = (Field("value", 1, "float", repeated=True, packed=True),)


class Int64List(Message):
    """A list of int64 values (`repeated int64 value = 1 [packed = true]`)."""

    FIELDS = (Field("value", 1, "int64", repeated=True, packed=True),)


class Feature(Message):
    """One of a `BytesList`, `FloatList` or `Int64List` (the oneof `kind`)."""

    FIELDS = (
        Field("bytes_list", 1, "message", message=lambda: BytesList, oneof="kind"),
        Field("float_list", 2, "message", message=lambda: FloatList, oneof="kind"),
        Field("int64_list", 3, "message", message=lambda: Int64List, oneof="kind"),
    )


class Features(Message):
    """Named features (`map<string, Feature> feature = 1`)."""

    FIELDS = (Field("feature", 1, "message", message=lambda: Feature, is_map=True),)


class FeatureList(Message):
    """A sequence of features (`repeated Feature feature = 1`)."""

    FIELDS = (Field("feature", 1, "message", repeated=True, message=lambda: Feature),)


class FeatureLists(Message):
    """Named feature lists (`map<string, FeatureList> feature_list = 1`)."""

    FIELDS = (Field("feature_list", 1, "message", message=lambda: FeatureList, is_map=True),)


class Example(Message):
    """A record of named features (`Features features = 1`)."""

    FIELDS = (Field("features", 1, "message", message=lambda: Features),)


class SequenceExample(Message):
    """Context features plus named feature sequences."""

    FIELDS = (
        Field("context", 1, "message", message=lambda: Features),
        Field("feature_lists", 2, "message", message=lambda: FeatureLists),
    )
