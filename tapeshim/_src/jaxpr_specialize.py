"""A jaxpr traced with symbolic dimensions, made concrete for one call's sizes without tracing again.

A gradient request over batches of new sizes has its forward traced once with
symbolic sizes (`host_gradient.SizedFirstCalls`); each size's host VJP plan
(`host_vjp`) is then made from that jaxpr with the size's dimensions put in:
every symbolic dimension in a variable's type or an equation's parameters
evaluated (`symbolic_dims.resolver`), nested jaxprs (a `jit`, a custom
derivative's function, a loop's body) likewise. No Python is traced again: a
small Keras model's new size cost 3-5 ms of forward trace, and its model's and
loss's own traces (15 ms) where its calls had no shape family.

The result is for the host's plans only. A custom derivative's rule (a
`custom_jvp_call`'s `jvp_jaxpr_fun`, a `custom_vjp_call`'s forward and backward)
is Python JAX calls when it differentiates, traced for the symbolic types: the
host's VJP plans read which rule it is from the function's source and never call
it, but JAX must not differentiate or run the specialized jaxpr.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from jax.extend import core as jax_core

from tapeshim._src.interpret_plan import holds_symbolic


def specialized(closed: jax_core.ClosedJaxpr, resolve: Callable[[Any], Any]) -> jax_core.ClosedJaxpr:
    """`closed` with every symbolic dimension evaluated by `resolve` (`symbolic_dims.resolver` of one call's sizes).

    Raises:
      symbolic_dims.Unresolved: a dimension's expression cannot be evaluated.
    """
    return jax_core.ClosedJaxpr(_Specializer(resolve).jaxpr(closed.jaxpr), closed.consts)


class _Specializer:
    __slots__ = ("_resolve", "_vars")

    def __init__(self, resolve: Callable[[Any], Any]) -> None:
        self._resolve = resolve
        self._vars: dict = {}  # a symbolic-typed variable -> its concrete one (variables are per jaxpr)

    def jaxpr(self, jaxpr: jax_core.Jaxpr) -> jax_core.Jaxpr:
        constvars = [self._var(v) for v in jaxpr.constvars]
        invars = [self._var(v) for v in jaxpr.invars]
        eqns = []
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "dim_as_value":  # (a size used as a value: now a constant of the program)
                (out,) = eqn.outvars
                size = self._resolve(eqn.params["dim"])
                self._vars[out] = jax_core.Literal(np.array(size, getattr(out.aval, "dtype", np.int64)), out.aval)
                continue
            eqns.append(self._eqn(eqn))
        return jaxpr.replace(
            constvars=constvars, invars=invars, eqns=eqns, outvars=[self._atom(v) for v in jaxpr.outvars]
        )

    def _eqn(self, eqn: Any) -> Any:
        return eqn.replace(
            invars=[self._atom(v) for v in eqn.invars],
            outvars=[self._var(v) for v in eqn.outvars],
            params={name: self._param(value) for name, value in eqn.params.items()},
        )

    def _aval(self, aval: Any) -> Any:
        shape = getattr(aval, "shape", None)
        if shape is None or not holds_symbolic(tuple(shape)):
            return aval
        return aval.update(shape=self._resolve(tuple(shape)))

    def _var(self, var: Any) -> Any:
        made = self._vars.get(var)
        if made is None:
            aval = self._aval(var.aval)
            if aval is var.aval:
                made = var
            elif isinstance(var, jax_core.DropVar):
                made = jax_core.DropVar(aval)
            else:
                made = jax_core.Var(aval)
            self._vars[var] = made
        return made

    def _atom(self, atom: Any) -> Any:
        return atom if isinstance(atom, jax_core.Literal) else self._var(atom)  # (or the Literal of a size)

    def _param(self, value: Any) -> Any:
        if isinstance(value, jax_core.ClosedJaxpr):
            return jax_core.ClosedJaxpr(self.jaxpr(value.jaxpr), value.consts)
        if isinstance(value, jax_core.Jaxpr):
            return self.jaxpr(value)
        if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
            if any(isinstance(v, (jax_core.ClosedJaxpr, jax_core.Jaxpr)) for v in value):
                return type(value)(self._param(v) for v in value)
        if holds_symbolic(value):
            return self._resolve(value)
        return value
