"""Shape families: one symbolic trace of a kernel serves its new sizes without tracing again.

An eager op's kernel, and the per-op tier's forward and VJP kernels, are traced
by JAX once per argument signature before their first (host) call: 1-3 ms each.
A program whose sizes keep changing (an RL episode of a new length, a batch of a
new size) traces every kernel again for each size, and that was most of such a
program's time.

A kernel's first signature of a structure (its arguments' tree, dtypes, ranks
and weak types) is traced with its concrete shapes, as before. When a second
signature of that structure comes with other sizes, the kernel is traced once
more with a symbolic dimension (`jax.export.symbolic_shape`) wherever the two
signatures' sizes differ: the *family* (a structure keeps up to `FAMILIES_PER_STRUCTURE`, the least
recently used giving way; a call no family fits starts the next). Every later signature a family fits is
computed on the host from that trace, its dimensions evaluated at the call's
sizes (`interpret.BoundTemplate`), with no JAX trace. The same goes for the
output shapes an op records under a tape (`registry.out_avals`), from the same symbolic trace: equal
templates give equal symbolic arguments (`_structs`), which JAX's cache of the kernel's traces maps to one
trace.

A call fits a family where its constant dimensions are the family's, and its
symbolic dimensions are sizes of 2 or more that differ from each other and from
the family's constant dimensions. The symbols are declared `>= 2`, so a trace
decides a comparison of sizes only where it holds for every size that fits
(`n == 1`, `n > 1`); a kernel whose Python needs a concrete size (`int(n)`,
`range(n)`) fails its symbolic trace, and that structure is traced per
signature from then on, as before. A kernel compiles from its concrete trace
(`kernel_calls.KernelCalls`), so compiled code is never symbolic.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
from jax import export

from tapeshim._src import symbolic_dims

_SIZE = 32
FAMILIES_PER_STRUCTURE = 4

stats = {"families": 0, "failed": 0, "fitted_calls": 0}
"""Families made, structures whose symbolic trace failed, and signatures served by a family (no JAX trace)."""


class Family:
    """A symbolic form of one argument structure: per leaf a shape of ints (constant) and symbol names."""

    __slots__ = ("template", "constants", "value")

    def __init__(self, template: tuple, value: Any) -> None:
        self.template = template
        self.constants = {d for shape in template for d in shape if d.__class__ is int}
        self.value = value
        """What the symbolic trace gave: a `BoundTemplate` of the trace (`KernelCalls`) or its output structs."""

    def sizes(self, shapes: tuple) -> dict[str, int] | None:
        """Each symbol's size in `shapes` (one per leaf), or None where the call does not fit the family."""
        sizes: dict[str, int] = {}
        for pattern, shape in zip(self.template, shapes):
            for dim, size in zip(pattern, shape):
                if dim.__class__ is int:
                    if dim != size:
                        return None
                elif sizes.setdefault(dim, size) != size:
                    return None
        taken = set(sizes.values())
        if len(taken) != len(sizes) or min(taken) < 2 or taken & self.constants:
            return None
        return sizes


def structure(args: Any, leaves: list) -> tuple | None:
    """The key of `args`' structure (tree, and per leaf its rank, dtype and weak type), or None where a leaf is
    not an array."""
    try:
        return (
            jax.tree.structure(args),
            tuple((len(leaf.shape), leaf.dtype, getattr(leaf, "weak_type", False)) for leaf in leaves),
        )
    except AttributeError:
        return None


def _concrete_signature(args: Any, leaves: list) -> tuple[tuple, tuple] | None:
    """`(structure key, shapes)` of a call, or None where a leaf is not an array or a size is symbolic already
    (a trace for every size)."""
    key = structure(args, leaves)
    if key is None:
        return None
    shapes = tuple(tuple(leaf.shape) for leaf in leaves)
    if not all(d.__class__ is int for shape in shapes for d in shape):
        return None
    return key, shapes


def _template(first: tuple, shapes: tuple) -> tuple | None:
    """Per leaf, the dimensions the two signatures agree on (ints) and a symbol name where they differ (one per
    pair of sizes); None where a differing size is under 2, or the signatures do not differ."""
    names: dict[tuple, str] = {}
    template = []
    for old, new in zip(first, shapes):
        pattern: list = []
        for a, b in zip(old, new):
            if a == b:
                pattern.append(a)
            elif a < 2 or b < 2:
                return None
            else:
                pattern.append(names.setdefault((a, b), f"_k{len(names)}"))
        template.append(tuple(pattern))
    return tuple(template) if names else None


_STRUCTS_SIZE = 256
_structs_made: dict = {}


def _structs(template: tuple, leaves: list) -> list:
    """`jax.ShapeDtypeStruct`s of the leaves with the template's symbols (one scope, each `>= 2`).

    The same template and dtypes give the same structs (a bounded map, cleared when full): an op's output
    shapes (`registry.out_avals`) and its host calls (`kernel_calls`) keep families of their own, and with equal
    symbolic arguments the second family's trace is the first's, from JAX's cache of the kernel's traces.
    """
    key = (template, tuple((leaf.dtype, getattr(leaf, "weak_type", False)) for leaf in leaves))
    made = _structs_made.get(key)
    if made is None:
        if len(_structs_made) >= _STRUCTS_SIZE:
            _structs_made.clear()
        made = _structs_made[key] = _new_structs(template, leaves)
    return made


_SHARED_NAMES = tuple(f"_k{i}" for i in range(8))
_shared_scope = export.SymbolicScope([f"{name} >= 2" for name in _SHARED_NAMES])
_shared_symbols = dict(zip(_SHARED_NAMES, export.symbolic_shape(", ".join(_SHARED_NAMES), scope=_shared_scope)))
"""The symbols of every family's template, in one scope: a symbol is the same in every family's trace, so a trace
whose arguments another family's trace typed (a gradient program replaying a Keras call's family program,
`keras_program_families`) binds that trace's jaxpr. Each is `>= 2`, as every family declares."""


def _new_structs(template: tuple, leaves: list) -> list:
    names = sorted({d for shape in template for d in shape if d.__class__ is not int})
    if all(name in _shared_symbols for name in names):
        symbols = _shared_symbols
    else:  # (a template of more symbols: a scope of its own)
        scope = export.SymbolicScope([f"{name} >= 2" for name in names])
        symbols = dict(zip(names, export.symbolic_shape(", ".join(names), scope=scope)))
    return [
        jax.ShapeDtypeStruct(
            tuple(d if d.__class__ is int else symbols[d] for d in shape),
            leaf.dtype,
            weak_type=getattr(leaf, "weak_type", False),
        )
        for shape, leaf in zip(template, leaves)
    ]


class _Structure:
    """The families of one argument structure, and the shapes of a call no family fitted (the first signature
    of the next family)."""

    __slots__ = ("families", "pending", "failed")

    def __init__(self, shapes: tuple) -> None:
        self.families: list[Family] = []
        self.pending: tuple | None = shapes
        self.failed = False


class Families:
    """The shape families of one kernel, by argument structure (a bounded map, cleared when full): up to
    `FAMILIES_PER_STRUCTURE` templates each (a batch dimension that varies in one program, a length in another)."""

    __slots__ = ("_by_structure",)

    def __init__(self) -> None:
        self._by_structure: dict = {}

    def find(self, args: Any, leaves: list, symbolic: Callable[[Any], Any]) -> tuple[Any, dict[str, int]] | None:
        """`(the family's value, the call's sizes)` where the call (`args`, its leaves flat) fits a family of its
        structure, else None (the caller traces the call's own shapes).

        Args:
          args: the call's arguments.
          leaves: the arrays among them, flat.
          symbolic: makes a family's value from symbolic arguments (as `args`, of `jax.ShapeDtypeStruct`s);
            may raise (the structure is then traced per signature).
        """
        signature = _concrete_signature(args, leaves)
        if signature is None:
            return None
        key, shapes = signature
        known = self._by_structure.get(key)
        if known is None:  # the first signature: traced with its shapes
            self._first_signature(key, shapes)
            return None
        if known.failed:
            return None
        for index, family in enumerate(known.families):
            sizes = family.sizes(shapes)
            if sizes is not None:
                stats["fitted_calls"] += 1
                if index:  # (the most recently used first: a full structure drops the least recently used)
                    known.families.insert(0, known.families.pop(index))
                return family.value, sizes
        template = None if known.pending is None else _template(known.pending, shapes)
        sizes = None if template is None else Family(template, None).sizes(shapes)
        if template is None or sizes is None:
            # (no family, or one this call would not fit: two of its sizes equal, 512 x 512 where the first
            # call had 64 x 32. Its symbolic trace would serve only later calls that may never come.)
            known.pending = shapes
            return None
        try:
            value = symbolic(jax.tree.unflatten(key[0], _structs(template, leaves)))
        except Exception:  # noqa: BLE001 - the kernel's Python needs concrete sizes: traced per signature
            known.failed = True
            stats["failed"] += 1
            return None
        family = Family(template, value)
        if len(known.families) >= FAMILIES_PER_STRUCTURE:  # (earlier code's families give way to this loop's)
            known.families.pop()
        known.families.insert(0, family)
        known.pending = None
        stats["families"] += 1
        stats["fitted_calls"] += 1
        return family.value, sizes

    def note(self, args: Any, leaves: list) -> None:
        """Notes a call served elsewhere (a compiled program) as its structure's first signature, where the
        structure has none yet: its next signature of other sizes makes the family at once."""
        signature = _concrete_signature(args, leaves)
        if signature is not None and signature[0] not in self._by_structure:
            self._first_signature(*signature)

    def _first_signature(self, key: tuple, shapes: tuple) -> None:
        """A structure's first signature, the pending one of its first family (a full map is cleared first)."""
        if len(self._by_structure) >= _SIZE:
            self._by_structure.clear()
        self._by_structure[key] = _Structure(shapes)

    def failed(self, args: Any, leaves: list) -> None:
        """The structure of `args` is traced per signature from now on (its family's trace is of no use)."""
        key = structure(args, leaves)
        known = None if key is None else self._by_structure.get(key)
        if known is not None:
            known.failed = True
            stats["failed"] += 1


def resolved_shapes(structs: Any, sizes: dict[str, int]) -> list | None:
    """The shapes of `structs` (symbolic output structs, flat) at `sizes`; None where a dimension's
    expression cannot be evaluated (`symbolic_dims.Unresolved`)."""
    resolve = symbolic_dims.resolver(sizes)
    try:
        return [tuple(resolve(d) for d in struct.shape) for struct in structs]
    except symbolic_dims.Unresolved:
        return None
