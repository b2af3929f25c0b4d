"""`import keras` beside `import tapeshim as tf`, in either order, in fresh child processes.

Keras reads its backend once, when it is first imported, so each case runs in its
own Python process. The values a small `tf.keras` script computes are compared
with the same script run with real TensorFlow (its Keras on the TensorFlow
backend); the backend Keras chose, and the errors that say how to fix an order
that cannot work, are tapeshim's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

# Put in front of a child's script: makes `import tensorflow` fail, as where TF is not installed.
HIDE_TENSORFLOW = textwrap.dedent("""
    import sys
    class _HideTensorFlow:
        def find_spec(self, name, path=None, target=None):
            if name == "tensorflow" or name.startswith("tensorflow."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None
    sys.meta_path.insert(0, _HideTensorFlow())
""")

# A user's script: a Keras layer under a tape, and Keras's own ops; prints what it computed as JSON.
KERAS_SCRIPT = textwrap.dedent("""
    layer = tf.keras.layers.Dense(2, kernel_initializer="ones", bias_initializer="zeros")
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(layer(x) ** 2)
    grads = tape.gradient(y, layer.trainable_variables)
    plain = keras.ops.convert_to_numpy(keras.ops.sum(keras.ops.ones((2, 3))))
    print("RESULT " + json.dumps({
        "values": {"y": float(y), "grads": [g.numpy().tolist() for g in grads], "plain": float(plain)},
        "backend": keras.backend.backend(), "tensorflow_imported": "tensorflow" in sys.modules}))
""")

TAPESHIM_FIRST = "import json, sys\nimport tapeshim as tf\nimport keras\n"
KERAS_FIRST = "import json, sys\nimport keras\nimport tapeshim as tf\n"


def _run_child(source: str, keras_backend: str | None = None) -> dict:
    """Runs `source` in a fresh interpreter (KERAS_BACKEND as given, else unset); its RESULT line."""
    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    if keras_backend is not None:
        env["KERAS_BACKEND"] = keras_backend
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, f"child failed:\n{done.stdout}\n{done.stderr[-3000:]}"
    return json.loads(lines[-1][len("RESULT ") :])


@pytest.fixture(scope="module")
def tensorflow_values() -> dict:
    """The oracle: the script with real TensorFlow, its Keras on the TensorFlow backend."""
    result = _run_child("import json, sys\nimport tensorflow as tf\nimport keras\n" + KERAS_SCRIPT)
    assert result["backend"] == "tensorflow"
    return result["values"]


@pytest.mark.parametrize("tensorflow_installed", [True, False], ids=["with_tf", "without_tf"])
def test_import_tapeshim_then_keras(tensorflow_values, tensorflow_installed):
    prelude = "" if tensorflow_installed else HIDE_TENSORFLOW
    result = _run_child(prelude + TAPESHIM_FIRST + KERAS_SCRIPT)
    assert result["values"] == tensorflow_values
    assert result["backend"] == "jax"
    assert result["tensorflow_imported"] is False  # `import keras` no longer pulls in TensorFlow


def test_import_keras_then_tapeshim_with_keras_backend_jax(tensorflow_values):
    result = _run_child(HIDE_TENSORFLOW + KERAS_FIRST + KERAS_SCRIPT, keras_backend="jax")
    assert result["values"] == tensorflow_values
    assert result["backend"] == "jax"


def test_keras_imported_first_on_tensorflow_says_to_import_tapeshim_first():
    source = KERAS_FIRST + textwrap.dedent("""
        try:
            tf.keras
        except ImportError as exc:
            print("RESULT " + json.dumps({"error": str(exc), "backend": keras.backend.backend()}))
    """)
    result = _run_child(source)
    assert result["backend"] == "tensorflow"
    assert "already imported Keras with the 'tensorflow' backend" in result["error"]
    assert "put `import tapeshim` before `import keras`" in result["error"]


def test_keras_backend_chosen_by_the_user_is_kept_and_named_in_the_error():
    source = TAPESHIM_FIRST + textwrap.dedent("""
        try:
            tf.keras
        except ImportError as exc:
            print("RESULT " + json.dumps({"error": str(exc), "backend": keras.backend.backend()}))
    """)
    result = _run_child(source, keras_backend="tensorflow")
    assert result["backend"] == "tensorflow"
    assert "KERAS_BACKEND is set to 'tensorflow': unset it or set KERAS_BACKEND=jax" in result["error"]


def test_tf_keras_works_after_keras_failed_to_import_without_tensorflow(tensorflow_values):
    # Keras's default backend is TensorFlow: without it `import keras` fails (Keras's own error);
    # tapeshim imported afterwards still gets a working Keras on JAX.
    source = (
        HIDE_TENSORFLOW
        + textwrap.dedent("""
        import json, sys
        try:
            import keras
        except ImportError:
            pass
        import tapeshim as tf
        tf.keras
        import keras
    """)
        + KERAS_SCRIPT
    )
    result = _run_child(source)
    assert result["values"] == tensorflow_values
    assert result["backend"] == "jax"
