"""One worker of a 2-process MultiWorkerMirroredStrategy run on loopback (4 simulated CPU devices each).

`python distribute_multiworker.py INDEX PORT0 PORT1 OUT` sets `TF_CONFIG` for two workers,
creates the strategy first (it starts `jax.distributed`), runs cases of `distribute_cases.py`
and pickles this worker's results (its replicas' values) to OUT.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import traceback

INDEX, PORTS, OUT = int(sys.argv[1]), sys.argv[2:4], sys.argv[4]
os.environ["TF_CONFIG"] = json.dumps(
    {"cluster": {"worker": [f"localhost:{p}" for p in PORTS]}, "task": {"type": "worker", "index": INDEX}}
)
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ["KERAS_BACKEND"] = "jax"

import tapeshim as tf  # noqa: E402

strategy = tf.distribute.MultiWorkerMirroredStrategy()  # before any op, as TF requires

import distribute_cases  # noqa: E402

results = {
    "num_replicas": strategy.num_replicas_in_sync,
    "task": (strategy.cluster_resolver.task_type, strategy.cluster_resolver.task_id),
}
for name in ("linear_step", "tutorial_adam", "datasets_from_function"):
    try:
        results[name] = {"result": distribute_cases.describe(distribute_cases.CASES[name](tf, strategy))}
    except Exception as exc:  # noqa: BLE001 - reported by the test
        results[name] = {"raised": type(exc).__name__, "message": str(exc), "trace": traceback.format_exc()}
with open(OUT, "wb") as f:
    pickle.dump(results, f)
import jax  # noqa: E402

jax.distributed.shutdown()
