"""`tf.test`'s functions: running tests, what the build and the devices support, and `tf.test.Benchmark`.

TF answers the `is_built_with_*` questions about its own binary; tapeshim answers them about JAX:
it is always "built with XLA" (XLA compiles every program), and with CUDA or ROCm when JAX has a
CUDA or ROCm plugin (or a jaxlib built with one) installed, or sees such a GPU. `is_gpu_available`
and `gpu_device_name` look at JAX's GPU devices (those `tf.config.set_visible_devices` left visible).
"""

from __future__ import annotations

import functools
import importlib.metadata
import inspect
import numbers
import os
import platform
import re
import sys
import time
import unittest
from typing import Any, Callable

import jax
import jax.numpy as jnp

from tapeshim._src import config
from tapeshim._src.ops import graph_ops
from tapeshim._src.tf_logging import get_logger
from tapeshim._src.tf_test_case import evaluate_nest


def main(argv: list[str] | None = None) -> Any:
    """Runs the tests of the `__main__` module, as `tf.test.main` (which runs absl's test runner).

    `--benchmarks=REGEX` runs the `benchmark*` methods of the `tf.test.Benchmark` subclasses whose
    `module.Class.method` name matches REGEX instead of the tests.

    Args:
      argv: the command line (default `sys.argv`).

    Returns:
      Nothing: like TF's, it exits the process with the tests' status.
    """
    arguments = list(sys.argv if argv is None else argv)
    pattern = None
    for index, argument in enumerate(arguments):
        if argument.startswith("--benchmarks="):
            pattern = argument.split("=", 1)[1]
            del arguments[index]
            break
    if pattern is not None:
        run_benchmarks(pattern)
        return None
    return unittest.main(module="__main__", argv=arguments)


# -- the build and the devices ------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _installed_plugin(kind: str) -> bool:
    """Whether a JAX plugin for `kind` (`"cuda"`, `"rocm"`) is installed, or jaxlib was built with it."""
    prefixes = (f"jax-{kind}", f"jax_{kind}")
    for distribution in importlib.metadata.distributions():
        name = (distribution.metadata["Name"] or "").lower()
        if name.startswith(prefixes):
            return True
    try:  # an old jaxlib built with CUDA says so in its version (`0.4.20+cuda12.cudnn89`)
        return kind in importlib.metadata.version("jaxlib")
    except importlib.metadata.PackageNotFoundError:
        return False


def _gpu_platform_versions() -> list[str]:
    versions = []
    for device in config.jax_devices_of("GPU"):
        client = getattr(device, "client", None)
        versions.append(str(getattr(client, "platform_version", "")).lower() + " " + device.platform)
    return versions


def is_built_with_cuda() -> bool:
    """Whether JAX can run on CUDA GPUs here (a CUDA plugin installed, or a CUDA GPU seen).

    TF answers about its binary (the official one is built with CUDA); tapeshim's "build" is the JAX
    installation: jaxlib itself is CPU-only, and CUDA comes with the `jax[cuda12]` plugin.
    """
    return _installed_plugin("cuda") or any("cuda" in v for v in _gpu_platform_versions())


def is_built_with_rocm() -> bool:
    """Whether JAX can run on ROCm GPUs here (a ROCm plugin installed, or a ROCm GPU seen)."""
    return _installed_plugin("rocm") or any("rocm" in v for v in _gpu_platform_versions())


def is_built_with_gpu_support() -> bool:
    """Whether JAX can run on GPUs here (CUDA or ROCm), as `tf.test.is_built_with_gpu_support`."""
    return is_built_with_cuda() or is_built_with_rocm()


def is_built_with_xla() -> bool:
    """True: XLA compiles every tapeshim program (TF's official binary is built with XLA, too)."""
    return True


_CPU_TARGETS = {"arm": "arm", "aarch64": "aarch64", "ppc": "ppc", "powerpc": "ppc", "x86": "x86", "s390x": "s390x"}


def _host_target() -> str:
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64", "i386", "i686", "x86"):
        return "x86"
    if machine in ("aarch64", "arm64"):
        return "aarch64"
    if machine.startswith("arm"):
        return "arm"
    if machine.startswith(("ppc", "powerpc")):
        return "ppc"
    return machine


def is_cpu_target_available(target: str) -> bool:
    """Whether XLA compiles for the CPU target (`"x86"`, `"aarch64"`, `"arm"`, `"ppc"`, `"s390x"`...).

    tapeshim answers for the host's architecture only: JAX compiles for the CPU it runs on (TF's x86
    binary also says True for the other targets its LLVM was built with).

    Raises:
      AssertionError: an unknown target, as TF.
    """
    for prefix, name in _CPU_TARGETS.items():
        if target.startswith(prefix):
            return name == _host_target()
    raise AssertionError("Unknown CPU target: " + target)


def _visible_gpus() -> list[Any]:
    """The JAX GPU devices behind the GPUs `tf.config` leaves visible."""
    visible = config.get_visible_devices("GPU")
    devices = config.jax_devices_of("GPU")
    return [devices[int(d.name.rsplit(":", 1)[1])] for d in visible]


def _compute_capability(device: Any) -> tuple[int, ...]:
    found = getattr(device, "compute_capability", None)
    if not found:
        return (0, 0)
    return tuple(int(part) for part in re.findall(r"\d+", str(found))[:2])


def is_gpu_available(cuda_only: bool = False, min_cuda_compute_capability: tuple[int, int] | None = None) -> bool:
    """Whether JAX has a (visible) GPU, of at least the given compute capability, as `tf.test.is_gpu_available`.

    Deprecated in TF: prefer `tf.config.list_physical_devices('GPU')`.

    Args:
      cuda_only: ignored, as in TF (any GPU counts).
      min_cuda_compute_capability: a `(major, minor)` pair that a GPU must reach.
    """
    del cuda_only
    for device in _visible_gpus():
        if not min_cuda_compute_capability or _compute_capability(device) >= tuple(min_cuda_compute_capability):
            return True
    return False


def gpu_device_name() -> str:
    """The name of the first visible GPU (`"/device:GPU:0"`), or `""` without one, as `tf.test.gpu_device_name`."""
    return "/device:GPU:0" if _visible_gpus() else ""


def sync_devices() -> None:
    """Waits until every device has run the work already sent to it, as `tf.test.experimental.sync_devices`.

    Each JAX device runs its programs in order, so a tiny computation on each device, waited for, runs
    after (and so waits for) everything queued before it.

    Raises:
      RuntimeError: called while a `tf.function` is traced.
    """
    if not graph_ops.executing_eagerly():
        raise RuntimeError("sync_devices() must only be called in Eager mode, outside tf.functions")
    for device in jax.devices():
        jax.block_until_ready(jax.device_put(jnp.zeros(()), device) + 0)


# -- decorators -------------------------------------------------------------------------------------------
def disable_with_predicate(pred: Callable[[], bool], skip_message: str) -> Callable[[Callable[..., Any]], Any]:
    """A decorator of test methods that skips the test (with `skip_message`) when `pred()` is true."""

    def decorate(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def run(self: unittest.TestCase, *args: Any, **kwargs: Any) -> Any:
            if pred():
                self.skipTest(skip_message)
            return method(self, *args, **kwargs)

        return run

    return decorate


def with_eager_op_as_function(cls: Any = None, only_as_function: bool = False) -> Any:
    """Returns the class unchanged (as TF 2.21 does: eager ops always run as functions now)."""
    del only_as_function
    if cls is not None:
        return cls
    return lambda decorated: decorated


# -- benchmarks -------------------------------------------------------------------------------------------
_BENCHMARKS: list[type] = []
TEST_REPORTER_TEST_ENV = "TEST_REPORT_FILE_PREFIX"


def _entry_text(name: str, entry: dict[str, Any]) -> str:
    """A benchmark entry as TF prints its `BenchmarkEntries` proto (text format)."""
    lines = ["entry {", f'  name: "{name}"']
    for key in ("iters", "cpu_time", "wall_time", "throughput"):
        if entry.get(key) is not None:
            lines.append(f"  {key}: {entry[key]}")
    for key, value in (entry.get("extras") or {}).items():
        kind = "double_value" if isinstance(value, numbers.Number) else "string_value"
        shown = value if isinstance(value, numbers.Number) else f'"{value}"'
        lines += ["  extras {", f'    key: "{key}"', "    value {", f"      {kind}: {shown}", "    }", "  }"]
    for metric in entry.get("metrics") or ():
        lines += ["  metrics {", f'    name: "{metric["name"]}"', f"    value: {metric['value']}"]
        for bound in ("min_value", "max_value"):
            if bound in metric:
                lines += [f"    {bound} {{", f"      value: {metric[bound]}", "    }"]
        lines.append("  }")
    return "\n".join([*lines, "}"]) + "\n"


def report_benchmark_entry(
    name: str,
    iters: int | None = None,
    cpu_time: float | None = None,
    wall_time: float | None = None,
    throughput: float | None = None,
    extras: dict[str, Any] | None = None,
    metrics: list[dict[str, Any]] | None = None,
) -> None:
    """Logs and prints one benchmark entry (TF writes a proto under `$TEST_REPORT_FILE_PREFIX` when set; tapeshim
    writes the proto's text there).

    Raises:
      TypeError: `extras` is not a dict, `metrics` not a list, or a metric lacks `name` or `value`.
      IOError: the report file exists already.
    """
    get_logger().info(
        "Benchmark [%s] iters: %d, wall_time: %g, cpu_time: %g,throughput: %g, extras: %s, metrics: %s",
        name,
        iters if iters is not None else -1,
        wall_time if wall_time is not None else -1,
        cpu_time if cpu_time is not None else -1,
        throughput if throughput is not None else -1,
        str(extras) if extras else "None",
        str(metrics) if metrics else "None",
    )
    if extras is not None and not isinstance(extras, dict):
        raise TypeError("extras must be a dict")
    if metrics is not None:
        if not isinstance(metrics, list):
            raise TypeError("metrics must be a list")
        for metric in metrics:
            for field in ("name", "value"):
                if field not in metric:
                    raise TypeError(f"metric must has a '{field}' field")
    text = _entry_text(
        name,
        {
            "iters": iters,
            "cpu_time": cpu_time,
            "wall_time": wall_time,
            "throughput": throughput,
            "extras": extras,
            "metrics": metrics,
        },
    )
    prefix = os.environ.get(TEST_REPORTER_TEST_ENV)
    if prefix is None:
        print(text)
        return
    path = prefix + name.replace("/", "__")
    if os.path.exists(path):
        raise OSError(f"File already exists: {path}")
    with open(path, "w") as out:
        out.write(text)


class Benchmark:
    """Base class of benchmarks, as `tf.test.Benchmark`: `benchmark*` methods that call `report_benchmark`.

    Subclasses are registered; `tf.test.main()` with `--benchmarks=REGEX` runs the matching methods.
    `run_op_benchmark` times a callable (TF's times a session's op; tapeshim has no sessions).
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _BENCHMARKS.append(cls)

    @classmethod
    def is_abstract(cls) -> bool:
        """Whether this is the base class itself."""
        return cls is Benchmark

    def _get_name(self, overwrite_name: str | None = None) -> str:
        """`Class.method` of the outermost benchmark method calling (or `Class.overwrite_name`)."""
        method = None
        for frame in reversed(inspect.stack()):
            if isinstance(frame.frame.f_locals.get("self"), Benchmark):
                method = frame.function
                break
        if method is None:
            raise ValueError("Unable to determine calling Benchmark class.")
        return f"{type(self).__name__}.{overwrite_name or method}"

    def report_benchmark(
        self,
        iters: int | None = None,
        cpu_time: float | None = None,
        wall_time: float | None = None,
        throughput: float | None = None,
        extras: dict[str, Any] | None = None,
        name: str | None = None,
        metrics: list[dict[str, Any]] | None = None,
    ) -> None:
        """Reports one benchmark result (named `Class.method`, or `Class.name` when `name` is given)."""
        report_benchmark_entry(
            self._get_name(overwrite_name=name), iters, cpu_time, wall_time, throughput, extras, metrics
        )

    def run_op_benchmark(
        self,
        sess: Any,
        op_or_tensor: Callable[[], Any],
        feed_dict: Any = None,
        burn_iters: int = 2,
        min_iters: int = 10,
        store_trace: bool = False,
        store_memory_usage: bool = True,
        name: str | None = None,
        extras: dict[str, Any] | None = None,
        mbs: int = 0,
    ) -> dict[str, Any]:
        """Times `op_or_tensor()` (a callable: tapeshim runs eagerly) and reports its median wall time.

        Returns:
          What was reported (`iters`, `wall_time`, `extras`, `name`, `throughput`), with the mean and standard
          deviation of the wall time added to `extras`.

        Raises:
          TypeError: `op_or_tensor` is not callable (a tensor is already computed eagerly).
          RuntimeError: a `feed_dict` was given.
        """
        del sess, store_trace, store_memory_usage
        if not callable(op_or_tensor):
            raise TypeError("tapeshim's run_op_benchmark times a callable (eager tensors are already computed)")
        if feed_dict:
            raise RuntimeError("feed_dict is not supported when eager execution is enabled")
        for _ in range(burn_iters):
            jax.block_until_ready(_arrays(op_or_tensor()))
        deltas = []
        for _ in range(min_iters):
            start = time.time()
            jax.block_until_ready(_arrays(op_or_tensor()))
            deltas.append(time.time() - start)
        ordered = sorted(deltas)
        median = (ordered[len(ordered) // 2] + ordered[(len(ordered) - 1) // 2]) / 2.0 if ordered else -1
        values: dict[str, Any] = {
            "iters": min_iters,
            "wall_time": median,
            "extras": dict(extras or {}),
            "name": name,
            "throughput": mbs / median if median > 0 else 0.0,
        }
        self.report_benchmark(**values)
        mean = sum(deltas) / len(deltas) if deltas else -1
        spread = (sum((d - mean) ** 2 for d in deltas) / (len(deltas) - 1)) ** 0.5 if len(deltas) > 1 else -1
        values["extras"].update(wall_time_mean=mean, wall_time_stdev=spread)
        return values

    def evaluate(self, tensors: Any) -> Any:
        """The NumPy values of a tensor or a nest of tensors."""
        return evaluate_nest(tensors)


def _arrays(value: Any) -> Any:
    """The JAX arrays inside a result (to wait for them)."""
    found = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(getattr(item, "value", None), jax.Array):
            found.append(item.value)
    return found


def run_benchmarks(pattern: str) -> None:
    """Runs every `benchmark*` method of the registered benchmarks whose `module.Class.method` matches `pattern`.

    Raises:
      ValueError: no benchmark matched.
    """
    selected = []
    for cls in _BENCHMARKS:
        if cls.is_abstract():  # type: ignore[attr-defined]
            continue
        for attribute in dir(cls):
            if attribute.startswith("benchmark") and callable(getattr(cls, attribute)):
                if re.search(pattern, f"{cls.__module__}.{cls.__name__}.{attribute}"):
                    selected.append((cls, attribute))
    if not selected:
        raise ValueError(f"No benchmarks matched the pattern: '{pattern}'")
    for cls, attribute in selected:
        getattr(cls(), attribute)()
