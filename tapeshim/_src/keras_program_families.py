"""Shape families of Keras calls' programs: one symbolic trace serves a call's new sizes.

A Keras call runs as one op whose program (`keras_bridge._Program`) is traced
once per input signature: its analysis (what the call changes, returns and
reads) and the jaxpr its replays bind (`jaxpr_inline`). Tracing Keras's Python
costs 5-10 ms for a small model or loss, and a program of batches of new sizes
(an epoch's last, partial batch; padded text of a new length) paid it for every
size, twice per step for a model and its loss.

A call's second signature of one structure (the same call, arguments and
variables, with tensors of the same ranks and dtypes at other sizes) is traced
once more with a symbolic dimension wherever the two signatures' sizes differ
(`kernel_families`): the family's program. Every later size it fits is a
`SizedProgram` of it: the family's analysis and replay, and its outputs'
shapes evaluated at the call's sizes, with no trace of Keras's Python. A call
whose Python needs a concrete size (`int(n)`) fails its symbolic trace, and
its structure is traced per signature from then on, as before. JAX decides
`n == 8` False for a symbol, so a user's layer deciding on its batch's size
would take that branch at every size, where Keras's own layers are written for
an unknown batch dimension (their functional build has one). So the symbolic
trace of a call running a user's Python (a subclassed model, a layer of the
user's own, a `Lambda`'s function: not `_own_code`) is watched
(`size_decisions`): where that Python used a symbolic size (`n == 8`,
`n % 2`, `x.shape.as_list()`), the family is refused, and the call is traced
per signature.

A family's sizes are one op (one op key), so a gradient request over them has
one structure at every size (`replay.sizes_erased`). The family's first size
is a new structure, computed as a first step is (`host_gradient.first_calls`:
the forward traced, the host's VJP rules), the family's jaxpr made concrete for
that size in the forward's trace (`jaxpr_specialize`). At the next size the
forward is traced once with symbolic sizes, binding the family's jaxpr where its
types are the request's (`kernel_families` names symbols alike, in one scope),
and every later size's VJP plan is made from it with no trace
(`sized_gradients`, `host_gradient.SizedFirstCalls`). The per-op tier computes
a family's call without a trace too (`family_replay`), and so does a call
outside any tape (`keras_bridge._Program.run_values`).
"""

from __future__ import annotations

import functools
import itertools
import types
import weakref
from collections import OrderedDict
from typing import Any, Callable, Sequence

import jax
import numpy as np
from jax.extend import core as jax_core

from tapeshim._src import (
    dtypes,
    host_vjp,
    interpret,
    jaxpr_inline,
    jaxpr_specialize,
    kernel_families,
    size_decisions,
    symbolic_dims,
)
from tapeshim._src.keras_compat import flatten_layers, keras
from tapeshim._src.node import OpKey
from tapeshim._src.state import _thread_state, in_forward_mode

_TRACE_SETTINGS = (
    "jax_default_matmul_precision",
    "jax_enable_x64",
    "jax_numpy_dtype_promotion",
    "jax_numpy_rank_promotion",
)  # (read as attributes: a setting with a context manager has its thread's value there)


def trace_settings() -> tuple:
    """What a trace bakes into its equations besides the arguments' types: the JAX settings that change the
    equations traced (a product's precision, 64-bit types, promotion), and whether a forward-mode program is
    traced (tapeshim's kernels then trace JAX's own rules, not their reverse-mode `custom_vjp`s)."""
    return (in_forward_mode(), *[getattr(jax.config, name) for name in _TRACE_SETTINGS])


def _types_of(values: Sequence[Any]) -> tuple | None:
    try:
        return tuple(jax.typeof(v) for v in values)
    except Exception:  # noqa: BLE001 - values a trace cannot type: none
        return None


def _equal_types(given: tuple, expected: Sequence[Any]) -> bool:
    try:
        return len(given) == len(expected) and all(a == b for a, b in zip(given, expected))
    except Exception:  # noqa: BLE001 - types a trace cannot compare (another scope's symbols): not equal
        return False


def replay_of(fn: Callable[..., tuple], closed: Any) -> Callable[..., tuple]:
    """`fn(*values)`, from the call's trace (`closed`) where the values are of its argument types and the trace's
    settings hold: a gradient program, or the per-op tier, replaying the recorded call binds the equations of
    its jaxpr (`jaxpr_inline`) instead of running the Keras call's Python again. Values of other types
    (another trace's symbolic sizes, a replica's inside `shard_map`, whose types say which mesh axes they vary
    over), another product precision (TF32 turned off since) or a forward-mode program run the call's Python."""
    if closed.effects:  # (runtime checks, callbacks: staged by the call's own Python in each trace)
        return fn
    types = [var.aval for var in closed.jaxpr.invars]
    settings = trace_settings()

    def replay(*values: Any) -> tuple:
        given = _types_of(values)
        if given is not None and _equal_types(given, types) and trace_settings() == settings:
            return tuple(jaxpr_inline.inline(closed, values))
        return fn(*values)

    return replay


_CONCRETE_JAXPRS = 8
_RUN_PYTHON = object()


def family_replay(fn: Callable[..., tuple], traced: Any) -> Callable[..., tuple]:
    """`replay_of` for a family's program, whose trace (`traced`) has symbolic sizes: values of those symbolic
    types bind its jaxpr; values of one size bind that size's jaxpr, traced from `fn` the first time a replay
    meets it (a gradient program's trace: one trace of Keras's Python per size, as an own program's); anything
    else runs `fn`.

    The per-op tier computes the call at a size without any trace (`replay_eager`): its forward kernel from the
    family's trace bound to the size (`host_forward`), its VJP kernel from the host's VJP rules over the
    family's jaxpr made concrete for the size (`sized_vjp`, `jaxpr_specialize`)."""
    closed = traced.jaxpr
    if closed.effects:
        return fn
    types = [var.aval for var in closed.jaxpr.invars]
    symbolic_shapes = [tuple(t.shape) for t in types]
    dtypes_in = [np.dtype(t.dtype) for t in types]
    settings = trace_settings()
    concrete: dict = {}  # one size's jaxprs, traced and specialized (the latest `_CONCRETE_JAXPRS`)
    template: list = []  # (the family's trace made ready for the host, once: `interpret.BoundTemplate`)

    def replay(*values: Any) -> tuple:
        given = _types_of(values)
        if given is None or len(given) != len(types) or trace_settings() != settings:
            return fn(*values)
        if _equal_types(given, types):
            return tuple(jaxpr_inline.inline(closed, values))
        if not all(d.__class__ is int for t in given for d in getattr(t, "shape", (None,))):
            return fn(*values)  # (another scope's symbols, or a value without a shape)
        host_rules = _thread_state.host_rules_trace  # (a jaxpr only the host's VJP rules read: the family's,
        if host_rules is not None and jax_core.find_top_trace(values) is host_rules:  # made concrete)
            sizes = sizes_of(given)
            if sizes is not None:
                try:
                    return tuple(jaxpr_inline.inline(specialized(sizes), values))
                except symbolic_dims.Unresolved:
                    pass
        key = ("traced", given)
        jaxpr: Any = concrete.get(key)
        if jaxpr is None:
            structs = [jax.ShapeDtypeStruct(t.shape, t.dtype, weak_type=t.weak_type) for t in given]
            jaxpr = jax.make_jaxpr(fn)(*structs)
            if jaxpr.effects:  # (runtime checks, callbacks: the call's Python stages them in each trace)
                jaxpr = _RUN_PYTHON
            remember(key, jaxpr)
        if jaxpr is _RUN_PYTHON:
            return fn(*values)
        return tuple(jaxpr_inline.inline(jaxpr, values))

    def remember(key: tuple, jaxpr: Any) -> None:
        if len(concrete) >= _CONCRETE_JAXPRS:
            try:
                del concrete[next(iter(concrete))]
            except (KeyError, RuntimeError, StopIteration):  # (another thread's eviction, at once)
                pass
        concrete[key] = jaxpr

    def specialized(sizes: dict[str, int]) -> Any:
        """The family's jaxpr with `sizes` put in (for the host's rules only: `jaxpr_specialize`)."""
        key = ("specialized", tuple(sorted(sizes.items())))
        jaxpr = concrete.get(key)
        if jaxpr is None:
            jaxpr = jaxpr_specialize.specialized(closed, symbolic_dims.resolver(sizes))
            remember(key, jaxpr)
        return jaxpr

    def sizes_of(values: Sequence[Any]) -> dict[str, int] | None:
        """The family's sizes in `values` (a call's inputs), or None where they are not of its types."""
        if len(values) != len(types) or trace_settings() != settings:
            return None
        if any(getattr(v, "dtype", None) != dtype for v, dtype in zip(values, dtypes_in)):
            return None
        if any(getattr(v, "weak_type", False) for v in values):
            return None
        shapes = [tuple(np.shape(v)) for v in values]
        sizes = symbolic_dims.sizes_of(symbolic_shapes, shapes)
        if sizes is None:
            return None
        try:
            if symbolic_dims.resolver(sizes)(symbolic_shapes) != shapes:  # (the call's other dimensions too)
                return None
        except symbolic_dims.Unresolved:
            return None
        return sizes

    def host_forward(args: tuple) -> Any:
        sizes = sizes_of(args)
        if sizes is None:
            return None
        if not template:
            template.append(interpret.BoundTemplate(traced))
        return template[0].bind(sizes)

    def sized_vjp(inputs: Sequence[Any], given: Sequence[bool], wanted: Sequence[bool] | None) -> Any:
        sizes = sizes_of(inputs)
        if sizes is None or not interpret.enabled():
            return None
        try:
            return host_vjp.program_of(specialized(sizes), inputs, given, wanted)
        except symbolic_dims.Unresolved:
            return None

    replay.shape_family = True  # type: ignore[attr-defined]  # (its symbolic jaxpr serves symbolic traces)
    replay.host_forward = host_forward  # type: ignore[attr-defined]
    replay.sized_vjp = sized_vjp  # type: ignore[attr-defined]
    return replay


class SizedProgram:
    """One size of a family's program: the family's analysis, key and replay, and its outputs' `(shape, DType)`
    at this size (`avals`). What `keras_bridge.stateful_call` sets on it (`bound`) it sets on the family."""

    __slots__ = (
        "family", "avals", "key", "replay", "dependencies", "out_tree", "n_out", "changed", "written",
        "returned_variables", "cleared_masks", "random_seeds", "extra_variables", "_compiled",
    )  # fmt: skip

    def __init__(self, family: Any, avals: tuple) -> None:
        self.family = family
        self.avals = avals
        for name in self.__slots__[2:-1]:  # (the family's analysis, fixed once it is made)
            setattr(self, name, getattr(family, name))
        self._compiled = False  # (its calls outside a tape compile: they go to the family's jit at once)

    @property
    def bound(self) -> tuple:
        return self.family.bound

    @bound.setter
    def bound(self, value: tuple) -> None:
        self.family.bound = value

    def run_values(self, values: list) -> Any:
        """The call's outputs on `values` outside any tape and trace: the first calls of this size on the host
        from the family's trace (`KernelCalls`' `untraced`), then its compiled program."""
        family = self.family
        if not self._compiled and family.calls is not None:  # (None: a family whose trace has effects)
            result = family.calls.call(family.jitted, tuple(values), values, True)
            if result is not None:
                return result
            self._compiled = True
        return family.jitted(*values)


_program_ids = itertools.count()
_families: "weakref.WeakKeyDictionary[Any, OrderedDict]" = weakref.WeakKeyDictionary()
"""Per owner, its calls' structures (`program`) -> their shape families."""
_STRUCTURES_PER_OWNER = 64
stats = {"programs": 0, "sized_programs": 0, "users_families": 0, "decided": 0}
"""Programs traced (a shape's, or a family's); calls of new shapes served by a family's program (each a trace of
Keras's Python spared); families of calls running a user's Python; and such calls' symbolic traces refused
because that Python decided on a symbolic size (`size_decisions`)."""


_OWN_MODULES = ("keras.", "tapeshim.")


def _own_module(thing: Any) -> bool:
    """Whether a class's or a function's code is Keras's or tapeshim's."""
    return str(getattr(thing, "__module__", "") or "").startswith(_OWN_MODULES)


def _own_code(owner: Any) -> bool:
    """Whether all the Python a call of `owner` runs is Keras's or tapeshim's own: the owner's class (or, for a
    stateless function, the function), its sublayers' and a functional model's operations', and every function
    or callable object they hold (an activation, a recurrent activation, an activity regularizer, a `Lambda`'s
    function, a loss's or a metric's)."""
    if isinstance(owner, types.FunctionType):
        return _own_module(owner)
    objects = list(flatten_layers(owner)) if isinstance(owner, keras.layers.Layer) else [owner]
    for obj in list(objects):
        try:
            objects.extend(getattr(obj, "operations", None) or ())  # (a functional model's: a user's `Operation`)
        except Exception:  # noqa: BLE001 - a model not built yet has none
            pass
    for obj in objects:
        if not _own_module(type(obj)):
            return False
        for held in getattr(obj, "__dict__", {}).values():
            if callable(held) and not _own_callable(held):
                return False
    return True


def _own_callable(held: Any) -> bool:
    """Whether a callable a layer holds runs Keras's or tapeshim's code (through `functools.partial`,
    `functools.wraps`, a bound method, and a `tf.function`'s Python function)."""
    for _ in range(8):
        if isinstance(held, functools.partial):
            held = held.func
        elif isinstance(held, types.MethodType):
            held = held.__func__
        elif getattr(held, "python_function", None) is not None:  # (a `tf.function`: its Python function)
            held = held.python_function
        elif getattr(held, "__wrapped__", None) is not None:
            held = held.__wrapped__
        else:
            break
    if isinstance(held, (types.FunctionType, type)):
        return _own_module(held)
    return _own_module(type(held))


def program(
    owner: Any,
    call_key: tuple,
    in_structs: list,
    make: Callable[[list, OpKey, bool], Any],
) -> Any:
    """The program of a call with no program of its own signature yet: a family's, or a new one.

    Args:
      owner: the Keras object (or stateless function) whose call it is.
      call_key: the call's key (`keras_bridge.stateful_call`); its fourth part is the tensors' `(shape, DType)`.
      in_structs: the program's inputs' `jax.ShapeDtypeStruct`s (the tensors, their masks, the variables).
      make: `make(in_structs, key, family)`, a new `_Program` traced on `in_structs` (symbolic for a family),
        the op key of its recorded calls `key`.
    """
    structure_key = (*call_key[:3], tuple((len(shape), dtype) for shape, dtype in call_key[3]), *call_key[4:])

    def traced(structs: list, key: OpKey, family: bool) -> Any:
        stats["programs"] += 1
        return make(structs, key, family)

    by_structure = _families.get(owner)
    if by_structure is None:
        by_structure = _families[owner] = OrderedDict()
    known = by_structure.get(structure_key)
    if known is None:
        if len(by_structure) >= _STRUCTURES_PER_OWNER:
            try:
                by_structure.popitem(last=False)
            except KeyError:  # (emptied by another thread at once)
                pass
        # (whether its Python is all Keras's or tapeshim's: a swapped attribute makes another structure)
        known = by_structure[structure_key] = (kernel_families.Families(), _own_code(owner))
    families, own = known
    if not own and (not size_decisions.enabled() or size_decisions.hook_taken()):
        # (a user's Python: no family unless asked for; and not while a profiler runs, nor refused for good)
        return traced(in_structs, _new_key(), False)

    def family_traced(symbolic: list) -> Any:
        if own:
            return traced(symbolic, _new_key(), True)
        # a user's Python: watched for decisions on its sizes, which the symbolic trace would not follow
        with size_decisions.watching() as watch:
            made = traced(symbolic, _new_key(), True)
        if watch.decided:
            stats["decided"] += 1
            raise size_decisions.Decided(owner)  # (the structure is traced per signature: `Families.find`)
        stats["users_families"] += 1
        return made

    found = families.find(in_structs, in_structs, family_traced)
    if found is None:
        return traced(in_structs, _new_key(), False)
    family, sizes = found
    shapes = kernel_families.resolved_shapes(family.out_structs, sizes)
    if shapes is None:  # (an output size the family's expressions cannot give)
        families.failed(in_structs, in_structs)
        return traced(in_structs, _new_key(), False)
    stats["sized_programs"] += 1
    avals = tuple((shape, dtypes.from_numpy(np.dtype(s.dtype))) for shape, s in zip(shapes, family.out_structs))
    return SizedProgram(family, avals)


def _new_key() -> OpKey:
    """The op key of a program's recorded calls: its own (a family's sizes share theirs, as one op)."""
    return OpKey("KerasCall", next(_program_ids))
