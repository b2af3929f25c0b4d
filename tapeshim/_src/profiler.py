"""`tf.profiler.experimental`: TF's profiler API on `jax.profiler`.

`start(logdir)`/`stop()` (and the `Profile` block) collect a trace of the process with JAX's profiler and
write it where TF writes its own: `logdir/plugins/profile/<run>/<host>.xplane.pb`, which TensorBoard's
profile plugin (or XProf) shows. `Trace` marks a span of host time (a `jax.profiler.TraceAnnotation`);
`server.start(port)` starts JAX's profiler server, which TensorBoard (or `client.trace`) can sample.

One session at a time, as TF: `start` while one runs raises `tf.errors.AlreadyExistsError`, `stop` without
one `tf.errors.UnavailableError`. A trace that `jax.profiler.start_trace` began (not through this API)
also counts as the running session when `start` is called.

Differences from TF: `ProfilerOptions.device_tracer_level` and `delay_ms` are not passed on (JAX's
options have no such fields); `client.trace` and `client.monitor` need the `xprof` package (its gRPC
client), which JAX's `python -m jax.collect_profile` uses too.
"""

from __future__ import annotations

import collections
import os
import shutil
import tempfile
import threading
from types import TracebackType
from typing import Any, NamedTuple

import jax

from tapeshim._src import errors


class ProfilerOptions(
    collections.namedtuple(
        "ProfilerOptions", ["host_tracer_level", "python_tracer_level", "device_tracer_level", "delay_ms"]
    )
):
    """Options of a profiling session, as `tf.profiler.experimental.ProfilerOptions`.

    Attributes:
      host_tracer_level: CPU tracing: 1 critical only, 2 info (default), 3 verbose.
      python_tracer_level: 1 traces Python function calls, 0 (default) does not.
      device_tracer_level: 1 (default) traces devices, 0 does not (not passed on: JAX always traces them).
      delay_ms: for `client.trace`, when hosts should start (None: the profiler chooses).
    """

    def __new__(
        cls,
        host_tracer_level: int = 2,
        python_tracer_level: int = 0,
        device_tracer_level: int = 1,
        delay_ms: int | None = None,
    ) -> ProfilerOptions:
        return super().__new__(cls, host_tracer_level, python_tracer_level, device_tracer_level, delay_ms)


class _Session(NamedTuple):
    logdir: str
    staging: str  # JAX writes the trace here at `stop`; it is moved into `logdir` when saved


_lock = threading.Lock()
_session: list[_Session] = []  # the running session (at most one)


def _jax_options(options: ProfilerOptions | None) -> jax.profiler.ProfileOptions:
    found = jax.profiler.ProfileOptions()
    if options is not None:
        found.host_tracer_level = int(options.host_tracer_level)
        found.python_tracer_level = int(options.python_tracer_level)
    return found


def start(logdir: str | os.PathLike[str], options: ProfilerOptions | None = None) -> None:
    """Starts profiling the process, as `tf.profiler.experimental.start`; `stop()` writes the trace to `logdir`.

    Args:
      logdir: the directory (usually TensorBoard's log directory) the trace is written to.
      options: a `ProfilerOptions`.

    Raises:
      AlreadyExistsError: a profiling session is running already.
    """
    with _lock:
        if _session:
            raise errors.AlreadyExistsError(None, None, "Another profiler is running.")
        staging = tempfile.mkdtemp(prefix="tapeshim_profile_")
        try:
            jax.profiler.start_trace(staging, profiler_options=_jax_options(options))
        except RuntimeError as error:  # JAX's own session (`jax.profiler.start_trace`) is running
            shutil.rmtree(staging, ignore_errors=True)
            raise errors.AlreadyExistsError(None, None, "Another profiler is running.") from error
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        _session.append(_Session(os.fspath(logdir), staging))


def _move_tree(source: str, destination: str) -> None:
    """Moves every file under `source` to the same place under `destination` (existing files are replaced)."""
    for root, _, files in os.walk(source):
        target = os.path.join(destination, os.path.relpath(root, source))
        os.makedirs(target, exist_ok=True)
        for name in files:
            shutil.move(os.path.join(root, name), os.path.join(target, name))


def stop(save: bool = True) -> None:
    """Stops the profiling session and (with `save`) writes its trace, as `tf.profiler.experimental.stop`.

    Args:
      save: whether to write the trace to the `logdir` given to `start` (else it is discarded).

    Raises:
      UnavailableError: no profiling session is running.
    """
    with _lock:
        if not _session:
            raise errors.UnavailableError(None, None, "Cannot export profiling results. No profiler is running.")
        session = _session.pop()
        try:
            jax.profiler.stop_trace()
            if save:
                _move_tree(session.staging, session.logdir)
        except RuntimeError as error:  # JAX's session was stopped behind this API's back
            raise errors.UnavailableError(
                None, None, "Cannot export profiling results. No profiler is running."
            ) from error
        finally:
            shutil.rmtree(session.staging, ignore_errors=True)


class Profile:
    """A block that profiles the code it runs, as `tf.profiler.experimental.Profile`.

    >>> with tf.profiler.experimental.Profile("/tmp/logdir"):
    ...     train_step()
    """

    def __init__(self, logdir: str | os.PathLike[str], options: ProfilerOptions | None = None) -> None:
        self._logdir = logdir
        self._options = options

    def __enter__(self) -> None:
        start(self._logdir, self._options)

    def __exit__(self, typ: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        stop()


class Trace:
    """A named span of host time in the profile, as `tf.profiler.experimental.Trace` (a JAX `TraceAnnotation`).

    Keyword arguments become the event's metadata (`step_num=step, _r=1` marks a training step, as in
    TF). The event is recorded only while a profile is being collected; otherwise the block costs nearly
    nothing.

    >>> with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
    ...     train_step()
    """

    def __init__(self, name: str, **kwargs: Any) -> None:
        self._annotation: Any = None
        if jax.profiler.TraceAnnotation.is_enabled():
            # As TF's, the event's clock starts when it is created.
            self._annotation = jax.profiler.TraceAnnotation(name, **kwargs)
            self._annotation.__enter__()

    def __enter__(self) -> Trace:
        return self

    def set_metadata(self, **kwargs: Any) -> None:
        """Adds metadata (`key=value`) to the event (known only once it ran, such as a cache hit)."""
        if self._annotation is not None and kwargs:
            self._annotation.set_metadata(**kwargs)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> None:
        if self._annotation is not None:
            self._annotation.__exit__(exc_type, exc_val, exc_tb)
            self._annotation = None


_server: list[Any] = []


def start_server(port: int) -> None:
    """Starts a profiler server on `port` that TensorBoard (or `client.trace`) can sample, as
    `tf.profiler.experimental.server.start` (JAX's `jax.profiler.start_server`).

    As in TF, a second call starts a server on the new port, replacing the first.

    Args:
      port: the port the server listens on.
    """
    with _lock:
        if _server:
            _server.clear()
            jax.profiler.stop_server()
        _server.append(jax.profiler.start_server(port))


_GRPC_PREFIX = "grpc://"


def _strip_prefix(address: str) -> str:
    return address[len(_GRPC_PREFIX) :] if address.startswith(_GRPC_PREFIX) else address


def _plugin(what: str) -> Any:
    try:
        from xprof.convert import _pywrap_profiler_plugin  # type: ignore[import-not-found]
    except ImportError as error:
        raise errors.UnimplementedError(
            None,
            None,
            f"tf.profiler.experimental.client.{what} needs the `xprof` package (pip install xprof): tapeshim "
            "sends profiling requests with its gRPC client.",
        ) from error
    return _pywrap_profiler_plugin


def trace(
    service_addr: str,
    logdir: str,
    duration_ms: int,
    worker_list: str = "",
    num_tracing_attempts: int = 3,
    options: ProfilerOptions | None = None,
) -> None:
    """Asks profiler servers to trace for `duration_ms` and write the traces to `logdir`, as
    `tf.profiler.experimental.client.trace`.

    Args:
      service_addr: comma-separated gRPC addresses of the servers (`grpc://localhost:6009`).
      logdir: the directory the servers write to (reachable by them).
      duration_ms: how long to trace, above zero.
      worker_list: TPU workers to profile (TPU only).
      num_tracing_attempts: retries when no trace event was collected.
      options: a `ProfilerOptions`.

    Raises:
      InvalidArgumentError: `duration_ms` is not positive.
      UnimplementedError: the `xprof` package (the gRPC client) is not installed.
    """
    if duration_ms <= 0:
        raise errors.InvalidArgumentError(None, None, "duration_ms must be greater than zero.")
    plugin = _plugin("trace")
    addresses = ",".join(_strip_prefix(address) for address in service_addr.split(","))
    settings = dict(options._asdict()) if options is not None else {}
    plugin.trace(addresses, logdir, worker_list, True, duration_ms, num_tracing_attempts, settings)


def monitor(service_addr: str, duration_ms: int, level: int = 1) -> str:
    """A short performance summary from a profiler server (Cloud TPU), as `tf.profiler.experimental.client.monitor`.

    Raises:
      UnimplementedError: the `xprof` package (the gRPC client) is not installed.
    """
    plugin = _plugin("monitor")
    return str(plugin.monitor(_strip_prefix(service_addr), duration_ms, level, True))
