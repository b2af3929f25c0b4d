"""`tf.errors` against real TensorFlow: the names, the error codes, and the classes' attributes."""

import tapeshim
from oracle import check


def _public(module):
    return sorted(name for name in dir(module) if not name.startswith("_"))


def test_the_same_names_as_tf_errors():
    import tensorflow as tf

    assert _public(tapeshim.errors) == _public(tf.errors)


def test_codes_and_classes():
    def body(tf):
        names = [name for name in dir(tf.errors) if not name.startswith("_")]
        codes = {name: getattr(tf.errors, name) for name in names if name.isupper()}
        classes = {
            name: (
                getattr(tf.errors, name)(None, None, "m").error_code,
                issubclass(getattr(tf.errors, name), tf.errors.OpError),
            )
            for name in names
            if name.endswith("Error") and name not in ("OpError", "OperatorNotAllowedInGraphError")
        }
        error = tf.errors.NotFoundError(None, None, "no such file")
        return (
            codes,
            classes,
            str(error),
            error.message,
            error.node_def,
            error.op,
            error.error_code,
            error.experimental_payloads,
            tf.errors.OpError(None, None, "m", 3).error_code,
        )

    check(body)
