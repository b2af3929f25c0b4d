"""What computing a VJP on the host costs (`host_vjp`, `host_gradient`): its work, equations and products."""

from __future__ import annotations

from typing import Any

from jax.extend import core as jax_core

from tapeshim._src import compile_tiers, interpret_cost, interpret_plan


def called_jaxprs(eqn: Any) -> list | None:
    """An equation's called jaxprs (a list), or None: what `interpret_cost.program_multiply_adds` looks into."""
    called = interpret_plan.called_jaxpr(eqn)
    return None if called is None else [called]


_WORK_FACTOR = 3
"""A VJP's work against its forward's: the forward again, and about twice that backward."""


def vjp_costs(closed: jax_core.ClosedJaxpr) -> tuple[int, int, int, float] | None:
    """The VJP of the forward `closed` as the host counts a program: `(the elements its operations produce, its
    equations, the multiply-adds of its products, its slow-to-compile operations' compile CPU seconds)`, the
    first three the forward's times `_WORK_FACTOR`, the last from `compile_tiers.COMPILE_CORE_GRADIENT_PRICES_S`;
    None where it is more work than a compile costs (`interpret_cost.HOST_ELEMENTS`, `HOST_MULTIPLY_ADDS`: the
    VJP then compiles)."""
    work = compile_tiers.produced_elements(closed) * _WORK_FACTOR
    products = interpret_cost.program_multiply_adds(closed, called_jaxprs) * _WORK_FACTOR
    if work > interpret_cost.HOST_ELEMENTS or products > interpret_cost.HOST_MULTIPLY_ADDS:
        return None
    core_price_s = compile_tiers.core_compile_price(
        closed, interpret_plan.inner_jaxprs, compile_tiers.COMPILE_CORE_GRADIENT_PRICES_S
    )
    return work, len(closed.jaxpr.eqns) * _WORK_FACTOR, products, core_price_s


def products_fit(products: int, traced_products: int) -> bool:
    """Whether a VJP plan whose products `vjp_costs` counted (`products`, its forward's `_WORK_FACTOR` times)
    and whose traced rules (`host_vjp_traced`) compute `traced_products` multiply-adds stays within the host's
    per call (`interpret_cost.HOST_MULTIPLY_ADDS`): a traced rule may compute more than that factor allows (a
    strided convolution's input cotangent is a dilated convolution), so they are counted on top."""
    return products + traced_products <= interpret_cost.HOST_MULTIPLY_ADDS
