"""`tf.profiler.experimental` on `jax.profiler`: sessions, errors, files and trace events, against TF.

TF's profiler runs in a child process (its profiler and JAX's are separate native libraries; one process
running both sessions is not what either supports); it reports what each call raised and which files a
session wrote, and tapeshim must do the same here.
"""

from __future__ import annotations

import glob
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

import jax
import pytest

import tapeshim
from tapeshim._src import profiler as profiler_impl

# What `probe(p, logdir)` does with TF's `tf.profiler.experimental` and with tapeshim's; each step reports
# the class of what it raised (or None) and what it returned.
PROBE = textwrap.dedent(
    """
    import glob, os

    def outcome(call):
        try:
            result = call()
        except Exception as error:
            return [type(error).__name__, str(error)]
        return [None, repr(result) if result is None or isinstance(result, (bool, int, str)) else type(result).__name__]

    def files(logdir):
        return sorted(os.path.basename(f) for f in glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*")))

    def probe(p, logdir):
        report = {}
        report["stop_without_start"] = outcome(lambda: p.stop())
        report["stop_unsaved_without_start"] = outcome(lambda: p.stop(save=False))
        report["start"] = outcome(lambda: p.start(os.path.join(logdir, "a")))
        report["start_again"] = outcome(lambda: p.start(os.path.join(logdir, "b")))
        report["profile_while_running"] = outcome(lambda: p.Profile(os.path.join(logdir, "c")).__enter__())
        with p.Trace("step", step_num=1, _r=1) as trace:
            report["trace_enter_is_self"] = trace.__class__.__name__ == "Trace"
            trace.set_metadata(cache_hit=True)
        report["stop"] = outcome(lambda: p.stop())
        report["stop_again"] = outcome(lambda: p.stop())
        report["xplane_written"] = any(f.endswith(".xplane.pb") for f in files(os.path.join(logdir, "a")))
        report["start_unsaved"] = outcome(lambda: p.start(os.path.join(logdir, "d")))
        report["stop_unsaved"] = outcome(lambda: p.stop(save=False))
        report["unsaved_files"] = files(os.path.join(logdir, "d"))
        profile = p.Profile(os.path.join(logdir, "e"))
        report["profile_enter"] = outcome(profile.__enter__)
        report["stop_inside_profile"] = outcome(lambda: p.stop())
        report["profile_exit_after_stop"] = outcome(lambda: profile.__exit__(None, None, None))
        with p.Profile(os.path.join(logdir, "f"), options=p.ProfilerOptions(host_tracer_level=3)):
            pass
        report["profile_written"] = any(f.endswith(".xplane.pb") for f in files(os.path.join(logdir, "f")))
        options = p.ProfilerOptions()
        report["options"] = [type(options).__name__, list(options._fields), list(options), isinstance(options, tuple)]
        report["options_set"] = list(p.ProfilerOptions(1, 1, 0, 10))
        report["trace_without_profile"] = outcome(lambda: p.Trace("idle", a=1).__enter__().set_metadata(b=2))
        report["client_zero_duration"] = outcome(lambda: p.client.trace("grpc://localhost:1", logdir, 0))
        return report
    """
)

TF_SCRIPT = PROBE + textwrap.dedent(
    """
    import json, sys
    import tensorflow as tf
    print("REPORT" + json.dumps(probe(tf.profiler.experimental, sys.argv[1])))
    """
)


@pytest.fixture(scope="module")
def tf_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    logdir = tmp_path_factory.mktemp("tf_profile")
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    done = subprocess.run(
        [sys.executable, "-c", TF_SCRIPT, str(logdir)], capture_output=True, text=True, env=environment, timeout=300
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("REPORT")]
    assert lines, f"the TF probe failed:\n{done.stdout}\n{done.stderr[-3000:]}"
    return dict(json.loads(lines[0][len("REPORT") :]))


@pytest.fixture(scope="module")
def tapeshim_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(PROBE, namespace)
    probe: Callable[[Any, str], dict[str, Any]] = namespace["probe"]
    report = probe(tapeshim.profiler.experimental, str(tmp_path_factory.mktemp("tapeshim_profile")))
    return dict(json.loads(json.dumps(report)))


def test_session_calls_raise_and_return_like_tf(tf_report: dict[str, Any], tapeshim_report: dict[str, Any]) -> None:
    assert tf_report["stop_without_start"][0] == "UnavailableError"
    assert tf_report["start_again"][0] == "AlreadyExistsError"
    assert tapeshim_report == tf_report


def test_the_errors_are_tf_errors() -> None:
    p = tapeshim.profiler.experimental
    with pytest.raises(tapeshim.errors.UnavailableError, match="No profiler is running"):
        p.stop()
    with pytest.raises(tapeshim.errors.OpError):
        p.stop(save=False)


def _event_stats(logdir: Path, name: str) -> list[dict[str, Any]]:
    """The stats of every event called `name` in the trace written under `logdir`."""
    found = []
    for path in glob.glob(str(logdir / "plugins" / "profile" / "*" / "*.xplane.pb")):
        data = jax.profiler.ProfileData.from_file(path)
        for plane in data.planes:
            for line in plane.lines:
                found += [dict(event.stats) for event in line.events if event.name == name]
    return found


def test_trace_events_and_metadata_reach_the_profile(tmp_path: Path) -> None:
    p = tapeshim.profiler.experimental
    p.start(tmp_path)
    for step in range(2):
        with p.Trace("train", step_num=step, _r=1) as trace:
            tapeshim.reduce_sum(tapeshim.ones([8])).numpy()
            trace.set_metadata(in_cache=step > 0)
    p.stop()
    stats = sorted(_event_stats(tmp_path, "train"), key=lambda s: s["step_num"])
    assert [s["step_num"] for s in stats] == [0, 1]
    assert [s["in_cache"] for s in stats] == [0, 1]


def test_profile_writes_where_tf_does_and_stops_on_error(tmp_path: Path) -> None:
    p = tapeshim.profiler.experimental
    with pytest.raises(ZeroDivisionError):
        with p.Profile(str(tmp_path)):
            with p.Trace("inside"):
                1 / 0  # noqa: B018 - the error leaves the block
    written = glob.glob(str(tmp_path / "plugins" / "profile" / "*" / "*.xplane.pb"))
    assert len(written) == 1 and _event_stats(tmp_path, "inside") == [{}]
    p.start(tmp_path / "again")  # the block stopped its session
    p.stop(save=False)
    assert not (tmp_path / "again").exists()


def test_a_jax_trace_counts_as_the_running_session(tmp_path: Path) -> None:
    p = tapeshim.profiler.experimental
    jax.profiler.start_trace(str(tmp_path / "jax"))
    try:
        with pytest.raises(tapeshim.errors.AlreadyExistsError):
            p.start(tmp_path)
    finally:
        jax.profiler.stop_trace()
    with pytest.raises(tapeshim.errors.UnavailableError):
        p.stop()
    assert not profiler_impl._session
    p.start(tmp_path / "mine")
    jax.profiler.stop_trace()  # behind the API's back: stop says no session runs, and forgets it
    with pytest.raises(tapeshim.errors.UnavailableError):
        p.stop()
    p.start(tmp_path / "next")
    p.stop()


def test_profiler_options_reach_jax() -> None:
    options = profiler_impl._jax_options(tapeshim.profiler.experimental.ProfilerOptions(3, 1, 0, 5))
    assert (options.host_tracer_level, options.python_tracer_level) == (3, 1)
    defaults = profiler_impl._jax_options(None)
    assert defaults.host_tracer_level == jax.profiler.ProfileOptions().host_tracer_level


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        return int(sock.getsockname()[1])


def test_server_starts_and_a_second_start_replaces_it() -> None:
    server = tapeshim.profiler.experimental.server
    assert server.start(_free_port()) is None
    assert server.start(_free_port()) is None
    assert len(profiler_impl._server) == 1


def test_client_needs_xprof() -> None:
    client = tapeshim.profiler.experimental.client
    try:
        import xprof  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("xprof is installed: client.trace would send a request")
    with pytest.raises(tapeshim.errors.UnimplementedError, match="xprof"):
        client.trace("grpc://localhost:1", "/tmp", 10)
    with pytest.raises(tapeshim.errors.UnimplementedError, match="xprof"):
        client.monitor("grpc://localhost:1", 10)
    with pytest.raises(tapeshim.errors.InvalidArgumentError, match="duration_ms must be greater than zero"):
        client.trace("grpc://localhost:1", "/tmp", -1)


def test_namespace_matches_tf() -> None:
    names = {
        "profiler": ["experimental"],
        "profiler.experimental": ["Profile", "ProfilerOptions", "Trace", "client", "server", "start", "stop"],
        "profiler.experimental.server": ["start"],
        "profiler.experimental.client": ["monitor", "trace"],
    }
    for path, expected in names.items():
        module: Any = tapeshim
        for part in path.split("."):
            module = getattr(module, part)
        assert sorted(n for n in dir(module) if not n.startswith("_")) == sorted(expected)
