"""NumPy rules for JAX's gathers and scatters (and BCOO densifying), for the host interpreter.

They follow the primitives' dimension numbers and modes as XLA's CPU backend does (`interpret_rules`
describes the rules' contract). The general rules build an index array per operand dimension
(`_window_indices`); the pick of one element per row that `jnp.take_along_axis` makes of a matrix (a sparse
softmax cross-entropy's labels, and its gradient's scatter-add) takes a shorter path (`_row_picks`), 15 us
against 2-5 us a call for a batch of 64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeshim._src.interpret_rules import RULES, SUPPORTED, Rule, _rule, _signed_zeros, _winning_zeros


def _mode(params: dict) -> str:
    return str(getattr(params.get("mode"), "name", params.get("mode")))


def _along(values: Any, position: int, rank: int) -> Any:
    """`values` (1-D) shaped to broadcast along axis `position` of a rank-`rank` index array."""
    shape = [1] * rank
    shape[position] = values.shape[0]
    return values.reshape(shape)


def _window_indices(
    operand_shape: tuple,
    starts: Any,
    start_dims: tuple,
    operand_batch: tuple,
    indices_batch: tuple,
    window: dict[int, int],
    clip_sizes: dict[int, int],
    clip: bool,
) -> tuple[list, Any]:
    """Per operand dimension, an index array over (batch..., window...): start plus window offset.

    `starts` has shape (batch..., K); `start_dims[k]` is the operand dimension component `k` starts;
    `window` maps each windowed operand dimension to its size, in window order; `clip_sizes` the
    sizes that bound each start. Returns the index arrays and, per batch position, whether every
    start lies within bounds (before clamping).
    """
    batch_rank = starts.ndim - 1
    rank = batch_rank + len(window)
    in_bounds = np.ones(starts.shape[:-1], dtype=bool)
    window_position = {dim: batch_rank + k for k, dim in enumerate(window)}
    index = []
    for dim, extent in enumerate(operand_shape):
        if dim in start_dims:
            start = _int64(starts[..., start_dims.index(dim)])
            upper = extent - clip_sizes.get(dim, 1)
            in_bounds &= (start >= 0) & (start <= upper)
            if clip:
                start = np.clip(start, 0, max(upper, 0))
            part = start.reshape(start.shape + (1,) * len(window))
        elif dim in operand_batch:
            batch_axis = indices_batch[operand_batch.index(dim)]
            part = _along(np.arange(starts.shape[batch_axis]), batch_axis, rank)
        else:
            part = np.zeros((1,) * rank, dtype=np.int64)
        if dim in window:
            part = part + _along(np.arange(window[dim]), window_position[dim], rank)
        index.append(part)
    return index, in_bounds


def _int64(starts: Any) -> Any:
    """Start indices as int64 (past int64's range a uint64 is out of bounds anyway)."""
    if starts.dtype == np.uint64:
        starts = np.minimum(starts, np.uint64(np.iinfo(np.int64).max))
    return starts.astype(np.int64)


def _dropped_filled(gathered: Any, in_bounds: Any, dtype: np.dtype, params: dict) -> Any:
    """A `FILL_OR_DROP` gather's values, the fill value where a start lies out of bounds."""
    return np.where(in_bounds, gathered, np.array(_fill_value(dtype, params.get("fill_value"))))


def _fill_value(dtype: np.dtype, fill: Any) -> Any:
    if fill is not None:
        return fill
    if dtype.kind in "fc":
        return np.nan
    if dtype == np.bool_:
        return True
    return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max


def _gather_supported(params: dict) -> bool:
    return _mode(params) in ("CLIP", "FILL_OR_DROP", "PROMISE_IN_BOUNDS")


def _row_picks(operand: Any, indices: Any, batch: tuple, mapped: tuple, dropped: tuple) -> tuple | None:
    """`(rows, columns, in_bounds)` where a gather or scatter picks one element per row of a matrix, at the
    columns `indices[..., 0]` (`jnp.take_along_axis(matrix, columns, 1)`); None for any other kind.

    `batch` pairs the operand's and the indices' batching dimensions, `mapped` is the operand dimensions the
    indices start, `dropped` the collapsed (gather) or inserted (scatter) ones. The columns are int64 (past
    int64's range a uint64 is out of bounds anyway), not clamped; `in_bounds` says which lie in the row.
    """
    if not (
        batch == ((0,), (0,))
        and mapped == (1,)
        and dropped == (1,)
        and operand.ndim == 2
        and operand.shape[1] > 0
        and indices.ndim == 3
        and indices.shape[2] == 1
        and indices.shape[0] == operand.shape[0]
    ):
        return None
    columns = _int64(indices[..., 0])
    in_bounds = (columns >= 0) & (columns < operand.shape[1])
    return np.arange(operand.shape[0])[:, None], columns, in_bounds


@_rule("gather", supported=_gather_supported)
def _gather(operand: Any, indices: Any, *, dimension_numbers: Any, slice_sizes: tuple, **params: Any) -> Any:
    numbers = dimension_numbers
    if tuple(slice_sizes) == (1, 1) and not numbers.offset_dims:
        batch = (tuple(numbers.operand_batching_dims), tuple(numbers.start_indices_batching_dims))
        picks = _row_picks(operand, indices, batch, tuple(numbers.start_index_map), tuple(numbers.collapsed_slice_dims))
        if picks is not None:
            rows, columns, in_bounds = picks
            picked = operand[rows, np.clip(columns, 0, operand.shape[1] - 1)]  # (a start is clamped, as XLA's)
            if _mode(params) != "FILL_OR_DROP":
                return picked
            return _dropped_filled(picked, in_bounds, operand.dtype, params)
    collapsed = tuple(numbers.collapsed_slice_dims)
    operand_batch = tuple(numbers.operand_batching_dims)
    window = {d: slice_sizes[d] for d in range(operand.ndim) if d not in collapsed and d not in operand_batch}
    sizes = dict(enumerate(slice_sizes))
    index, in_bounds = _window_indices(
        operand.shape,
        indices,
        tuple(numbers.start_index_map),
        operand_batch,
        tuple(numbers.start_indices_batching_dims),
        window,
        sizes,
        clip=True,
    )
    gathered = operand[tuple(index)]
    if _mode(params) == "FILL_OR_DROP":
        mask = in_bounds.reshape(in_bounds.shape + (1,) * len(window))
        gathered = _dropped_filled(gathered, mask, operand.dtype, params)
    batch_rank = indices.ndim - 1
    offset_dims = tuple(numbers.offset_dims)
    batch_axes = iter(range(batch_rank))
    window_axes = iter(range(batch_rank, batch_rank + len(window)))
    order = [next(window_axes) if out in offset_dims else next(batch_axes) for out in range(gathered.ndim)]
    return np.transpose(gathered, order)


_SCATTER_COMBINE = {
    "scatter-add": np.add,
    "scatter_add": np.add,
    "scatter-sub": np.subtract,
    "scatter_sub": np.subtract,
    "scatter-mul": np.multiply,
    "scatter_mul": np.multiply,
    "scatter-min": np.minimum,
    "scatter_min": np.minimum,
    "scatter-max": np.maximum,
    "scatter_max": np.maximum,
    "scatter": None,
}


def _scatter(name: str) -> Rule:
    combine = _SCATTER_COMBINE[name]

    def rule(operand: Any, indices: Any, updates: Any, *, dimension_numbers: Any, **params: Any) -> Any:
        numbers = dimension_numbers
        if not numbers.update_window_dims:
            batch = (tuple(numbers.operand_batching_dims), tuple(numbers.scatter_indices_batching_dims))
            mapped = tuple(numbers.scatter_dims_to_operand_dims)
            picks = _row_picks(operand, indices, batch, mapped, tuple(numbers.inserted_window_dims))
            if picks is not None:
                return _scatter_picks(combine, operand, updates, picks, clip=_mode(params) == "CLIP")
        window_dims = tuple(numbers.update_window_dims)
        inserted = tuple(numbers.inserted_window_dims)
        operand_batch = tuple(numbers.operand_batching_dims)
        windowed = [d for d in range(operand.ndim) if d not in inserted and d not in operand_batch]
        window = {dim: updates.shape[window_dims[k]] for k, dim in enumerate(windowed)}
        scatter_axes = [a for a in range(updates.ndim) if a not in window_dims]
        ordered = np.transpose(updates, [*scatter_axes, *window_dims])
        index, in_bounds = _window_indices(
            operand.shape,
            indices,
            tuple(numbers.scatter_dims_to_operand_dims),
            operand_batch,
            tuple(numbers.scatter_indices_batching_dims),
            window,
            window,
            clip=_mode(params) == "CLIP",
        )
        full_shape = ordered.shape
        keep = np.broadcast_to(in_bounds.reshape(in_bounds.shape + (1,) * len(window)), full_shape)
        if _mode(params) == "CLIP":
            keep = np.ones(full_shape, dtype=bool)
        flat_index = tuple(np.broadcast_to(part, full_shape)[keep] for part in index)
        return _combined(combine, operand, flat_index, ordered[keep])

    return rule


def _scatter_picks(combine: Any, operand: Any, updates: Any, picks: tuple, clip: bool) -> Any:
    """A scatter of one update per picked element (`_row_picks`): out-of-row columns clamped (`clip`) or
    dropped, as the general rule does."""
    rows, columns, in_bounds = picks
    rows = np.broadcast_to(rows, columns.shape)
    if clip:
        where: tuple = (rows, np.clip(columns, 0, operand.shape[1] - 1))
    else:
        where, updates = (rows[in_bounds], columns[in_bounds]), updates[in_bounds]
    return _combined(combine, operand, where, updates)


def _combined(combine: Any, operand: Any, where: tuple, updates: Any) -> Any:
    """A copy of `operand` with `updates` set (`combine` None) or combined at the positions `where`. A float
    scatter-min or -max gives its zeros XLA's sign, -0 ordering below +0 (NumPy's `at` keeps either zero)."""
    out = np.array(operand)
    if combine is None:
        out[where] = updates
        return out
    combine.at(out, where, updates)
    if (combine is np.minimum or combine is np.maximum) and out.dtype.kind == "f":
        zero = out == 0
        if zero.any():
            negative_wins = combine is np.minimum
            found = _winning_zeros(operand, negative_wins)  # (at each position, among its value and its updates)
            np.logical_or.at(found, where, _winning_zeros(updates, negative_wins))
            out = _signed_zeros(out, zero, found, negative_wins)
    return out


for _name in _SCATTER_COMBINE:
    RULES[_name] = _scatter(_name)
    SUPPORTED[_name] = _gather_supported
# a plain scatter carrying an update function (`x.at[i].apply(f)`) applies it: not interpreted
SUPPORTED["scatter"] = lambda params: _gather_supported(params) and params.get("update_jaxpr") is None


@_rule("bcoo_todense")
def _bcoo_todense(data: Any, indices: Any, *, spinfo: Any) -> Any:
    """A BCOO array made dense (Keras's JAX optimizers densify an embedding's sparse gradient): each stored
    value summed at its index, as JAX's `.at[].add`: negative indices count from the end, and indices out of
    range (BCOO's padding) are dropped."""
    shape = tuple(spinfo.shape)
    batch_rank, sparse_rank = indices.ndim - 2, indices.shape[-1]
    batch_shape = shape[:batch_rank]
    data = np.broadcast_to(data, batch_shape + data.shape[batch_rank:])
    if not sparse_rank:  # (only dense dimensions after the stored ones: their sum)
        return np.broadcast_to(data.sum(axis=batch_rank, dtype=data.dtype), shape).copy()
    indices = np.broadcast_to(indices, batch_shape + indices.shape[batch_rank:])
    where = [indices[..., axis] for axis in range(sparse_rank)]
    sizes = shape[batch_rank : batch_rank + sparse_rank]
    where = [np.where(index < 0, index + size, index) for index, size in zip(where, sizes)]
    keep = np.logical_and.reduce([(index >= 0) & (index < size) for index, size in zip(where, sizes)])
    batch_positions = np.indices(batch_shape + (indices.shape[batch_rank],), sparse=True)[:batch_rank]
    batch_where = [np.broadcast_to(position, keep.shape)[keep] for position in batch_positions]
    out = np.zeros(shape, data.dtype)
    np.add.at(out, (*batch_where, *(index[keep] for index in where)), data[keep])
    return out
