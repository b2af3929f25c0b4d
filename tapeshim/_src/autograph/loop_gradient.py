"""A `lax.while_loop` whose trip count is only known at run time, made reverse differentiable.

JAX differentiates `lax.while_loop` only in forward mode. AutoGraph's loops over a
tensor bound (`for i in tf.range(n)`, `while i < n`) must support `tape.gradient`
as TF's do, so they run through `reverse_differentiable_while`: a `jax.custom_vjp`
whose forward pass counts the iterations, and whose backward pass walks them in
reverse, recomputing each iteration's state from the initial one (no memory per
iteration, quadratic time in the trip count) and applying the body's VJP to it.
Integer loop variables and captures get no cotangent (`float0`).

A `custom_vjp` has no JVP, and a `lax.while_loop` has no transpose, so one function
cannot serve both modes (a `custom_jvp` whose tangent is a `linear_call` with this
backward walk as its transpose would, but `linear_call` cannot be batched, which
`tape.jacobian` needs). The loop therefore chooses when JAX traces it: under forward
mode (an input is a `JVPTracer`: `tf.autodiff.ForwardAccumulator`) it is a plain
`lax.while_loop`, which JAX differentiates forwards; otherwise the `custom_vjp`.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.interpreters.ad import JVPTracer


def _inexact(values: Sequence[jax.Array]) -> list[bool]:
    return [jnp.issubdtype(v.dtype, jnp.inexact) for v in values]


def _pick(values: Sequence[Any], mask: Sequence[bool]) -> list:
    return [v for v, m in zip(values, mask) if m]


def _merge(values: Sequence[Any], replacements: Sequence[Any], mask: Sequence[bool]) -> tuple:
    it = iter(replacements)
    return tuple(next(it) if m else v for v, m in zip(values, mask))


def _no_cotangent(value: jax.Array) -> np.ndarray:
    return np.zeros(value.shape, dtype=jax.dtypes.float0)


def reverse_differentiable_while(
    keep_going: Callable[[tuple, tuple], jax.Array], step: Callable[[tuple, tuple], tuple], init: tuple, caps: tuple
) -> tuple:
    """`lax.while_loop(lambda c: keep_going(c, caps), lambda c: step(c, caps), init)`, differentiable both ways.

    Args:
      keep_going: the loop condition, of the carry and the captured values.
      step: the loop body, of the carry and the captured values.
      init: the initial carry (a tuple of arrays).
      caps: the captured values the condition and body read (a tuple of arrays).

    Returns:
      The final carry.
    """
    if any(isinstance(v, JVPTracer) for v in (*init, *caps)):  # forward mode: JAX's own JVP of the loop
        return lax.while_loop(lambda c: keep_going(c, caps), lambda c: step(c, caps), tuple(init))
    carry_mask, caps_mask = _inexact(init), _inexact(caps)

    @jax.custom_vjp
    def run(init: tuple, caps: tuple) -> tuple:
        return lax.while_loop(lambda c: keep_going(c, caps), lambda c: step(c, caps), init)

    def forward(init: tuple, caps: tuple) -> tuple:
        count, final = lax.while_loop(
            lambda s: keep_going(s[1], caps), lambda s: (s[0] + 1, step(s[1], caps)), (jnp.zeros((), jnp.int32), init)
        )
        return final, (init, caps, count)

    def backward(residuals: tuple, cotangent: tuple) -> tuple:
        init, caps, count = residuals

        def one_iteration_back(j: jax.Array, acc: tuple) -> tuple:
            carry_ct, caps_ct = acc
            state = lax.fori_loop(0, count - 1 - j, lambda _, c: step(c, caps), init)

            def differentiable_step(float_state: list, float_caps: list) -> list:
                out = step(_merge(state, float_state, carry_mask), _merge(caps, float_caps, caps_mask))
                return _pick(out, carry_mask)

            _, vjp = jax.vjp(differentiable_step, _pick(state, carry_mask), _pick(caps, caps_mask))
            d_state, d_caps = vjp(carry_ct)
            return list(d_state), [a + b for a, b in zip(caps_ct, d_caps)]

        start = (_pick(cotangent, carry_mask), [jnp.zeros_like(c) for c in _pick(caps, caps_mask)])
        carry_ct, caps_ct = lax.fori_loop(0, count, one_iteration_back, start)
        return (
            _merge([_no_cotangent(v) for v in init], carry_ct, carry_mask),
            _merge([_no_cotangent(v) for v in caps], caps_ct, caps_mask),
        )

    run.defvjp(forward, backward)
    return run(tuple(init), tuple(caps))
