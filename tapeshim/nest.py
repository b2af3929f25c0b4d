"""`tf.nest`: flattening and packing nested structures."""

from tapeshim._src.nest import assert_same_structure, flatten, is_nested, map_structure, pack_sequence_as  # noqa: F401
