"""`tf.case`: TF's argument checks, its default action and its exclusivity check, eagerly and in traces.

TF builds `tf.case` from nested `tf.cond`s (`control_flow_case.py` in TF). With `exclusive=True` it
first asserts that at most one predicate holds; with no `default`, the last pair becomes the default
action, which asserts that its predicate holds ("None of conditions evaluated as True"), so the
exclusivity check then covers the other pairs only. Eagerly both assertions raise at once, with
`tf.debugging.Assert`'s eager message; in a `tf.function` they are `Assert` ops that fail when the
graph runs, with the graph's message.

Here, eagerly (and with predicates known while a function is traced) the predicates are read and the
assertions raise at once, each with the message TF gives in that mode. With predicates known only when
the program runs, the branch is chosen by one op whose implementation makes both assertions runtime
checks (`runtime_checks.require`), and the chosen index drives one `lax.switch` over the branches:

* inside `tapeshim.function` the op is recorded in the trace; the compiled program then raises TF's
  `InvalidArgumentError`, with TF's graph message, on a call that breaks them, and runs normally otherwise;
* in a Keras call JAX traces (a layer's `call`, a learning-rate schedule in the optimizer's update), the
  checks are made only where the program runs under `checkify` (`runtime_checks.checks_functionalized`:
  the programs tapeshim's Keras bridge compiles, for calls TF's Keras runs eagerly, hence TF's eager
  message). Inside Keras's own `fit` step, which JAX compiles without `checkify`, a check could not be
  lowered: there the branch is chosen unchecked (TF's graph would raise).
"""

from __future__ import annotations

import collections
import functools
from typing import Any, Callable, NoReturn, Sequence

import jax
import jax.numpy as jnp

from tapeshim._src import control_flow, control_flow_jax, errors, runtime_checks
from tapeshim._src.dtypes import int32
from tapeshim._src.node import OpKey
from tapeshim._src.recorded_call import record_call
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, concrete, convert_to_tensor

_EXCLUSIVE = "Input error: exclusive=True: more than 1 conditions ({names}) evaluated as True:"
_NONE_TRUE = "Input error: None of conditions evaluated as True:"
_FALSE = "tf.Tensor(False, shape=(), dtype=bool)"  # the condition an eager `Assert` reports as not true


def _eager_name(pred: Tensor, what: str) -> NoReturn:
    """TF's eager `tf.case` names a bad pair's predicate by `pred.name`, which eager tensors refuse: it
    raises TF's `AttributeError`, its message extended with what was wrong (`what`)."""
    raise AttributeError(f"Tensor.name is undefined when eager execution is enabled. (tf.case: {what}.)")


def _graph_names(predicates: Sequence[Tensor]) -> list[str]:
    """The predicates' graph names as TF's messages give them (`Greater:0`, `Greater_1:0`): a symbolic
    tensor's op, numbered within the list; a value known while tracing is a constant (`Const:0`)."""
    names, seen = [], collections.Counter[str]()
    for pred in predicates:
        symbolic = pred._symbolic_name() if isinstance(pred, Tensor) else None
        op = "Const" if symbolic is None else symbolic.rsplit(":", 1)[0]
        names.append(f"{op}:0" if not seen[op] else f"{op}_{seen[op]}:0")
        seen[op] += 1
    return names


def canonical_pairs(pred_fn_pairs: Any, exclusive: bool, eager: bool) -> tuple[list[Tensor], list[Callable]]:
    """The predicates and callables of `pred_fn_pairs`, checked as TF checks them.

    Raises:
      TypeError: if `pred_fn_pairs` is not a list, tuple or dict, an entry is not a 2-tuple, a predicate
        is not a boolean tensor or a callable is not callable (eagerly TF fails to name the predicate
        there, with an `AttributeError`).
      ValueError: for a dict when eager and not `exclusive` (its order decides), or no pairs at all.
    """
    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise TypeError(f"'pred_fn_pairs' must be a list, tuple, or dict. Received: {type(pred_fn_pairs)}")
    if isinstance(pred_fn_pairs, collections.OrderedDict):
        pairs = list(pred_fn_pairs.items())
    elif isinstance(pred_fn_pairs, dict):
        if eager and not exclusive:
            raise ValueError(
                "Unordered dictionaries are not supported for the 'pred_fn_pairs' argument when "
                "`exclusive=False` and eager mode is enabled."
            )
        # (a graph's order is by the predicates' names, as TF; tensors cannot be keys: they are unhashable)
        pairs = list(pred_fn_pairs.items()) if eager else sorted(pred_fn_pairs.items(), key=lambda i: i[0].name)
    else:
        pairs = list(pred_fn_pairs)
    predicates: list[Tensor] = []
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'pred_fn_pairs' must be a 2-tuple. Received {pair}.")
        pred, fn = pair
        if isinstance(pred, jax.Array):  # (a Keras op's result in a Keras call: TF's Keras gives a tensor there)
            pred = convert_to_tensor(pred)
        if not isinstance(pred, Tensor):
            raise TypeError(f"pred must be a Tensor, got: {pred}")
        if not pred._dtype.is_bool:
            what = f"pred must be Tensor of type bool, got {pred._dtype.name}"
            name = _eager_name(pred, what) if eager else _graph_names([pred])[0]
            raise TypeError(f"pred must be Tensor of type bool: {name}")
        if not callable(fn):
            name = _eager_name(pred, "fn in pred_fn_pairs must be callable") if eager else _graph_names([pred])[0]
            raise TypeError(f"fn for pred {name} must be callable.")
        predicates.append(pred)
    if not predicates:
        raise ValueError("pred_fn_pairs cannot be empty: tf.case needs at least one (predicate, callable) pair.")
    return predicates, [fn for _, fn in pairs]


def _unpack(result: Any, levels: int) -> Any:
    """A result as TF's eager `tf.cond(strict=False)` unpacks singleton lists and tuples, once per `tf.cond`
    the case's chain passed through."""
    for _ in range(levels):
        if isinstance(result, (list, tuple)) and len(result) == 1:
            result = result[0]
    return result


def _eager_summary(values: Sequence[bool], summarize: int) -> str:
    shown = [str(v) for v in values[:summarize]]
    return ", ".join(shown + (["..."] if len(values) > summarize else []))


def _graph_summary(values: Sequence[bool], summarize: int) -> str:
    shown = " ".join(str(int(v)) for v in values[:summarize])
    return f"[{shown}{'...' if len(values) > summarize else ''}]"


def _failed(text: str, values: Sequence[bool], summarize: int, eager: bool) -> errors.InvalidArgumentError:
    """TF's error for a failed `Assert(condition, [text, stacked predicates])`: eager, or a graph's."""
    if eager:
        message = f"Expected '{_FALSE}' to be true. Summarized data: b'{text}'\n{_eager_summary(values, summarize)}"
    else:
        message = f"assertion failed: [{text}] {_graph_summary(values, summarize)}"
    return errors.InvalidArgumentError(None, None, message)


def _concrete_case(
    predicates: list[Tensor],
    actions: list[Callable],
    default: Any,
    checked_default: bool,
    exclusive: bool,
    strict: bool,
    eager: bool,
) -> Any:
    """`tf.case` over predicates known now: TF's eager semantics (its graph's checks and messages inside a
    trace). Eagerly, as TF's chain of `tf.cond`s, a predicate after the first true one is not read."""
    chain = predicates[:-1] if checked_default else predicates
    if not eager and not callable(default):  # (TF's graph builds every tf.cond of the chain before it runs)
        raise TypeError("'false_fn' must be callable.")
    if exclusive:
        values = [bool(p) for p in chain]
        if sum(values) > 1:
            names = ", ".join("?" for _ in chain) if eager else ", ".join(_graph_names(chain))
            raise _failed(_EXCLUSIVE.format(names=names), values, len(values), eager)
    levels = 0 if strict or not eager else 1  # (TF's graph tf.cond does not unpack singletons)
    for position, (pred, fn) in enumerate(zip(chain, actions)):
        if position == len(chain) - 1 and not callable(default):  # TF's innermost tf.cond refuses it
            raise TypeError("'false_fn' must be callable.")
        if not eager:  # (a graph's tf.cond refuses a predicate that is no scalar when it runs)
            _check_graph_arguments([pred], default)
        if bool(pred):
            return _unpack(fn(), levels * (position + 1))
    if not eager:
        _check_graph_arguments(predicates[-1:], default)
    if checked_default and not bool(predicates[-1]):
        values = [False] * len(chain) + [False]
        raise _failed(_NONE_TRUE, values, 3, eager)
    return _unpack(default(), levels * len(chain))


def _check_graph_arguments(predicates: list[Tensor], default: Any) -> None:
    """The errors of TF's graph `tf.case` before it runs: a predicate that is no scalar, a default that is no
    callable."""
    for pred in predicates:
        if pred._shape:
            raise errors.invalid_argument(
                f"The first argument to tf.cond must be a scalar, got shape {list(pred._shape)}", "If"
            )
    if not callable(default):
        raise TypeError("'false_fn' must be callable.")


def _fields(shown: int, total: int, eager: bool) -> str:
    """A runtime check's text for the stacked predicates, as `Assert` prints them: a graph's `[1 0 0...]`,
    eagerly `True, False, False, ...`."""
    fields = ["{p%d}" % i for i in range(shown)]
    if eager:
        return ", ".join(fields + (["..."] if total > shown else []))
    return "[" + " ".join(fields) + ("..." if total > shown else "") + "]"


def _values(flags: jax.Array) -> dict[str, jax.Array]:
    return {f"p{i}": flags[i] for i in range(flags.shape[0])}


def _check_text(text: str, eager: bool) -> str:
    """The runtime check's message before the predicates' values (escaped for `require`)."""
    if eager:
        return runtime_checks._escape(f"Expected '{_FALSE}' to be true. Summarized data: b'{text}'\n")
    return runtime_checks._escape(f"assertion failed: [{text}] ")


@functools.lru_cache(maxsize=256)
def _selector(chain: int, exclusive: bool, checked_default: bool, names: str, eager: bool) -> Callable[..., tuple]:
    """The op choosing the branch from the predicates' values: the first true one of the `chain` first,
    else `chain` (the default); TF's assertions are its runtime checks, with TF's messages (`eager`: the
    messages of TF's eager `Assert`)."""
    exclusive_message = _check_text(_EXCLUSIVE.format(names=names), eager)
    none_message = _check_text(_NONE_TRUE, eager)

    def select(*preds: jax.Array) -> tuple:
        flags = jnp.stack([jnp.reshape(p, ()) for p in preds])
        shown = flags if eager else flags.astype(jnp.int32)  # (a graph's Assert prints bools as 0 and 1)
        held = flags[:chain]
        if exclusive and chain > 1:
            message = exclusive_message + _fields(chain, chain, eager)
            runtime_checks.require(jnp.sum(held.astype(jnp.int32)) <= 1, message, **_values(shown[:chain]))
        index = jnp.where(jnp.any(held), jnp.argmax(held), chain) if chain else jnp.zeros((), jnp.int32)
        if checked_default:
            count = min(len(preds), 3)  # (TF's Assert summarizes 3 values)
            message = none_message + _fields(count, len(preds), eager)
            runtime_checks.require(jnp.any(held) | flags[-1], message, **_values(shown[:count]))
        return (index.astype(jnp.int32),)

    return select


def _traced_case(
    predicates: list[Tensor],
    actions: list[Callable],
    default: Any,
    checked_default: bool,
    exclusive: bool,
    strict: bool,
    eager: bool,
) -> Any:
    """`tf.case` over predicates known only when the program runs: one `lax.switch` on a checked index."""
    _check_graph_arguments(predicates, default)
    chain = len(predicates) - 1 if checked_default else len(predicates)
    names = ", ".join("?" for _ in range(chain)) if eager else ", ".join(_graph_names(predicates[:chain]))
    fns = actions[:chain] + [default]
    if _thread_state.trace is None:  # the values of a JAX trace (a Keras call): JAX's own switch
        checked = runtime_checks.checks_functionalized()  # (else a check could not be lowered: none)
        select = _selector(chain, exclusive and checked, checked_default and checked, names, eager)
        index = concrete(select(*[p.value for p in predicates])[0])
        result = control_flow_jax.switch(index, fns, control_flow._COND_MESSAGE)
        return result if strict or not eager else _unpack(result, 1)
    select = _selector(chain, exclusive, checked_default, names, eager)
    key = OpKey("Case", chain, exclusive, checked_default, names)
    (index,) = record_call(select, key, predicates, (((), int32),))
    return control_flow._switch(index, fns, "Case", control_flow._COND_MESSAGE)


def case(
    pred_fn_pairs: Any, default: Callable[[], Any] | None, exclusive: bool, strict: bool, name: str = "case"
) -> Any:
    """`tf.case` (see `control_flow.case`)."""
    # TF's eager mode, where TF's Keras calls a layer or a schedule that JAX traces here (in `fit`, TF's is a graph)
    eager = _thread_state.trace is None
    predicates, actions = canonical_pairs(pred_fn_pairs, exclusive, eager)
    checked_default = default is None
    if default is None:
        default = actions[-1]
    if not any(control_flow._is_traced(p) or control_flow_jax.jax_traced(p) for p in predicates):
        return _concrete_case(predicates, actions, default, checked_default, exclusive, strict, eager)
    return _traced_case(predicates, actions, default, checked_default, exclusive, strict, eager)
