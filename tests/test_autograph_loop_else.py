"""Loops with an `else` clause inside `tf.function`, against TF 2.21: its AutoGraph does not convert a function
whose source has one (nested functions included); it logs why and runs the function as it is."""

import logging
import re

from oracle import check, check_raises


def _logged(tf, run):
    """What `run()` returns, and the AutoGraph warnings it logged (function addresses left out)."""
    records = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    logger = logging.getLogger("tensorflow")
    logger.addHandler(handler)
    try:
        result = run()
    finally:
        logger.removeHandler(handler)
    messages = [re.sub(r" at 0x[0-9a-f]+", "", m) for m in records if m.startswith("AutoGraph could not transform")]
    return result, messages


def test_a_python_loop_with_an_else_runs_unconverted_with_tfs_warning():
    def body(tf):
        @tf.function
        def python_else(x):
            for k in range(3):
                x = x + k
            else:
                x = x * 2
            i = 0
            while i < 2:
                i += 1
            else:
                x = x - 1
            return x

        def inner_else(x):
            def scaled(y):
                for k in range(2):
                    y = y + k
                else:
                    y = y + 1
                return y

            return scaled(x) * 2

        return _logged(tf, lambda: (python_else(tf.constant(1.0)), tf.function(inner_else)(tf.constant(1))))

    result = check(body)
    assert len(result[1]) == 2 and "Cause: for/else statement not yet supported" in result[1][0]


def test_a_tensor_loop_with_an_else_raises_tfs_error():
    def body(tf):
        @tf.function
        def search(x, target):
            found = tf.constant(-1)
            i = tf.constant(0)
            for v in x:
                if v == target:
                    found = i
                    break
                i += 1
            else:
                found = tf.constant(-2)
            return found

        return search(tf.constant([1.0, 2.0, 3.0]), tf.constant(2.0))

    assert check_raises(body).name == "OperatorNotAllowedInGraphError"


def test_to_code_of_a_loop_with_an_else_raises_tfs_error():
    def body(tf):
        def f(x):
            while x < 3:
                x += 1
            else:
                x -= 1
            return x

        return tf.autograph.to_code(f)

    raised = check_raises(body, messages=True)
    assert raised.name == "UnsupportedLanguageElementError"
