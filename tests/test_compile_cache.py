"""JAX's persistent compilation cache, turned on by `import tapeshim` (`tapeshim/_src/compile_cache.py`).

Each case runs fresh Python processes: the cache is configured once per process, at import. A program that
an earlier process compiled loads from the cache (JAX counts a cache hit) and gives the same values; the
user's own cache directory, and `TAPESHIM_COMPILATION_CACHE_DIR=off`, are left as they are.
"""

import json
import os
import subprocess
import sys

import numpy as np

_PROGRAM = """
import json, jax
hits = []
jax.monitoring.register_event_listener(lambda event, **kw: hits.append(event) if event.endswith("cache_hits") else None)
import numpy as np
import tapeshim as tf
from tapeshim._src import background_compile
w = tf.Variable(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4))
x = tf.constant(np.arange(6.0, dtype=np.float32).reshape(2, 3))

@tf.function
def step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.tanh(tf.matmul(x, w)) ** 2)
    w.assign_sub(0.1 * tape.gradient(loss, w))
    return loss

losses = []
for _ in range(1500):  # (its first calls run on the host: compile_tiers.calls_before_compile)
    losses.append(float(step()))
    background_compile.wait()
print(json.dumps({"losses": losses, "hits": len(hits), "directory": jax.config.jax_compilation_cache_dir,
                  "min_seconds": jax.config.jax_persistent_cache_min_compile_time_secs}))
"""


def _run(env_changes: dict) -> dict:
    env = {
        k: v for k, v in os.environ.items() if k not in ("TAPESHIM_COMPILATION_CACHE_DIR", "JAX_COMPILATION_CACHE_DIR")
    }
    env.update(env_changes)
    done = subprocess.run([sys.executable, "-c", _PROGRAM], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_later_run_loads_the_programs_an_earlier_run_compiled(tmp_path):
    env = {"TAPESHIM_COMPILATION_CACHE_DIR": str(tmp_path / "xla")}
    first = _run(env)
    assert os.path.dirname(first["directory"]) == str(tmp_path / "xla"), "in a folder for this processor"
    assert first["min_seconds"] == 0.0
    assert first["hits"] == 0 and os.listdir(first["directory"]), "the first run wrote its programs"
    second = _run(env)
    assert second["hits"] > 0, "the second run read programs from the cache"
    np.testing.assert_array_equal(second["losses"], first["losses"])


def test_the_folder_names_this_processor():
    from tapeshim._src import compile_cache

    folder = compile_cache.host_folder()
    assert folder == compile_cache.host_folder() and os.sep not in folder and len(folder) > 16


def test_the_cache_turned_off():
    for value in ("off", "0", ""):
        outcome = _run({"TAPESHIM_COMPILATION_CACHE_DIR": value})
        assert outcome["directory"] is None and outcome["hits"] == 0


def test_a_cache_directory_given_to_jax_is_the_users(tmp_path):
    outcome = _run({"JAX_COMPILATION_CACHE_DIR": str(tmp_path / "mine"), "TAPESHIM_COMPILATION_CACHE_DIR": "x"})
    assert outcome["directory"] == str(tmp_path / "mine")
    assert outcome["min_seconds"] == 1.0, "JAX's own threshold, as the user left it"


def test_a_directory_that_cannot_be_made_leaves_the_cache_off(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    outcome = _run({"TAPESHIM_COMPILATION_CACHE_DIR": str(blocker / "xla")})
    assert outcome["directory"] is None
    assert len(outcome["losses"]) == 1500
