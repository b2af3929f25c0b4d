"""What `import tapeshim` loads is frozen out of full garbage collections (`tapeshim/_src/gc_freeze.py`).

Each case runs a fresh Python process, since the freeze happens once, at import. The objects tracked when
the import finishes move to the collector's permanent generation; objects made later (tensors, tapes, a
user's reference cycles, also those alive when `tf.keras` is first used) are collected as before;
`TAPESHIM_GC_FREEZE=0` leaves the collector alone.
"""

import json
import os
import subprocess
import sys

import numpy as np

_PROGRAM = """
import gc, json, weakref
before = gc.get_freeze_count()
import numpy as np
import tapeshim as tf
after_import = gc.get_freeze_count()

class Holder:
    pass

before_keras = Holder()
before_keras.itself = before_keras  # a reference cycle alive when `tf.keras` is first used
before_keras.data = np.ones(1000)
kept_before_keras = weakref.ref(before_keras)
tf.keras.layers.Dense(2)
del before_keras

w = tf.Variable(np.ones((3, 2), np.float32))
holder = Holder()
holder.itself = holder  # a reference cycle, made after the imports
with tf.GradientTape() as tape:
    holder.loss = tf.reduce_sum(tf.tanh(tf.matmul(tf.ones((4, 3)) * 0.1, w)))
holder.grad = tape.gradient(holder.loss, w)
grad = holder.grad.numpy().tolist()
kept = weakref.ref(holder)
del holder
gc.collect()
print(json.dumps({"before": before, "after_import": after_import, "after_keras": gc.get_freeze_count(),
                  "collected": kept() is None, "collected_before_keras": kept_before_keras() is None, "grad": grad}))
"""


def _run(freeze: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TAPESHIM_GC_FREEZE"}
    if freeze is not None:
        env["TAPESHIM_GC_FREEZE"] = freeze
    done = subprocess.run([sys.executable, "-c", _PROGRAM], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _expected_grad() -> list:
    import tensorflow as real_tf

    w = real_tf.Variable(real_tf.ones((3, 2)))
    with real_tf.GradientTape() as tape:
        loss = real_tf.reduce_sum(real_tf.tanh(real_tf.matmul(real_tf.ones((4, 3)) * 0.1, w)))
    return tape.gradient(loss, w).numpy().tolist()


def test_the_imports_objects_are_frozen_and_later_cycles_are_still_collected():
    found = _run(None)
    assert found["before"] == 0
    assert found["after_import"] > 50_000, "what `import tapeshim` loaded (JAX, NumPy) is frozen"
    assert found["after_keras"] <= found["after_import"], "`tf.keras`, imported on first use, freezes nothing"
    assert found["collected"], "a cycle made after the import, holding tensors, is collected"
    assert found["collected_before_keras"], "and one alive when `tf.keras` was first used"
    np.testing.assert_allclose(found["grad"], _expected_grad(), rtol=1e-6)


def test_tapeshim_gc_freeze_off_leaves_the_collector_alone():
    for off in ("0", "off"):
        found = _run(off)
        assert found["after_import"] == found["after_keras"] == 0
        assert found["collected"] and found["collected_before_keras"]
        np.testing.assert_allclose(found["grad"], _expected_grad(), rtol=1e-6)
