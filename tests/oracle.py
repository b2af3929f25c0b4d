"""The differential harness: run one test body with TensorFlow and with tapeshim, compare.

A body is a function of the module (`lambda tf: ...`). `check(body)` runs it
with real TensorFlow (the oracle) and with tapeshim and compares what came out:
structure, `None` pattern, tensor dtype, shape and values (per-dtype
tolerance). It fails when TF raises, unless the test says the error is the
point: `check_raises(body)` (or `check(body, raises=True)`, or a table's case
marked `raising(body)`) asserts that TF raised and compares the error class
(and optionally message) with tapeshim's.

The body builders below run one op function `fn(tf, *tensors)` in the modes a test
compares: eagerly (`eager_body`), under a GradientTape and differentiated
(`taped_body`, `run_taped`), inside `tf.function` (`traced_body`), in forward mode
(`jvp_body`) and twice differentiated (`second_derivative_body`);
`check_values_and_gradients` runs the eager and taped bodies of one op-table row.
Test data comes from `oracle_data` (seeded numpy; re-exported here).
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Sequence

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# TF 2.21's oneDNN kernels (on by default on AVX-512 CPUs) abort the process on some bad inputs
# (a rank-3 conv2d fails a CHECK instead of raising InvalidArgumentError); the oracle uses TF's
# portable kernels, which raise the errors TF documents.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import jax  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as real_tf  # noqa: E402  (the oracle: a missing TF fails the run)

import tapeshim  # noqa: E402
from oracle_data import KINDS, Kind, Shape, exact, labelled, normal, sample, uniform  # noqa: E402
from tapeshim._src import background_compile  # noqa: E402

__all__ = [
    "KINDS",
    "MODULES",
    "TOLERANCE",
    "Body",
    "Kind",
    "Raised",
    "Shape",
    "assert_same",
    "check",
    "check_raises",
    "check_values_and_gradients",
    "constants",
    "describe",
    "eager_body",
    "exact",
    "jvp_body",
    "labelled",
    "normal",
    "raising",
    "real_tf",
    "run",
    "run_taped",
    "sample",
    "second_derivative_body",
    "squared_sum",
    "sum_of_outputs",
    "taped_body",
    "traced_body",
    "uniform",
]

# A body's argument is a module, `tensorflow` or `tapeshim`: the two share no static type.
Module = Any
Body = Callable[[Module], Any]
# An op function, `fn(tf, *tensors)`; a loss, `loss(tf, outputs)` -> a scalar tensor.
OpFn = Callable[..., Any]
Loss = Callable[[Module, Any], Any]

MODULES = (real_tf, tapeshim)
TOLERANCE = {
    "float16": 2e-3,
    "bfloat16": 2e-2,
    "float32": 2e-5,
    "float64": 1e-10,
    "complex64": 2e-5,
    "complex128": 1e-10,
}


class Raised:
    """What a body raised: its class name, message and the exception."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc
        self.name = type(exc).__name__
        self.message = str(exc)

    def __repr__(self) -> str:
        return f"Raised({self.name}: {self.message[:200]})"


def run(body: Body, module: Module) -> Any:
    """`body(module)`, or a `Raised` holding what it raised."""
    try:
        return body(module)
    except Exception as exc:  # noqa: BLE001 - every exception is part of the comparison
        return Raised(exc)


def _is_tensor(value: Any) -> bool:
    return isinstance(value, (real_tf.Tensor, real_tf.Variable, tapeshim.Tensor, tapeshim.Variable))


def describe(value: Any) -> Any:
    """A module-independent description of a result, for comparison."""
    if isinstance(value, Raised):
        return value
    if _is_tensor(value):
        array = np.asarray(value.numpy())
        return ("tensor", value.dtype.name, tuple(array.shape), array)
    if isinstance(value, (real_tf.IndexedSlices, tapeshim.IndexedSlices)):
        return ("IndexedSlices", [describe(value.values), describe(value.indices)])
    if isinstance(value, dict):
        return (type(value).__name__, [(k, describe(v)) for k, v in value.items()])
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (type(value).__name__, [describe(v) for v in value])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [describe(v) for v in value])
    if isinstance(value, (real_tf.TensorSpec, tapeshim.TensorSpec)):
        return ("TensorSpec", value.shape.as_list() if value.shape.rank is not None else None, value.dtype.name)
    if isinstance(value, (real_tf.DType, tapeshim.DType)):
        return ("dtype", value.name)
    if isinstance(value, (real_tf.TensorShape, tapeshim.TensorShape)):
        return ("shape", None if value.rank is None else tuple(value.as_list()))
    if isinstance(value, np.generic):
        return ("numpy", value.dtype.name, value.item())
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.name, value.shape, value)
    return value


def assert_same(
    expected: Any, actual: Any, path: str = "result", rtol: float | None = None, messages: bool = False
) -> None:
    """Asserts two descriptions match (expected from TF, actual from tapeshim)."""
    if isinstance(expected, Raised) or isinstance(actual, Raised):
        assert isinstance(expected, Raised) and isinstance(actual, Raised), (
            f"{path}: TF gave {expected!r}, tapeshim gave {actual!r}"
        )
        assert expected.name == actual.name, f"{path}: TF raised {expected!r}, tapeshim raised {actual!r}"
        if messages:
            assert expected.message == actual.message, (
                f"{path}: messages differ:\nTF:       {expected.message!r}\ntapeshim: {actual.message!r}"
            )
        return
    if isinstance(expected, tuple) and expected and expected[0] in ("tensor", "ndarray"):
        assert isinstance(actual, tuple) and actual and actual[0] == expected[0], (
            f"{path}: TF gave a {expected[0]}, tapeshim gave {actual!r}"
        )
        _, dtype, shape, values = expected
        assert actual[1] == dtype, f"{path}: dtype {actual[1]} != TF's {dtype}"
        assert actual[2] == shape, f"{path}: shape {actual[2]} != TF's {shape}"
        tol = rtol if rtol is not None else TOLERANCE.get(dtype, 0)
        if tol:
            np.testing.assert_allclose(
                np.asarray(actual[3], np.complex128 if "complex" in dtype else np.float64),
                np.asarray(values, np.complex128 if "complex" in dtype else np.float64),
                rtol=tol,
                atol=tol,
                equal_nan=True,
                err_msg=path,
            )
        else:
            np.testing.assert_array_equal(actual[3], values, err_msg=path)
        return
    if isinstance(expected, tuple) and len(expected) == 2 and isinstance(expected[1], list):
        assert isinstance(actual, tuple) and len(actual) == 2 and actual[0] == expected[0], (
            f"{path}: TF gave a {expected[0]}, tapeshim gave {actual!r}"
        )
        assert len(actual[1]) == len(expected[1]), f"{path}: lengths differ: {actual[1]!r} vs TF {expected[1]!r}"
        for i, (e, a) in enumerate(zip(expected[1], actual[1])):
            if isinstance(e, tuple) and len(e) == 2 and expected[0] in ("dict", "OrderedDict"):
                assert e[0] == a[0], f"{path}: keys differ: {a[0]!r} vs TF {e[0]!r}"
                assert_same(e[1], a[1], f"{path}[{e[0]!r}]", rtol, messages)
            else:
                assert_same(e, a, f"{path}[{i}]", rtol, messages)
        return
    if isinstance(expected, float) and isinstance(actual, float):
        np.testing.assert_allclose(actual, expected, rtol=rtol or 1e-6, err_msg=path)
        return
    if isinstance(expected, str) and isinstance(actual, str) and expected != actual:
        assert _same_printed(expected, actual), f"{path}: tapeshim gave {actual!r}, TF gave {expected!r}"
        return
    assert expected == actual, f"{path}: tapeshim gave {actual!r}, TF gave {expected!r}"


_DECIMAL = re.compile(r"-?\d+\.(\d+)")


def _same_printed(expected: str, actual: str) -> bool:
    """Whether two printed texts (a cell's output) are the same but for the last printed digit of decimal
    numbers: a value computed on the host interpreter and the compiled one agree to rounding (as TF's eager
    and graph values do), which can move a printed `2.843155` to either side of its last digit."""
    if _DECIMAL.sub("#", expected) != _DECIMAL.sub("#", actual):
        return False
    for e, a in zip(_DECIMAL.finditer(expected), _DECIMAL.finditer(actual)):
        places = len(e.group(1))
        if len(a.group(1)) != places or abs(float(e.group(0)) - float(a.group(0))) > 1.001 * 10.0**-places:
            return False
    return True


def raising(body: Body) -> Body:
    """Marks `body` as a case whose point is TF's error, in a table whose other cases return values: `check(body)`
    then asserts that TF raised (as `check_raises` does) where it would otherwise fail because TF raised."""
    body.raises_in_tf = True  # type: ignore[attr-defined]
    return body


def check(body: Body, rtol: float | None = None, messages: bool = False, raises: bool | None = None) -> Any:
    """Runs `body` with TF and tapeshim, asserts the results match; returns tapeshim's.

    TF must not raise: a body that makes TF itself raise (a typo, a wrong shape, an API misuse) would otherwise
    pass as long as tapeshim raised the same error class, and test nothing. Where the error is the point, use
    `check_raises`, pass `raises=True`, or mark the body with `raising`.

    Args:
        body: the body, `body(tf)`.
        rtol: the tolerance for tensors' values (None: the per-dtype default, `TOLERANCE`).
        messages: when both raise, also compare their messages.
        raises: True: assert that TF raised (as `check_raises`) and compare the error classes; False: fail when
            TF raises; None (the default): True for a body marked with `raising`, else False.
    """
    if raises is None:
        raises = getattr(body, "raises_in_tf", False)
    expected = run(body, real_tf)
    if raises:
        assert isinstance(expected, Raised), f"TF did not raise: {expected!r}"
    elif isinstance(expected, Raised):
        raise AssertionError(
            f"TF raised {expected.name}: {expected.message[:500]}; use check_raises if the error is the point"
        ) from expected.exc
    actual = run(body, tapeshim)
    assert_same(describe(expected), describe(actual), rtol=rtol, messages=messages)
    return actual


def check_printed(body: Body, capfd: Any) -> None:
    """Like `check`, and asserts that tapeshim printed TF's non-empty stderr lines (`tf.print`) while running it."""
    expected = body(real_tf)
    expected_err = capfd.readouterr().err
    actual = body(tapeshim)
    actual_err = capfd.readouterr().err
    check(lambda tf: expected if tf is real_tf else actual)
    assert [line for line in actual_err.splitlines() if line] == [line for line in expected_err.splitlines() if line]


def check_raises(body: Body, messages: bool = False) -> Raised:
    """Runs `body` with TF and tapeshim for a test whose point is the error: asserts that TF raised and that
    tapeshim raised the same error class (and message, with `messages`); returns what tapeshim raised."""
    expected = run(body, real_tf)
    assert isinstance(expected, Raised), f"TF did not raise: {expected!r}"
    actual = run(body, tapeshim)
    assert_same(expected, actual, messages=messages)
    return actual


# -- body builders: one op function, the modes a test compares ------------------------------------
def constants(tf: Module, arrays: Sequence[Any], dtype: str | None = None) -> list[Any]:
    """`tf.constant` of each array (of `dtype`, a dtype name such as "float16", when given)."""
    if dtype is None:
        return [tf.constant(a) for a in arrays]
    return [tf.constant(a, getattr(tf, dtype)) for a in arrays]


def eager_body(fn: OpFn, *arrays: Any, dtype: str | None = None) -> Body:
    """A body: `fn(tf, *xs)` on constants of `arrays`, outside any tape."""

    def body(tf: Module) -> Any:
        return fn(tf, *constants(tf, arrays, dtype))

    return body


def _differentiate(
    tf: Module,
    fn: OpFn,
    xs: list[Any],
    output_gradients: np.ndarray | None,
    loss: Loss | None,
    persistent: bool,
    densify: bool,
    unconnected_gradients: str | None,
) -> tuple[Any, Any]:
    with tf.GradientTape(persistent=persistent) as tape:
        tape.watch(xs)
        y = fn(tf, *xs)
        target = y if loss is None else loss(tf, y)
    options: dict[str, Any] = {}
    if output_gradients is not None:
        options["output_gradients"] = tf.constant(output_gradients)
    if unconnected_gradients is not None:
        options["unconnected_gradients"] = unconnected_gradients
    grads = tape.gradient(target, xs, **options)
    if densify:  # an IndexedSlices gradient (TF's for gather) compared as its dense tensor
        grads = [None if g is None else tf.convert_to_tensor(g) for g in grads]
    return y, grads


def run_taped(
    tf: Module,
    fn: OpFn,
    arrays: Sequence[Any],
    *,
    dtype: str | None = None,
    output_gradients: np.ndarray | None = None,
    loss: Loss | None = None,
    persistent: bool = False,
    densify: bool = False,
    unconnected_gradients: str | None = None,
) -> tuple[Any, Any]:
    """Runs `fn(tf, *xs)` under a GradientTape that watches `xs` (constants of `arrays`) and differentiates.

    Args:
        tf: the module.
        fn: the op function.
        arrays: the inputs (numpy arrays or nested lists).
        dtype: the inputs' dtype name, or None for the arrays' own dtypes.
        output_gradients: the upstream gradient (a numpy array), or None for TF's ones.
        loss: differentiate `loss(tf, y)` (computed inside the tape) instead of `y`.
        persistent: whether the tape is persistent.
        densify: return each gradient through `tf.convert_to_tensor` (None stays None).
        unconnected_gradients: passed to `tape.gradient` when given.

    Returns:
        `(y, [gradient for each x])`.
    """
    return _differentiate(
        tf, fn, constants(tf, arrays, dtype), output_gradients, loss, persistent, densify, unconnected_gradients
    )


def taped_body(
    fn: OpFn,
    *arrays: Any,
    dtype: str | None = None,
    output_gradients: np.ndarray | None = None,
    loss: Loss | None = None,
    persistent: bool = False,
    densify: bool = False,
    unconnected_gradients: str | None = None,
) -> Body:
    """A body: `run_taped` of `fn` on `arrays` (see there for the options); it returns `(y, gradients)`."""

    def body(tf: Module) -> Any:
        return run_taped(
            tf,
            fn,
            arrays,
            dtype=dtype,
            output_gradients=output_gradients,
            loss=loss,
            persistent=persistent,
            densify=densify,
            unconnected_gradients=unconnected_gradients,
        )

    return body


def traced_body(
    fn: OpFn,
    *arrays: Any,
    dtype: str | None = None,
    loss: Loss | None = None,
    densify: bool = False,
) -> Body:
    """A body: `taped_body`'s computation inside `tf.function`, the constants of `arrays` its arguments."""

    def body(tf: Module) -> Any:
        def traced(*xs: Any) -> tuple[Any, Any]:
            return _differentiate(tf, fn, list(xs), None, loss, False, densify, None)

        return tf.function(traced)(*constants(tf, arrays, dtype))

    return body


def jvp_body(fn: OpFn, *values: Any, dtype: str = "float32") -> Body:
    """A body: `fn(tf, *xs)` and its forward-mode derivative along ones (`tf.autodiff.ForwardAccumulator`).

    The inputs are built from `exact(values)`, so every dtype sees the same numbers.
    """

    def body(tf: Module) -> Any:
        xs = constants(tf, [exact(v) for v in values], dtype)
        with tf.autodiff.ForwardAccumulator(xs, [tf.ones_like(x) for x in xs]) as acc:
            y = fn(tf, *xs)
        return y, acc.jvp(y)

    return body


def second_derivative_body(fn: OpFn, values: Any, dtype: str = "float32") -> Body:
    """A body: the first and second derivatives of `fn(tf, x)` by nested tapes (x built from `exact(values)`)."""

    def body(tf: Module) -> Any:
        x = tf.constant(exact(values), getattr(tf, dtype))
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = fn(tf, x)
            dy = inner.gradient(y, x)
        return dy, outer.gradient(dy, x)

    return body


def squared_sum(tf: Module, y: Any) -> Any:
    """A loss: `reduce_sum(y * y)`."""
    return tf.reduce_sum(y * y)


def sum_of_outputs(tf: Module, out: Any) -> Any:
    """A loss: the sum of every output of a nest, each cast to float32."""
    return tf.add_n([tf.reduce_sum(tf.cast(o, tf.float32)) for o in tf.nest.flatten(out)])


def check_values_and_gradients(
    fn: OpFn,
    inputs: Sequence[np.ndarray],
    rng: np.random.Generator,
    rtol: float | None = None,
    densify: bool = False,
    gradients: bool = True,
) -> None:
    """Checks one op-table row: `fn` eagerly, then under a tape along a random upstream gradient.

    TF's output fixes the upstream gradient's shape and dtype; it is drawn from `rng` (a
    "normal" `sample`) even when `gradients` is False, so that the rows after it draw the same
    numbers either way.

    Args:
        fn: the op function, `fn(tf, *tensors)`.
        inputs: its inputs (numpy arrays).
        rng: the generator the upstream gradient is drawn from.
        rtol: the tolerance for `check` (None: the per-dtype default).
        densify: compare gradients as dense tensors (see `run_taped`).
        gradients: False for an op whose TF gradient is missing: values only.
    """
    out = fn(real_tf, *[real_tf.constant(x) for x in inputs])
    upstream = sample(rng, tuple(out.shape), "normal", out.dtype.as_numpy_dtype)
    check(eager_body(fn, *inputs), rtol=rtol)
    if gradients:
        check(taped_body(fn, *inputs, output_gradients=upstream, densify=densify), rtol=rtol)


# -- a TF-style training step ---------------------------------------------------------------------
def mlp_training_step(
    tf: Module, batch: int, sizes: tuple[int, int, int], seed: int = 0, scale: float = 1.0, learning_rate: float = 0.1
) -> Callable[[], tuple]:
    """A TF-style MLP training step (`GradientTape`, `gradient`, `assign_sub`) on seeded data, as a TF guide
    writes it, for `tf` (real TF or tapeshim): `step()` returns `(loss, grad_w1, grad_w2)`."""
    rng = np.random.default_rng(seed)
    n_in, n_hidden, n_out = sizes
    w1 = tf.Variable(rng.normal(size=(n_in, n_hidden)).astype(np.float32) * scale)
    w2 = tf.Variable(rng.normal(size=(n_hidden, n_out)).astype(np.float32) * scale)
    x = tf.constant(rng.normal(size=(batch, n_in)).astype(np.float32))
    labels = tf.constant(rng.integers(0, n_out, size=batch).astype(np.int32))

    def step() -> tuple:
        with tf.GradientTape() as tape:
            logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        g1, g2 = tape.gradient(loss, [w1, w2])
        w1.assign_sub(learning_rate * g1)
        w2.assign_sub(learning_rate * g2)
        return loss, g1, g2

    step.variables = (w1, w2)  # type: ignore[attr-defined]
    return step


# -- compile counts ----------------------------------------------------------------------------------
_BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"


class _CompileLog(list):
    """The compiles so far. Its length first waits for the compiles submitted to the background thread
    (`background_compile`): a count is then the one a synchronous engine would give, whenever it is read."""

    def __len__(self) -> int:
        background_compile.wait()
        return super().__len__()


_LOWERING = "/jax/core/compile/jaxpr_to_mlir_module_duration"
_backend_compile_log = _CompileLog()
_lowering_log = _CompileLog()


def _log_backend_compile(event: str, duration_secs: float, **kwargs: str | int) -> None:
    if event == _BACKEND_COMPILE:
        _backend_compile_log.append(event)
    elif event == _LOWERING:
        _lowering_log.append(event)


def backend_compiles() -> _CompileLog:
    """A list that grows by one entry with every XLA compile in this process, from now on (the tests count
    compiles, never durations). One listener serves every caller; each gets the shared log, so a test compares
    its length before and after what it measures."""
    if not _listening:
        jax.monitoring.register_event_duration_secs_listener(_log_backend_compile)
        _listening.append(True)
    return _backend_compile_log


def interpreted_and_compiled(fn: Callable[..., Any], args: tuple) -> tuple[Any, Any]:
    """`fn(*args)` computed by tapeshim's host interpreter from `jax.jit(fn)`'s trace, and by XLA; asserts the
    interpreter has rules for all of it. The interpreter's oracle is XLA: it runs JAX's primitives where XLA
    would (what a tapeshim op computes is compared with TF elsewhere)."""
    from tapeshim._src import interpret

    jitted = jax.jit(fn)
    traced = jitted.trace(*args)
    assert interpret.supported(traced.jaxpr), "the interpreter has rules for all of it"
    interpreted = interpret.run(traced, args)
    assert interpreted is not None
    compiled = jitted(*args)
    structure: Any = jax.tree.structure(interpreted)  # (jax's stubs give its tree structures no `==`)
    assert structure == jax.tree.structure(compiled)
    return interpreted, compiled


def program_lowerings() -> _CompileLog:
    """As `backend_compiles`, one entry per program lowered for a compile: a program compiled again counts
    here even where its executable comes from the compile cache on disk (`compile_cache`), which the tests'
    processes share and `backend_compiles` does not count."""
    backend_compiles()
    return _lowering_log


_listening: list[bool] = []
