"""Test configuration: real TensorFlow is the oracle and must be importable."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# TF 2.21's oneDNN kernels (on by default on AVX-512 CPUs) abort the process on some bad inputs
# (a rank-3 conv2d fails a CHECK instead of raising InvalidArgumentError); the oracle uses TF's
# portable kernels, which raise the errors TF documents.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
# `import tensorflow` imports Keras, and Keras picks its backend once per process. The test process
# runs tapeshim.keras (JAX backend) beside real TensorFlow's ops; TF's own Keras runs in a child
# process with KERAS_BACKEND=tensorflow (see keras_oracle.py).
os.environ["KERAS_BACKEND"] = "jax"
# tapeshim keeps compiled programs on disk between runs (`tapeshim/_src/compile_cache.py`): the tests use a
# cache of their own, empty when they start, so that a developer's earlier runs cannot change what they see.
if "TAPESHIM_COMPILATION_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile

    _cache = tempfile.mkdtemp(prefix="tapeshim-tests-xla-")
    os.environ["TAPESHIM_COMPILATION_CACHE_DIR"] = _cache
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _tiers_as_in_a_fresh_process():
    """Each test starts with no memory of the plans earlier tests ran, nor of what their compiles cost
    (`replay.forget_sightings`), nor of their split products (`interpret_blas.forget_splits`): a steady loop's
    compile counts are then those of a fresh process, whatever ran before it (a structure an earlier test ran
    at many sizes ran per op in a later test's steady loop until its per-op time paid for a compile, a step
    that depended on the machine's load; a program's short rental was extended after an earlier test's
    compute-bound step)."""
    from tapeshim._src import interpret_blas, replay

    replay.forget_sightings()
    interpret_blas.forget_splits()  # (a program's rental does not depend on an earlier test's products)


@pytest.fixture
def compiles_on_repeat():
    """Programs and eager kernels called in the test compile from their second call, without the ski rental
    (`compile_tiers.compiles_on_repeat`): for tests about the background thread's compiles, which a few calls
    show, rather than about when a program compiles."""
    from tapeshim._src import compile_tiers

    with compile_tiers.compiles_on_repeat():
        yield


@pytest.fixture
def software_flush(monkeypatch):
    """The host interpreter flushes subnormals in software (`interpret_flush.flush_subnormals`), as where the
    CPU's modes cannot be set (`interpret_fpmode.HARDWARE_FLUSH`): for the plans the test makes."""
    from tapeshim._src import interpret_fpmode

    monkeypatch.setattr(interpret_fpmode, "HARDWARE_FLUSH", False)


@pytest.fixture(autouse=True)
def _tf_variable_scope_left_as_found():
    """Restores real TF's global variable scope's caching device after each test: TF's `map_fn` leaves its own
    set when its function raises (an error case compared with tapeshim's), and every later TF variable made
    under a variable scope (`tf.train.ExponentialMovingAverage`'s shadows) then fails in TF itself."""
    yield
    import tensorflow as real_tf  # (the oracle: imported by the tests already)

    scope = real_tf.compat.v1.get_variable_scope()
    if scope.caching_device is not None:  # (its setter refuses eager mode, even to clear it: the attribute)
        scope._caching_device = None
