"""The engine's element-moving ops on string tensors (strings_host.apply), compared with TF's public ops.

`registry.apply` hands ops with string inputs to `strings_host.apply`; most tests here call it with the engine's
own op definitions and the static arguments its wrappers pass, and the last ones go through the public ops.
"""

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises, real_tf
from tapeshim._src import strings_host
from tapeshim._src.ops import array_ops, manip_ops

S = [["a", "b", "c"], ["d", "e", "a"]]


def _ours(op, *inputs, static=()):
    return strings_host.apply(op, tuple(inputs), static)


CASES = {
    "reshape": (
        lambda tf: tf.reshape(tf.constant(S), [3, 2]),
        lambda t: _ours(array_ops._reshape_op, t.constant(S), static=(("shape", (3, 2)),))[0],
    ),
    "transpose": (
        lambda tf: tf.transpose(tf.constant(S)),
        lambda t: _ours(array_ops._transpose_op, t.constant(S), static=(("conjugate", False), ("perm", (1, 0))))[0],
    ),
    "concat": (
        lambda tf: tf.concat([tf.constant(S), tf.constant([["x", "y", "z"]])], 0),
        lambda t: _ours(array_ops._concat_op, t.constant(S), t.constant([["x", "y", "z"]]), static=(("axis", 0),))[0],
    ),
    "stack": (
        lambda tf: tf.stack([tf.constant(["a", "b"]), tf.constant(["c", "a"])], axis=1),
        lambda t: _ours(array_ops._stack_op, t.constant(["a", "b"]), t.constant(["c", "a"]), static=(("axis", 1),))[0],
    ),
    "where": (
        lambda tf: tf.where([True, False], tf.constant(["a", "b"]), tf.constant(["c", "d"])),
        lambda t: _ours(array_ops._where_op, t.constant([True, False]), t.constant(["a", "b"]), t.constant(["c", "d"]))[
            0
        ],
    ),
    "tile": (
        lambda tf: tf.tile(tf.constant(["a", "b"]), [3]),
        lambda t: _ours(manip_ops._tile_op, t.constant(["a", "b"]), static=(("multiples", (3,)),))[0],
    ),
    "reverse": (
        lambda tf: tf.reverse(tf.constant(S), [1]),
        lambda t: _ours(manip_ops._reverse_op, t.constant(S), static=(("axis", (1,)),))[0],
    ),
    "broadcast_to": (
        lambda tf: tf.broadcast_to(tf.constant(["a", "b"]), [2, 2]),
        lambda t: _ours(manip_ops._broadcast_op, t.constant(["a", "b"]), static=(("shape", (2, 2)),))[0],
    ),
    "expand_dims": (
        lambda tf: tf.expand_dims(tf.constant(["a", "b"]), 0),
        lambda t: _ours(array_ops._expand_dims_op, t.constant(["a", "b"]), static=(("axis", 0),))[0],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_moving_ops_match_tf(name):
    tf_body, ours_body = CASES[name]
    expected = tf_body(real_tf)
    actual = ours_body(tapeshim)
    assert actual.dtype == tapeshim.string
    assert tuple(actual.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())


def test_equal_codes_and_numeric_outputs():
    a, b = tapeshim.constant(["a", "b", "c"]), tapeshim.constant(["a", "x", "c"])
    (equal,) = strings_host.apply(_equal_op(), (a, b))
    np.testing.assert_array_equal(equal.numpy(), real_tf.equal(["a", "b", "c"], ["a", "x", "c"]).numpy())


def _equal_op():
    from tapeshim._src.registry import OpDef

    return OpDef("Equal", lambda x, y: x == y, False)


def test_other_ops_raise_tf_error_class():
    for tf in (real_tf, tapeshim):
        with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'T' of string"):
            tf.math.sin(tf.constant(["a"])) if tf is real_tf else _ours(manip_ops._one_hot_op, tf.constant(["a"]))


def test_cast_is_tf_unimplemented_error():
    from tapeshim._src.ops import math_ops

    with pytest.raises(real_tf.errors.UnimplementedError, match="Cast string to float is not supported"):
        real_tf.cast(real_tf.constant(["1"]), real_tf.float32)
    with pytest.raises(tapeshim.errors.UnimplementedError, match="Cast string to float is not supported"):
        _ours(math_ops._cast_op, tapeshim.constant(["1"]), static=(("dtype", "float32"),))


def test_public_ops_move_string_elements_as_tf():
    """tf.reshape/concat/gather/stack/... on tf.string tensors reach the host path through the op registry."""

    def body(tf):
        s = tf.constant([b"a", b"bb", b"", b"dd"])
        return (
            tf.reshape(s, [2, 2]),
            tf.concat([s, s], 0),
            tf.gather(s, [3, 0]),
            tf.stack([s, s], axis=1),
            tf.identity(s),
            tf.transpose(tf.reshape(s, [2, 2])),
            tf.tile(s, [2]),
            tf.reverse(s, [0]),
            tf.equal(s, tf.constant(b"bb")),
            tf.where(tf.constant([True, False, True, False]), s, s[::-1]),
        )

    check(body)


def test_numeric_ops_on_strings_raise_as_tf():
    check_raises(lambda tf: tf.sin(tf.constant(["a"])))
