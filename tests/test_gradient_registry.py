"""`tf.RegisterGradient` and `tf.no_gradient` against TF: registering new op types, the op types TF registers
already (a `KeyError`), bad op types (a `TypeError`).

TF keeps one registry per process, so each registration of a new op type uses a name no other test uses.
"""

import itertools

import pytest

from oracle import check, check_raises, real_tf
from tapeshim._src import gradient_registry
from tapeshim._src.raw_ops import RAW_OPS

_COUNTER = itertools.count()


def _new_op_type():
    return f"TapeshimTestOp{next(_COUNTER)}"


def _register_gradient(tf):
    return tf.RegisterGradient


def _no_gradient(tf):
    return tf.no_gradient


def _grad(op, grad):
    return grad


def test_register_new_op_type_returns_the_function():
    def body(tf):
        register = _register_gradient(tf)(_new_op_type())
        return register(_grad) is _grad, type(register).__name__

    check(body)


def test_register_twice_raises_key_error():
    def body(tf):
        op_type = _new_op_type()
        _register_gradient(tf)(op_type)(_grad)
        return _register_gradient(tf)(op_type)(_grad)

    raised = check_raises(body)
    assert raised.message.startswith("\"Registering two gradient with name 'TapeshimTestOp")


@pytest.mark.parametrize("op_type", ["Relu", "MatMul", "Conv2D", "Sum", "Shape", "Equal", "StopGradient"])
def test_register_known_op_type_raises_key_error(op_type):
    def body(tf):
        register = _register_gradient(tf)(op_type)  # constructing the decorator succeeds
        return register(_grad)

    raised = check_raises(body)
    assert f"Registering two gradient with name '{op_type}'!" in raised.message


@pytest.mark.parametrize("op_type", [3, None, b"Relu"])
def test_register_bad_op_type_raises_type_error(op_type):
    check_raises(lambda tf: _register_gradient(tf)(op_type), messages=True)


def test_no_gradient_new_op_type():
    def body(tf):
        op_type = _new_op_type()
        first = _no_gradient(tf)(op_type)
        return first

    check(body)


def test_no_gradient_twice_raises_key_error():
    def body(tf):
        op_type = _new_op_type()
        _no_gradient(tf)(op_type)
        return _no_gradient(tf)(op_type)

    check_raises(body)


def test_no_gradient_after_register_raises_key_error():
    def body(tf):
        op_type = _new_op_type()
        _register_gradient(tf)(op_type)(_grad)
        return _no_gradient(tf)(op_type)

    check_raises(body)


@pytest.mark.parametrize("op_type", ["Shape", "Relu", "Less"])
def test_no_gradient_known_op_type_raises_key_error(op_type):
    check_raises(lambda tf: _no_gradient(tf)(op_type))


@pytest.mark.parametrize("op_type", [3, None])
def test_no_gradient_bad_op_type_raises_type_error(op_type):
    check_raises(lambda tf: _no_gradient(tf)(op_type), messages=True)


def test_aliases_are_no_gradient():
    assert gradient_registry.NoGradient is gradient_registry.no_gradient
    assert gradient_registry.NotDifferentiable is gradient_registry.no_gradient
    assert real_tf.compat.v1.NoGradient is real_tf.no_gradient
    assert real_tf.compat.v1.NotDifferentiable is real_tf.no_gradient


def test_registry_matches_tfs_for_every_raw_op():
    """Each raw op type is registered exactly when TF registers it, with a gradient exactly when TF has one."""
    from tensorflow.python.framework import ops  # TF's registry, to keep the op lists honest

    def entry(registry, op_type):
        try:
            return "gradient" if registry.lookup(op_type) is not None else "none"
        except LookupError:
            return "unregistered"

    for op_type in RAW_OPS:
        assert entry(gradient_registry.registry, op_type) == entry(ops._gradient_registry, op_type), op_type


def test_lookup():
    assert gradient_registry.get_gradient_function("Shape") is None
    assert gradient_registry.get_gradient_function("Relu") is not None
    with pytest.raises(LookupError):
        gradient_registry.get_gradient_function("NoSuchOpType")
