"""TF functions that exist only in graph mode: `tf.hessians` (symbolic gradients, which TF refuses when
executing eagerly). tapeshim has no symbolic graph to differentiate, so it raises TF's eager error always;
nested `tf.GradientTape`s compute the same values."""

from __future__ import annotations

from typing import Any

from tapeshim._src.ops import table


@table.export(
    "hessians",
    gradient="-",
    dtypes=table.ANY,
    status="divergence",
    note="graph-only in TF: raises TF's eager RuntimeError, also inside tapeshim.function (where TF computes "
    "it); use nested GradientTapes",
)
def hessians(
    ys: Any,
    xs: Any,
    gate_gradients: bool = False,
    aggregation_method: Any = None,
    name: str = "hessians",
) -> list:
    """The Hessians of `sum(ys)` with respect to each of `xs`, which TF computes only in a graph.

    Args:
      ys: the tensors to differentiate.
      xs: the tensors to differentiate with respect to.
      gate_gradients: ignored.
      aggregation_method: ignored.
      name: ignored.

    Returns:
      Never returns.

    Raises:
      RuntimeError: always, as TF does when executing eagerly; use nested `tf.GradientTape`s.
    """
    del ys, xs, gate_gradients, aggregation_method, name
    raise RuntimeError("tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead.")
