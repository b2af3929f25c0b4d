"""tf.distribute against TF 2.21's MirroredStrategy on 8 logical CPUs.

Both sides run the same programs (`distribute_cases.py`) in child processes: TF with 8
logical CPU devices, tapeshim with 8 simulated JAX CPU devices (a JAX backend can only
get them before it starts, and this process's has started). Each side runs every case
once per session; the tests compare per-step losses, weights, optimizer slots, metrics,
reduce/gather results, dataset splits and error classes.
"""

from __future__ import annotations

import os
import pickle
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import distribute_cases
import numpy as np
import pytest

_HERE = Path(__file__).parent


def _run_children(directory: Path) -> dict:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "TF_ENABLE_ONEDNN_OPTS": "0"}
    env.pop("XLA_FLAGS", None)
    env.pop("TF_CONFIG", None)
    children = {}
    for side in ("tf", "tapeshim"):
        out = os.path.join(directory, f"{side}.pkl")
        children[side] = (
            out,
            subprocess.Popen(
                [sys.executable, str(_HERE / "distribute_cases.py"), side, out],
                cwd=_HERE,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            ),
        )
    results = {}
    for side, (out, child) in children.items():
        output, _ = child.communicate(timeout=600)
        assert child.returncode == 0, f"the {side} child failed:\n{output.decode()[-3000:]}"
        with open(out, "rb") as f:
            results[side] = pickle.load(f)
    return results


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return _run_children(tmp_path_factory.mktemp("distribute_"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory) -> list:
    """Two MultiWorkerMirroredStrategy processes x 4 CPU devices on loopback (TF_CONFIG, jax.distributed)."""
    directory = tmp_path_factory.mktemp("distribute_workers_")
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    ports = [str(_free_port()), str(_free_port())]
    children = []
    for index in range(2):
        out = os.path.join(directory, f"worker{index}.pkl")
        children.append(
            (
                out,
                subprocess.Popen(
                    [sys.executable, str(_HERE / "distribute_multiworker.py"), str(index), *ports, out],
                    cwd=_HERE,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                ),
            )
        )
    loaded = []
    for out, child in children:
        output, _ = child.communicate(timeout=600)
        assert child.returncode == 0, f"a worker failed:\n{output.decode()[-3000:]}"
        with open(out, "rb") as f:
            loaded.append(pickle.load(f))
    return loaded


def _assert_same(expected: Any, actual: Any, path: str) -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and sorted(actual) == sorted(expected), f"{path}: {actual!r} vs TF {expected!r}"
        for key in expected:
            _assert_same(expected[key], actual[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{path}: {actual!r} vs TF {expected!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            _assert_same(e, a, f"{path}[{i}]")
    elif isinstance(expected, np.ndarray):
        actual = np.asarray(actual)
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, (
            f"{path}: {actual.dtype}{actual.shape} vs TF {expected.dtype}{expected.shape}"
        )
        np.testing.assert_allclose(actual, expected, rtol=2e-5, atol=2e-6, err_msg=path)
    elif isinstance(expected, float):
        assert isinstance(actual, float) and np.isclose(actual, expected, rtol=2e-5, atol=2e-6), (
            f"{path}: {actual!r} vs TF {expected!r}"
        )
    else:
        assert actual == expected and type(actual) is type(expected), f"{path}: {actual!r} vs TF {expected!r}"


@pytest.mark.parametrize("name", sorted(distribute_cases.CASES))
def test_same_as_tf_mirrored_strategy(results: dict, name: str) -> None:
    expected, actual = results["tf"][name], results["tapeshim"][name]
    assert "raised" not in expected, f"TF raised: {expected.get('message')}"
    assert "raised" not in actual, f"tapeshim raised {actual.get('raised')}: {actual.get('trace')}"
    _assert_same(expected["result"], actual["result"], name)


def _only(results: dict, name: str) -> dict:
    outcome = results["tapeshim"][name]
    assert "raised" not in outcome, outcome.get("trace")
    return outcome["result"]


def test_gradients_in_replicas_are_local_not_summed_by_shard_map(results: dict) -> None:
    """The trap: under shard_map's default check_vma=True, gradients of replicated values come back already
    summed over the mesh, and the optimizer's all-reduce then applies N times the update, silently."""
    result = _only(results, "gradient_trap")
    grads = np.stack(result["grads"])
    assert not np.allclose(grads[0], grads[1]), "per-replica gradients are identical: they were summed"
    np.testing.assert_allclose(grads.sum(axis=0), result["single"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(result["w"], result["single_step"], rtol=1e-5, atol=1e-6)


def test_steady_loop_compiles_once_and_keeps_variables_replicated(results: dict) -> None:
    result = _only(results, "steady_loop")
    assert result["traces"] == 1
    assert result["compiled_after_first"] == 0
    assert result["shards_equal"] and result["replicated"] and result["devices"] == 8


def test_errors_say_what_to_do(results: dict) -> None:
    result = _only(results, "errors")
    kind, message = result["uneven"]
    assert kind == "InvalidArgumentError"
    assert "20" in message and "8 replicas" in message and "drop_remainder=True" in message
    assert result["fit_uneven"][0] == "InvalidArgumentError" and "drop_remainder" in result["fit_uneven"][1]
    kind, message = result["parameter_server"]
    assert kind == "NotImplementedError" and "MultiWorkerMirroredStrategy" in message
    assert result["tpu"][0] == "ValueError" and "TPU" in result["tpu"][1]
    assert result["bad_device"][0] == "ValueError" and "/gpu:9" in result["bad_device"][1]
    assert result["bad_tf_config"][0] == "ValueError" and "index 5" in result["bad_tf_config"][1]
    kind, message = result["after_ops"]
    assert kind == "RuntimeError" and "program startup" in message and "before any tapeshim op" in message
    assert result["single_worker"] == 1
    assert result["one_device"] == 6.0


def test_random_ops_differ_per_replica(results: dict) -> None:
    result = _only(results, "random_per_replica")
    assert result["distinct_replicas"] == 8 and result["new_each_call"]


def test_multi_worker_equals_tf_eight_replicas(results: dict, workers: list) -> None:
    """2 processes x 4 devices give TF's single-process 8-replica results; each holds its own 4 replicas."""
    assert [w["num_replicas"] for w in workers] == [8, 8]
    assert [w["task"] for w in workers] == [("worker", 0), ("worker", 1)]
    for name in ("linear_step", "tutorial_adam"):
        expected = results["tf"][name]["result"]
        per_worker = []
        for worker in workers:
            assert "raised" not in worker[name], worker[name].get("trace")
            per_worker.append(worker[name]["result"])
        for key, value in expected.items():
            if key in ("losses", "grads") and name == "linear_step":  # per replica: 4 on each worker
                _assert_same(value, per_worker[0][key] + per_worker[1][key], f"{name}.{key}")
            else:
                for result in per_worker:
                    _assert_same(value, result[key], f"{name}.{key}")
    contexts = [w["datasets_from_function"]["result"]["contexts"] for w in workers]
    assert contexts == [[[2, 0, 8, 2]], [[2, 1, 8, 2]]]
