"""Strategies over several processes or accelerators: MultiWorkerMirrored (`jax.distributed`), TPU, and the
refused ParameterServer strategy.

`MultiWorkerMirroredStrategy()` reads `TF_CONFIG` (`cluster` with `chief`/`worker` address lists, and `task`):
processes are ranked chief first, then workers in order; the coordinator is rank 0's `host:port`. It calls
`jax.distributed.initialize(coordinator_address, num_processes, process_id)`, so, as in TF, it must be
created at program start-up, before any tapeshim op. Its mesh is `jax.devices()` (every process's devices,
process-major), so replica `i` is the i-th device overall and each process holds its own replicas' rows.
"""

from __future__ import annotations

import json
import os
from typing import Any

import jax

from tapeshim._src.distribute.strategy import Strategy, default_devices, resolve_device


class ClusterSpec:
    """A cluster's jobs and task addresses, as `tf.train.ClusterSpec`.

    Args:
      cluster: `{"worker": ["host:port", ...], "chief": [...]}`.
    """

    def __init__(self, cluster: Any) -> None:
        if isinstance(cluster, ClusterSpec):  # TF copies through its ClusterDef proto: jobs in name order
            cluster = dict(sorted(cluster.as_dict().items()))
        if not isinstance(cluster, dict):
            raise TypeError(
                "`cluster` must be a dictionary mapping one or more job names to lists of network "
                "addresses, or a `ClusterDef` protocol buffer"
            )
        self._cluster = {job: list(tasks) for job, tasks in cluster.items()}

    def as_dict(self) -> dict:
        return {job: list(tasks) for job, tasks in self._cluster.items()}

    @property
    def jobs(self) -> list:
        return list(self._cluster)

    def num_tasks(self, job_name: str) -> int:
        return len(self._cluster[job_name])

    def task_address(self, job_name: str, task_index: int) -> str:
        return self._cluster[job_name][task_index]

    def task_indices(self, job_name: str) -> list:
        return list(range(len(self._cluster[job_name])))

    def __bool__(self) -> bool:
        return bool(self._cluster)

    def __repr__(self) -> str:
        return f"ClusterSpec({self._cluster!r})"


class TFConfigClusterResolver:
    """The cluster described by the `TF_CONFIG` environment variable, as TF's `TFConfigClusterResolver`.

    Raises:
      ValueError: `TF_CONFIG` is not valid JSON, or its `task` does not name a task of its `cluster`.
    """

    def __init__(
        self,
        task_type: str | None = None,
        task_id: int | None = None,
        rpc_layer: str | None = None,
        environment: str | None = None,
    ) -> None:
        text = os.environ.get("TF_CONFIG", "")
        try:
            config = json.loads(text) if text else {}
        except json.JSONDecodeError as exc:
            raise ValueError(f"TF_CONFIG is not valid JSON ({exc}): {text!r}") from None
        self._cluster = ClusterSpec(config.get("cluster", {}))
        task = config.get("task", {})
        self.task_type = task_type if task_type is not None else task.get("type")
        self.task_id = int(task_id if task_id is not None else task.get("index", 0))
        self.rpc_layer = rpc_layer or config.get("rpc_layer")
        self.environment = environment or config.get("environment", "")
        if self._cluster:
            jobs = self._cluster.as_dict()
            if self.task_type not in jobs:
                raise ValueError(
                    f"TF_CONFIG's task type {self.task_type!r} is not a job of its cluster "
                    f"{sorted(jobs)}: set TF_CONFIG['task']['type'] to one of them."
                )
            if not 0 <= self.task_id < len(jobs[self.task_type]):
                raise ValueError(
                    f"TF_CONFIG's task index {self.task_id} is out of range for job {self.task_type!r}, "
                    f"which has {len(jobs[self.task_type])} task(s): each process needs its own index "
                    "0..n-1."
                )

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster

    def ranked_tasks(self) -> list[tuple[str, int, str]]:
        """Every `(job, index, address)` in process order: the chief first, then the workers."""
        jobs = self._cluster.as_dict()
        ranked = []
        for job in ("chief", "worker"):
            ranked += [(job, i, address) for i, address in enumerate(jobs.get(job, []))]
        return ranked

    def master(self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None) -> str:
        tasks = self.ranked_tasks()
        return tasks[0][2] if tasks else ""

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict:
        local = jax.local_devices()
        return {local[0].platform.upper(): len(local)} if local[0].platform != "cpu" else {}


class CommunicationOptions:
    """Accepted for compatibility (`tf.distribute.experimental.CommunicationOptions`): XLA picks collectives."""

    def __init__(
        self, bytes_per_pack: int = 0, timeout_seconds: float | None = None, implementation: Any = None
    ) -> None:
        self.bytes_per_pack = bytes_per_pack
        self.timeout_seconds = timeout_seconds
        self.implementation = implementation


class CommunicationImplementation:
    """`tf.distribute.experimental.CommunicationImplementation` (accepted, ignored)."""

    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


def _initialize(resolver: TFConfigClusterResolver) -> None:
    tasks = resolver.ranked_tasks()
    rank = [(job, index) for job, index, _ in tasks].index((resolver.task_type, resolver.task_id))
    if jax.distributed.is_initialized():
        if jax.process_count() != len(tasks) or jax.process_index() != rank:
            raise ValueError(
                f"jax.distributed is already initialized with {jax.process_count()} processes "
                f"(this one {jax.process_index()}), but TF_CONFIG describes {len(tasks)} (this one "
                f"{rank})."
            )
        return
    try:
        jax.distributed.initialize(coordinator_address=tasks[0][2], num_processes=len(tasks), process_id=rank)
    except RuntimeError as exc:
        raise RuntimeError(
            "Collective ops must be configured at program startup: create the MultiWorkerMirroredStrategy before "
            "any tapeshim op runs (tapeshim starts jax.distributed from TF_CONFIG, which must precede JAX's first "
            f"computation). JAX said: {exc}"
        ) from None
    # Keras's own multi-process start-up: one random seed for every process, so Keras initializers give
    # every process the same initial weights (Keras requires replicated values to be equal on each process).
    from tapeshim._src.keras_compat import initialize_multi_process_rng  # here: `import tapeshim` imports no Keras

    initialize_multi_process_rng()


class MultiWorkerMirroredStrategy(Strategy):
    """Synchronous data parallelism over several processes, as `tf.distribute.MultiWorkerMirroredStrategy`.

    Args:
      communication_options: accepted (XLA picks the collectives).
      cluster_resolver: the cluster (default: `TFConfigClusterResolver()`, from `TF_CONFIG`).

    Raises:
      RuntimeError: created after a tapeshim op ran, in a multi-process cluster.
      ValueError: a `TF_CONFIG` whose task is not in its cluster.
    """

    def __init__(self, communication_options: Any = None, cluster_resolver: Any = None) -> None:
        resolver = cluster_resolver if cluster_resolver is not None else TFConfigClusterResolver()
        if len(resolver.ranked_tasks()) > 1:
            _initialize(resolver)
            devices = list(jax.devices())
        else:
            devices = default_devices()
        super().__init__(devices)
        self.cluster_resolver = resolver


class TPUClusterResolver:
    """`tf.distribute.cluster_resolver.TPUClusterResolver`: JAX finds the TPUs itself, so this only records."""

    def __init__(
        self,
        tpu: Any = None,
        zone: Any = None,
        project: Any = None,
        job_name: str = "worker",
        coordinator_name: Any = None,
        coordinator_address: Any = None,
        credentials: str = "default",
        service: Any = None,
        discovery_url: Any = None,
    ) -> None:
        self.tpu = tpu
        self.task_type = job_name
        self.task_id = 0

    @staticmethod
    def connect(tpu: Any = None, zone: Any = None, project: Any = None) -> "TPUClusterResolver":
        return TPUClusterResolver(tpu, zone, project)

    def cluster_spec(self) -> ClusterSpec:
        return ClusterSpec({})

    def master(self, *args: Any, **kwargs: Any) -> str:
        return ""


def experimental_connect_to_cluster(
    cluster_spec_or_resolver: Any,
    job_name: str = "localhost",
    task_index: int = 0,
    protocol: Any = None,
    make_master_device_default: bool = True,
    cluster_device_filters: Any = None,
) -> None:
    """`tf.config.experimental_connect_to_cluster`: JAX connects to its devices itself, so this only checks.

    A TPU host's JAX sees its TPUs without a connection step, and several hosts are joined by
    `MultiWorkerMirroredStrategy` (`jax.distributed`), so programs that call this before
    `initialize_tpu_system` run unchanged.

    Raises:
      ValueError: `cluster_spec_or_resolver` is neither a `ClusterSpec` nor a cluster resolver.
    """
    if not isinstance(cluster_spec_or_resolver, (ClusterSpec, TFConfigClusterResolver, TPUClusterResolver)):
        raise ValueError("`cluster_spec_or_resolver` must be a `ClusterSpec` or a `ClusterResolver`.")


def tpu_devices() -> list:
    """JAX's TPU devices (every process's)."""
    try:
        return list(jax.devices("tpu"))
    except RuntimeError:
        return []


def initialize_tpu_system(cluster_resolver: Any = None) -> None:
    """`tf.tpu.experimental.initialize_tpu_system`: JAX initialises TPUs itself; checks that there are some.

    Raises:
      ValueError: JAX sees no TPU.
    """
    if not tpu_devices():
        raise _no_tpu_error()


def _no_tpu_error() -> ValueError:
    return ValueError(
        "No TPU devices are visible to JAX (jax.devices('tpu') is empty): TPUStrategy needs a TPU host "
        "with jax[tpu] installed. Use MirroredStrategy for GPUs or CPUs."
    )


class TPUStrategy(Strategy):
    """Synchronous data parallelism over the TPU cores, as `tf.distribute.TPUStrategy`.

    Args:
      tpu_cluster_resolver: accepted (JAX finds the TPUs).
      experimental_device_assignment: accepted.

    Raises:
      ValueError: JAX sees no TPU.
    """

    def __init__(
        self,
        tpu_cluster_resolver: Any = None,
        experimental_device_assignment: Any = None,
        experimental_spmd_xla_partitioning: bool = False,
    ) -> None:
        devices = tpu_devices()
        if not devices:
            raise _no_tpu_error()
        super().__init__(devices)
        self.cluster_resolver = tpu_cluster_resolver


class ParameterServerStrategy:
    """Refused: asynchronous parameter-server training has no counterpart on JAX's SPMD machinery."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "tf.distribute.experimental.ParameterServerStrategy (asynchronous training with a ClusterCoordinator) "
            "is not supported by tapeshim: JAX has no parameter-server runtime. Use "
            "tf.distribute.MultiWorkerMirroredStrategy (synchronous data parallelism over jax.distributed) or "
            "MirroredStrategy instead."
        )


class CentralStorageStrategy(Strategy):
    """`tf.distribute.experimental.CentralStorageStrategy`: numerically a MirroredStrategy on the local devices."""

    def __init__(self, compute_devices: Any = None, parameter_device: Any = None) -> None:
        super().__init__(default_devices() if compute_devices is None else [resolve_device(d) for d in compute_devices])
