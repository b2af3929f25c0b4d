"""NumPy rules for JAX's window reductions (pooling) and max pooling's gradient, for the host interpreter.

A CNN's `MaxPooling2D` or `AveragePooling2D` is a `reduce_window_max` or `reduce_window_sum`, and max
pooling's gradient a `select_and_scatter_add`. Without rules for them, a model with a pooling layer
(TF's CNN tutorial) compiled its call on its first step: 1.3 s where TF eager's whole step takes 0.1 s.

The rules visit the window's positions in row-major order, each a strided view of the padded operand over
every output position at once (a 2 x 2 pool is four NumPy calls), as XLA's CPU loops visit them:

* `reduce_window_max`, `_min` and `_sum` combine the positions' views with the interpreter's own `max`,
  `min` and `add` (XLA's -0 and NaN rules), starting from the primitive's identity, padding with it too;
* `select_and_scatter_add` keeps, per output position, the window element its `select_prim` (`ge` for max
  pooling, `le` for min) keeps against each later one (the first of equal maxima); the padding takes part,
  holding the dtype's lowest value for `ge` (highest for `le`), as in XLA's padded operand, and a padding
  element chosen takes its source value with it. An element several windows chose adds their values in the
  windows' output order, as XLA's loop does.

Windows that tile the operand (strides equal to the window, no padding: `MaxPooling2D`'s) combine the
positions' views in place (`_tiled_extreme`, fixing only the zero extremes' signs after), and the scatter
multiplies a finite source by each position's mask of first extremes (`_tiled_scatter`; a non-finite source
is copied through the masks, and an operand holding NaN takes the general path): a small CNN's pools and their
gradients took 12 of its host step's 38 ms, now about 2.

Base dilation (a transposed pooling) and negative padding are left to XLA (`SUPPORTED`). Maxima, minima and
the scatter are XLA's exactly; a window sum is XLA's to the rounding (XLA's CPU loop adds some padded windows'
positions in another order). `tests/test_interpret_windows.py` compares each with XLA's result.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable

import numpy as np

from tapeshim._src.interpret_rules import RULES, Rule, _identity, _rule


def _plain_windows(params: dict) -> bool:
    """`SUPPORTED`'s check: no base dilation, no negative padding."""
    base = params.get("base_dilation") or ()
    return all(d == 1 for d in base) and all(lo >= 0 and hi >= 0 for lo, hi in params["padding"])


def _grid(shape: tuple, window: tuple, strides: tuple, padding: tuple, dilation: tuple) -> tuple:
    """The output positions per dimension of a window over the padded `shape`."""
    return tuple(
        max(0, (size + lo + hi - ((w - 1) * d + 1)) // s + 1)
        for size, w, s, (lo, hi), d in zip(shape, window, strides, padding, dilation)
    )


def _view(padded: np.ndarray, offset: tuple, grid: tuple, strides: tuple, dilation: tuple) -> Any:
    """The elements at window position `offset` for every output position: a strided view of `padded`."""
    return padded[
        tuple(
            slice(o * d, o * d + (n - 1) * s + 1, s) if n else slice(0, 0)
            for o, n, s, d in zip(offset, grid, strides, dilation)
        )
    ]


def _padded(x: np.ndarray, padding: tuple, fill: Any) -> np.ndarray:
    if not any(lo or hi for lo, hi in padding):
        return x
    return np.pad(x, padding, constant_values=fill)


def _tiling(shape: tuple, window: tuple, strides: tuple, padding: tuple, dilation: tuple) -> bool:
    """Whether the windows tile the operand: each element in one window at most (strides equal to the window,
    no padding, no dilation), as a CNN's `MaxPooling2D` places them (`_tile_views`)."""
    return (
        tuple(window) == tuple(strides)
        and all(lo == 0 and hi == 0 for lo, hi in padding)
        and all(d == 1 for d in dilation)
    )


def _tile_views(x: np.ndarray, window: tuple, grid: tuple) -> list:
    """The elements of tiling windows (`_tiling`) at each window position, in the row-major order XLA's loop
    visits them: strided views of `x` (writable where `x` is), one per position, each of shape `grid`."""
    covered = x[tuple(slice(0, n * w) for n, w in zip(grid, window))]
    split = covered.reshape(tuple(size for n, w in zip(grid, window) for size in (n, w)))  # (a view)
    return [
        split[tuple(index for at in offset for index in (slice(None), at))]
        for offset in itertools.product(*(range(w) for w in window))
    ]


def _combined(views: list, largest: bool) -> np.ndarray:
    """The views' elementwise maxima (minima where `largest`), combined in place: NaN wins; zeros' signs as
    NumPy leaves them."""
    out = views[0].copy()
    combine = np.minimum if largest else np.maximum
    for view in views[1:]:
        combine(out, view, out=out)
    return out


def _tiled_extreme(views: list, largest: bool) -> np.ndarray:
    """The windows' maxima (their minima where `largest`) with the interpreter's `max` and `min` rules
    (XLA's): NaN wins, and -0 orders below +0, so a zero maximum is -0 only where no element is +0 (a zero
    minimum +0 only where none is -0). The general rule's `max` checked and fixed its zeros' signs at each
    window position: after ReLU, the pool's main cost."""
    out = _combined(views, largest)
    if out.dtype.kind == "f":
        zero = np.nonzero(out == 0)
        if len(zero[0]):
            held = np.stack([view[zero] for view in views])  # (the windows whose extreme is a zero)
            ordered_last = ((held == 0) & (np.signbit(held) == largest)).any(axis=0)  # (+0 for max, -0 for min)
            last, first = out.dtype.type(-0.0 if largest else 0.0), out.dtype.type(0.0 if largest else -0.0)
            out[zero] = np.where(ordered_last, last, first)
    return out


def _tiled_scatter(views: list, source: np.ndarray, shape: tuple, window: tuple, grid: tuple, largest: bool) -> Any:
    """`select_and_scatter_add` over tiling windows (`_tile_views` of the operand): each window's source value at
    the first of its maxima (`ge`, max pooling's selection; minima where `largest`, `le`), zeros elsewhere, as
    XLA adds the values into zeros; None where a window holds NaN (the general rule follows the comparisons). A
    finite `source` is multiplied by each position's mask (NumPy's `where` took five times as long), another is
    copied through the masks; then +0 is added (a -0 value added into a zero is +0)."""
    extreme = _combined(views, largest)  # (its zeros' signs do not matter: -0 == +0)
    if extreme.dtype.kind == "f" and np.isnan(extreme).any():
        return None
    out = np.zeros(shape, source.dtype)
    targets = _tile_views(out, window, grid)
    taken = np.zeros(grid, bool)
    first = np.empty(grid, bool)
    finite = source.dtype.kind != "f" or bool(np.isfinite(source).all())
    for view, target in zip(views, targets):
        np.equal(view, extreme, out=first)
        first &= ~taken
        taken |= first
        if finite:
            np.multiply(source, first, out=target)
        else:
            np.copyto(target, source, where=first)
    if source.dtype.kind == "f":  # (a -0 value added into a zero is +0; inf and NaN stay as they are)
        out += source.dtype.type(0)
    return out


def _window_rule(combine: str, fill: Callable[[np.dtype], Any]) -> Rule:
    """The rule of a window reduction: the window positions' views combined with the interpreter's own
    `combine` rule, from `fill(dtype)` (the reduction's identity, in the padding too)."""

    def reduce_window(
        x: Any, *, window_dimensions: tuple, window_strides: tuple, padding: tuple, **params: Any
    ) -> np.ndarray:
        x = np.asarray(x)
        identity = fill(x.dtype)
        dilation = tuple(params.get("window_dilation") or (1,) * x.ndim)
        padding = tuple(tuple(int(p) for p in pair) for pair in padding)
        grid = _grid(x.shape, window_dimensions, window_strides, padding, dilation)
        tiling = _tiling(x.shape, window_dimensions, window_strides, padding, dilation)
        if combine in ("max", "min") and tiling and math.prod(grid) and x.dtype.kind in "fiu":
            return _tiled_extreme(_tile_views(x, window_dimensions, grid), combine == "min")
        padded = _padded(x, padding, identity)
        out = np.full(grid, identity, x.dtype)
        if math.prod(grid):
            rule = RULES[combine]
            for offset in itertools.product(*(range(w) for w in window_dimensions)):
                out = np.asarray(rule(out, np.asarray(_view(padded, offset, grid, window_strides, dilation))))
        return out

    return reduce_window


for _name, _combine, _fill in (
    ("reduce_window_max", "max", lambda dtype: _identity(dtype, largest=False)),
    ("reduce_window_min", "min", lambda dtype: _identity(dtype, largest=True)),
    ("reduce_window_sum", "add", lambda dtype: dtype.type(0)),
):
    _rule(_name, supported=_plain_windows)(_window_rule(_combine, _fill))


_SELECTS = {"ge": (np.greater_equal, False), "le": (np.less_equal, True)}
"""`select_and_scatter_add`'s selections JAX emits (max and min pooling's gradients): the comparison, and which
end of the dtype's range the padding holds (XLA's padded operand takes part in the selection)."""


def _select_supported(params: dict) -> bool:
    return str(params["select_prim"]) in _SELECTS and all(lo >= 0 and hi >= 0 for lo, hi in params["padding"])


@_rule("select_and_scatter_add", supported=_select_supported)
def select_and_scatter_add(
    source: Any,
    operand: Any,
    *,
    select_prim: Any,
    window_dimensions: tuple,
    window_strides: tuple,
    padding: tuple,
    **_: Any,
) -> Any:
    source, operand = np.asarray(source), np.asarray(operand)
    keeps, largest = _SELECTS[str(select_prim)]
    padding = tuple(tuple(int(p) for p in pair) for pair in padding)
    dilation = (1,) * operand.ndim
    grid = _grid(operand.shape, window_dimensions, window_strides, padding, dilation)
    if _tiling(operand.shape, window_dimensions, window_strides, padding, dilation) and math.prod(grid):
        if operand.dtype.kind in "fiu":
            views = _tile_views(operand, window_dimensions, grid)
            out = _tiled_scatter(views, source, operand.shape, window_dimensions, grid, largest)
            if out is not None:
                return out
    padded = _padded(operand, padding, _identity(operand.dtype, largest))
    offsets = list(itertools.product(*(range(w) for w in window_dimensions)))
    best = _view(padded, offsets[0], grid, window_strides, dilation)  # (a window holds a position at least)
    chosen = np.zeros(grid, np.intp)  # the window position kept so far
    for index, offset in enumerate(offsets[1:], 1):
        value = _view(padded, offset, grid, window_strides, dilation)
        with np.errstate(invalid="ignore"):
            switch = ~keeps(best, value)
        best = np.where(switch, value, best)
        chosen = np.where(switch, index, chosen)
    out = np.zeros(padded.shape, source.dtype)
    # an element several windows chose gets their values in the order of the windows' output positions, as
    # XLA's loop adds them: the window positions in reverse
    for index in reversed(range(len(offsets))):
        target = _view(out, offsets[index], grid, window_strides, dilation)
        target += np.where(chosen == index, source, source.dtype.type(0))
    return out[tuple(slice(lo, lo + size) for (lo, _hi), size in zip(padding, operand.shape))]
