"""A trace for every size, evaluated at one call's sizes: the program a size compiles from, without `jax.export`.

A `tapeshim.function` traced for every size (`function_symbolic`) has one jaxpr whose
dimensions are symbolic. XLA compiles for concrete sizes, and `jax.export` serves them
all: the program is exported once (its StableHLO lowered with the symbols left in) and
each size's compile refines the exported module's shapes. Exporting a small training
step takes 100-130 ms of Python, and the first call of an exported program loads LAPACK
(importing `scipy.linalg`, 130-320 ms where Keras has not imported it): all of it
holding the GIL, in the background thread, beside the host calls that wait for the
compile. Measured on a small training step called with changing batch sizes, on the
calling thread with LAPACK loaded, a size's first compile took 230 ms this way, where
tracing the symbolic jaxpr again with the size's dimensions (`sized_program`) and
compiling that took 125 ms; in the background thread beside the host calls, 520-780 ms
against 137 ms. Per size, the export's way is cheaper (a trace of one call, 5 ms, against
16-24 ms here): `function_symbolic.ExportedProgram` compiles its first sizes from
here and the later ones from the export.

The evaluation binds each equation's primitive with its parameters' symbolic dimensions
resolved (`symbolic_dims.resolver`). Calls, custom derivatives and remat are inlined (a
compiled call is never differentiated: a tape records the exported program), `cond`
and `while` become `lax.switch` and `lax.while_loop` over the evaluated branches and
bodies, and a symbolic dimension used as a value (`dim_as_value`) becomes its size.
Runtime checks are bound as they were traced, so `checkify` sees them as in the export.
A jaxpr with another nested jaxpr (`scan`, a `shard_map`, a `cond` choosing by platform) is not
`supported`.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np
from jax import lax
from jax.extend import core as jax_core

from tapeshim._src import interpret_plan, symbolic_dims


def _nested(eqn: Any) -> list:
    """The jaxprs `eqn` evaluates, as `_evaluate` reaches them (None where it cannot)."""
    name, params = eqn.primitive.name, eqn.params
    called = interpret_plan.called_jaxpr(eqn)  # (a call, a custom derivative, remat: evaluated in line)
    if called is not None:
        return [called]
    if name == "cond" and params.get("branches_platforms") is None:  # (a platform's choice: lowered per platform)
        return list(params["branches"])
    if name == "while":
        return [params["cond_jaxpr"], params["body_jaxpr"]]
    if any(True for _ in jax_core.jaxprs_in_params(params)):
        return [None]
    return []


def supported(closed: jax_core.ClosedJaxpr) -> bool:
    """Whether `sized_program` can evaluate `closed` (every nested jaxpr is one it reaches)."""
    for eqn in closed.jaxpr.eqns:
        for inner in _nested(eqn):
            if inner is None or not supported(inner):
                return False
    return True


def sized_program(closed: jax_core.ClosedJaxpr, out_tree: Any, sizes: dict[str, int]) -> Callable[..., Any]:
    """`program(*args)`: `closed` (a jaxpr with symbolic dimensions) evaluated where its symbols have `sizes`,
    traceable under `jax.jit` for arguments of those sizes; its outputs are unflattened by `out_tree`."""
    resolve = symbolic_dims.resolver(sizes)

    def program(*args: Any) -> Any:
        return out_tree.unflatten(_evaluate(closed, jax.tree.leaves(args), resolve))

    return program


def _evaluate(closed: jax_core.ClosedJaxpr, args: list, resolve: Callable[[Any], Any]) -> list:
    jaxpr = closed.jaxpr
    env: dict = dict(zip(jaxpr.constvars, closed.consts))
    env.update(zip(jaxpr.invars, args))

    def read(var: Any) -> Any:
        if isinstance(var, jax_core.Literal):
            return resolve(var.val) if symbolic_dims.is_symbolic(var.val) else var.val
        return env[var]

    for eqn in jaxpr.eqns:
        operands = [read(var) for var in eqn.invars]
        outputs = _equation(eqn, operands, resolve)
        env.update(zip(eqn.outvars, outputs))
    return [read(var) for var in jaxpr.outvars]


def _equation(eqn: Any, operands: list, resolve: Callable[[Any], Any]) -> list:
    name, params = eqn.primitive.name, eqn.params
    called = interpret_plan.called_jaxpr(eqn)
    if called is not None:
        return _evaluate(called, operands, resolve)
    if name == "cond":
        branches = [_branch(branch, resolve) for branch in params["branches"]]
        return list(lax.switch(operands[0], branches, *operands[1:]))
    if name == "while":
        n_cond, n_body = params["cond_nconsts"], params["body_nconsts"]
        cond_consts, body_consts = operands[:n_cond], operands[n_cond : n_cond + n_body]
        cond, body = params["cond_jaxpr"], params["body_jaxpr"]
        return lax.while_loop(
            lambda carry: _evaluate(cond, [*cond_consts, *carry], resolve)[0],
            lambda carry: _evaluate(body, [*body_consts, *carry], resolve),
            operands[n_cond + n_body :],
        )
    if name == "dim_as_value":
        return [np.asarray(resolve(params["dim"]), eqn.outvars[0].aval.dtype)]
    outputs = eqn.primitive.bind(*operands, **{key: resolve(value) for key, value in params.items()})
    return list(outputs) if eqn.primitive.multiple_results else [outputs]


def _branch(branch: jax_core.ClosedJaxpr, resolve: Callable[[Any], Any]) -> Callable[..., list]:
    return lambda *operands: _evaluate(branch, list(operands), resolve)
