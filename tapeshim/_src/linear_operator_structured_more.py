"""The structured `tf.linalg` operators, part two: permutation, tridiagonal, zeros and block lower triangular.

As TF 2.21's (`tensorflow/python/ops/linalg/linear_operator_{permutation,tridiag,zeros,block_lower_triangular}
.py`): the same constructor arguments, hints and their checks, shapes, errors and derived operators (any
operator times a square zeros operator is a zeros operator). The circulant,
Toeplitz and Householder operators are in `linear_operator_structured.py`, the base class in
`linear_operator.py`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tapeshim as tf  # the public ops (used at call time only: tapeshim imports this module)
from tapeshim._src import dtypes
from tapeshim._src.dtypes import as_dtype
from tapeshim._src.linear_operator import (
    LinearOperator,
    adjoint_if,
    broadcast_batch,
    broadcast_shapes,
    conj_if_complex,
    keep,
    known,
    params,
    read,
)
from tapeshim._src.linear_operator_leaves import _static_int
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor

__all__ = [
    "LinearOperatorBlockLowerTriangular",
    "LinearOperatorPermutation",
    "LinearOperatorTridiag",
    "LinearOperatorZeros",
]


# -- permutation ----------------------------------------------------------------------------------------------
class LinearOperatorPermutation(LinearOperator):
    """A [batch] permutation operator, as `tf.linalg.LinearOperatorPermutation`: `(A x)[i] = x[perm[i]]`.

    Args:
      perm: an integer tensor of shape `[B1, ..., Bb, N]`, each row a permutation of `0, ..., N - 1`.
      dtype: the operator's dtype (default float32).
      is_non_singular: hint (must not be False).
      is_self_adjoint: hint.
      is_positive_definite: hint.
      is_square: hint (must not be False).
      name: the operator's name.

    Raises:
      TypeError: if `perm` is not integer.
      ValueError: for a scalar `perm`, or `is_non_singular`/`is_square` False.
    """

    def __init__(
        self,
        perm: Any,
        dtype: Any = dtypes.float32,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorPermutation",
    ) -> None:
        parameters = params(
            perm=perm,
            dtype=dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        self._perm = keep(perm)
        if not self._perm.dtype.is_integer:
            raise TypeError(f"Argument `perm` must be integer dtype. Received: {read(self._perm)}.")
        if self._perm.shape.rank is not None and self._perm.shape.rank < 1:
            raise ValueError(f"Argument `perm` must have at least 1 dimension. Received: {read(self._perm)}.")
        if is_non_singular is False:
            raise ValueError(
                "A Permutation operator is always non-singular. Expected argument `is_non_singular` to be True. "
                "Received: False."
            )
        if is_square is False:
            raise ValueError(
                "A Permutation operator is always square. Expected argument `is_square` to be True. Received: False."
            )
        super().__init__(
            as_dtype(dtype), None, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name, parameters
        )

    @property
    def perm(self) -> Any:
        """The permutation."""
        return self._perm

    def _shape(self) -> TensorShape:
        shape = TensorShape(self._perm.shape)
        return shape.concatenate(shape[-1:])

    def _to_dense(self) -> Tensor:
        return tf.one_hot(read(self._perm), known(self.domain_dimension), dtype=self.dtype)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return tf.matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return tf.matmul(self.to_dense(), rhs, adjoint_a=not adjoint, adjoint_b=adjoint_arg)

    def _determinant(self) -> Tensor:
        perm = read(self._perm)
        n = known(self.domain_dimension)
        later = tf.constant(np.triu(np.ones([n, n]), 1), tf.int32)
        inversions = tf.reduce_sum(
            tf.cast(tf.expand_dims(perm, -1) > tf.expand_dims(perm, -2), tf.int32) * later, axis=[-2, -1]
        )
        return tf.cast(1 - 2 * (inversions % 2), self.dtype)

    def _log_abs_determinant(self) -> Tensor:
        return tf.zeros(self.batch_shape.as_list(), self.dtype)

    def _cond(self) -> Tensor:
        return self._ones_like_batch()  # an orthogonal matrix

    def _diag_part(self) -> Tensor:
        n = known(self.domain_dimension)
        return tf.cast(tf.equal(read(self._perm), tf.range(n, dtype=self._perm.dtype)), self.dtype)


# -- tridiagonal ----------------------------------------------------------------------------------------------
def _pad_last(x: Tensor, before: int, after: int) -> Tensor:
    return tf.pad(x, [[0, 0]] * (known(x.shape.rank) - 1) + [[before, after]])


class LinearOperatorTridiag(LinearOperator):
    """A square [batch] tridiagonal operator, as `tf.linalg.LinearOperatorTridiag`.

    Args:
      diagonals: the three diagonals, in `diagonals_format`: "compact", a tensor of shape `[..., 3, N]` (the
        superdiagonal, its last entry ignored; the diagonal; the subdiagonal, its first entry ignored);
        "sequence", a list of those three `[..., N]` tensors; "matrix", a `[..., N, N]` tridiagonal matrix.
      diagonals_format: "compact" (default), "sequence" or "matrix".
      is_non_singular: hint (see `LinearOperator`).
      is_self_adjoint: hint.
      is_positive_definite: hint.
      is_square: hint.
      name: the operator's name.

    Raises:
      ValueError: for another `diagonals_format`.
    """

    def __init__(
        self,
        diagonals: Any,
        diagonals_format: str = "compact",
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorTridiag",
    ) -> None:
        parameters = params(
            diagonals=diagonals,
            diagonals_format=diagonals_format,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        if diagonals_format not in ("compact", "matrix", "sequence"):
            raise ValueError(
                "Argument `diagonals_format` must be one of compact, matrix, or sequence. Received : "
                f"{diagonals_format}."
            )
        self._diagonals_format = diagonals_format
        if diagonals_format == "sequence":
            self._diagonals: Any = [keep(d) for d in diagonals]
            dtype = self._diagonals[0].dtype
        else:
            self._diagonals = keep(diagonals)
            dtype = self._diagonals.dtype
        super().__init__(
            dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name, parameters
        )

    @property
    def diagonals(self) -> Any:
        """The diagonals, as given."""
        return self._diagonals

    @property
    def diagonals_format(self) -> str:
        """The format of `diagonals`: "compact", "sequence" or "matrix"."""
        return self._diagonals_format

    def _shape(self) -> TensorShape:
        if self._diagonals_format == "sequence":
            batch = broadcast_shapes(*(TensorShape(d.shape[:-1]) for d in self._diagonals))
            n = self._diagonals[1].shape[-1]
            return batch.concatenate([n, n])
        shape = TensorShape(self._diagonals.shape)
        if self._diagonals_format == "matrix":
            return shape
        return TensorShape(shape[:-2]).concatenate([shape[-1], shape[-1]])

    def _three(self) -> tuple[Tensor, Tensor, Tensor]:
        """The superdiagonal, diagonal and subdiagonal, each `[..., N]`, with the unused entries zero."""
        if self._diagonals_format == "matrix":
            matrix = read(self._diagonals)
            superdiag = _pad_last(tf.linalg.diag_part(matrix[..., :-1, 1:]), 0, 1)
            subdiag = _pad_last(tf.linalg.diag_part(matrix[..., 1:, :-1]), 1, 0)
            return superdiag, tf.linalg.diag_part(matrix), subdiag
        if self._diagonals_format == "sequence":
            superdiag, diag, subdiag = (read(d) for d in self._diagonals)
        else:
            diagonals = read(self._diagonals)
            superdiag, diag, subdiag = diagonals[..., 0, :], diagonals[..., 1, :], diagonals[..., 2, :]
        return _pad_last(superdiag[..., :-1], 0, 1), diag, _pad_last(subdiag[..., 1:], 1, 0)

    def _three_for(self, adjoint: bool) -> tuple[Tensor, Tensor, Tensor]:
        superdiag, diag, subdiag = self._three()
        if not adjoint:
            return superdiag, diag, subdiag
        return (
            conj_if_complex(_pad_last(subdiag[..., 1:], 0, 1)),
            conj_if_complex(diag),
            conj_if_complex(_pad_last(superdiag[..., :-1], 1, 0)),
        )

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        x = adjoint_if(x, adjoint_arg)
        superdiag, diag, subdiag = (tf.expand_dims(d, -1) for d in self._three_for(adjoint))
        zero_row = tf.zeros_like(x[..., :1, :])
        below = tf.concat([x[..., 1:, :], zero_row], axis=-2)  # x[i + 1]
        above = tf.concat([zero_row, x[..., :-1, :]], axis=-2)  # x[i - 1]
        return diag * x + superdiag * below + subdiag * above

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        rhs = adjoint_if(rhs, adjoint_arg)
        compact = tf.stack(list(self._three_for(adjoint)), axis=-2)  # [..., 3, N]
        compact, rhs = broadcast_batch([compact, rhs])
        return tf.linalg.tridiagonal_solve(compact, rhs, diagonals_format="compact")

    def _to_dense(self) -> Tensor:
        if self._diagonals_format == "matrix":
            return read(self._diagonals)
        superdiag, diag, subdiag = self._three()
        batch = self.batch_shape.as_list()
        n = known(self.domain_dimension)
        superdiag, diag, subdiag = (tf.broadcast_to(d, batch + [n]) for d in (superdiag, diag, subdiag))
        lead = [[0, 0]] * len(batch)
        upper = tf.pad(tf.linalg.diag(superdiag[..., :-1]), lead + [[0, 1], [1, 0]])
        lower = tf.pad(tf.linalg.diag(subdiag[..., 1:]), lead + [[1, 0], [0, 1]])
        return tf.linalg.diag(diag) + upper + lower

    def _diag_part(self) -> Tensor:
        diag = self._three()[1]
        return tf.broadcast_to(diag, self.batch_shape.as_list() + [known(self.domain_dimension)])


# -- zeros ----------------------------------------------------------------------------------------------------
class LinearOperatorZeros(LinearOperator):
    """The [batch] zero operator, as `tf.linalg.LinearOperatorZeros`.

    Args:
      num_rows: the number of rows `M` (a non-negative integer scalar).
      num_columns: the number of columns `N` (default: `num_rows`).
      batch_shape: the batch shape (a 1-D integer list or tensor), or None for no batch dimensions.
      dtype: the operator's dtype (default float32).
      is_non_singular: hint (must be False).
      is_self_adjoint: hint (must be True for a square operator).
      is_positive_definite: hint (must be False).
      is_square: hint (default True: then `num_columns` must equal `num_rows`).
      assert_proper_shapes: ignored (the shapes are checked statically).
      name: the operator's name.

    Raises:
      TypeError: if `num_rows`, `num_columns` or `batch_shape` is not integer.
      ValueError: for a contradicting hint, a negative or ill-shaped size, or `is_square` with
        `num_rows != num_columns`.
    """

    def __init__(
        self,
        num_rows: Any,
        num_columns: Any = None,
        batch_shape: Any = None,
        dtype: Any = None,
        is_non_singular: bool = False,
        is_self_adjoint: bool = True,
        is_positive_definite: bool = False,
        is_square: bool = True,
        assert_proper_shapes: bool = False,
        name: str = "LinearOperatorZeros",
    ) -> None:
        parameters = params(
            num_rows=num_rows,
            num_columns=num_columns,
            batch_shape=batch_shape,
            dtype=dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            assert_proper_shapes=assert_proper_shapes,
            name=name,
        )
        dtype = as_dtype(dtype or tf.float32)
        if is_non_singular:
            raise ValueError("A zero operator is always singular.")
        if is_positive_definite:
            raise ValueError("A zero operator is always not positive-definite.")
        if is_square and is_self_adjoint is False:
            raise ValueError("A zero operator is always self adjoint.")
        super().__init__(
            dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name, parameters
        )
        self._num_rows = int(_static_int(num_rows, "num_rows", 0))
        columns = num_rows if num_columns is None else num_columns
        self._num_columns = int(_static_int(columns, "num_columns", 0))
        self._batch = None if batch_shape is None else list(_static_int(batch_shape, "batch_shape", 1))
        if is_square and self._num_rows != self._num_columns:
            raise ValueError(
                f"LinearOperatorZeros initialized as is_square=True, but got num_rows({self._num_rows}) != "
                f"num_columns({self._num_columns})"
            )

    def _shape(self) -> TensorShape:
        return TensorShape((self._batch or []) + [self._num_rows, self._num_columns])

    def _zeros(self, *last: int) -> Tensor:
        return tf.zeros(self.batch_shape.as_list() + list(last), self.dtype)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        x = adjoint_if(x, adjoint_arg)
        rows = self._num_columns if adjoint else self._num_rows
        batch = broadcast_shapes(self.batch_shape, TensorShape(x.shape[:-2])).as_list()
        return tf.zeros(batch + [rows, known(x.shape[-1])], self.dtype)

    def _determinant(self) -> Tensor:
        return self._zeros()

    def _log_abs_determinant(self) -> Tensor:
        return tf.math.log(self._zeros())

    def _trace(self) -> Tensor:
        return self._zeros()

    def _diag_part(self) -> Tensor:
        return self._zeros(min(self._num_rows, self._num_columns))

    def _to_dense(self) -> Tensor:
        return self._zeros(self._num_rows, self._num_columns)

    def _add_to_tensor(self, x: Tensor) -> Tensor:
        return x + self._to_dense()

    def _zeros_product(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        """`left @ right` when either is a zeros operator: a zeros operator of the product's shape.

        Raises:
          ValueError: if either operator is not square (as TF).
        """
        if not (left.is_square and right.is_square):
            raise ValueError(
                "Matmul with non-square `LinearOperator`s or non-square `LinearOperatorZeros` not supported at this "
                "time."
            )
        batch = broadcast_shapes(left.batch_shape, right.batch_shape)
        rows, columns = known(left.range_dimension), known(right.domain_dimension)
        square = rows == columns
        return LinearOperatorZeros(
            rows,
            columns,
            batch_shape=batch.as_list() or None,
            dtype=self.dtype,
            is_self_adjoint=True if square else False,
            is_square=square,
        )

    def _linop_matmul(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        return self._zeros_product(left, right)


# -- block lower triangular -----------------------------------------------------------------------------------
def _concat_rows(parts: list[Tensor]) -> Tensor:
    return tf.concat(broadcast_batch(parts), axis=-2)


def _sum(terms: list[Tensor]) -> Tensor:
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


class LinearOperatorBlockLowerTriangular(LinearOperator):
    """A square block lower-triangular operator, as `tf.linalg.LinearOperatorBlockLowerTriangular`.

    `operators[i]` is row `i` of the blocks below and on the diagonal: `[L_i0, ..., L_ii]`; the diagonal
    blocks `L_ii` are square. `matmul` and `solve` take one dense tensor (TF also takes a list of per-block
    tensors; tapeshim does not); `solve` is by block forward (or, for the adjoint, backward) substitution.

    Args:
      operators: a non-empty list of rows of operators of one dtype, row `i` with `i + 1` blocks.
      is_non_singular: hint (True when every diagonal block is non-singular).
      is_self_adjoint: hint.
      is_positive_definite: hint.
      is_square: hint (must not be False).
      name: the operator's name.

    Raises:
      TypeError: if the blocks' dtypes differ.
      ValueError: for an empty list, a row with the wrong number of blocks, a diagonal block that is not
        square, blocks of incompatible dimensions, or a contradicting hint.
    """

    def __init__(
        self,
        operators: Any,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorBlockLowerTriangular",
    ) -> None:
        parameters = params(
            operators=operators,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        rows = [list(row) for row in operators]
        if not rows:
            raise ValueError(f"Argument `operators` must be a list of >=1 operators. Received: {rows}.")
        self._operators = rows
        self._check_blocks()
        if all(row[-1].is_non_singular for row in rows):
            if is_non_singular is False:
                raise ValueError(
                    "A blockwise lower-triangular operator with non-singular operators on the main diagonal is "
                    "always non-singular. Expected argument `is_non_singular` to be True. Received: False."
                )
            is_non_singular = True
        if is_square is False:
            raise ValueError(
                "`LinearOperatorBlockLowerTriangular` must be square. Expected argument `is_square` to be True. "
                "Received: False."
            )
        super().__init__(
            rows[0][0].dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name, parameters
        )

    def _check_blocks(self) -> None:
        rows = self._operators
        dtype = rows[0][0].dtype
        for i, row in enumerate(rows):
            if len(row) != i + 1:
                raise ValueError(
                    f"Argument `operators[{i}]` must contain `{i + 1}` blocks. Received: {len(row)} blocks."
                )
            if any(o.dtype != dtype for o in row):
                raise TypeError(
                    f"Expected all operators to have the same dtype.  Found {[o.dtype for o in row]} in row {i} and "
                    f"{dtype} in row 0."
                )
            if row[-1].is_square is not True:
                raise ValueError(
                    "Matrices on the diagonal (the final elements of each row-partition in the `operators` list) "
                    f"must be square. Expected argument `operators[{i}][-1].is_square` to be True. Received: "
                    f"{row[-1].is_square}."
                )
            for j, block in enumerate(row[:-1]):
                for what, other in (("domain_dimension", rows[j][j]), ("range_dimension", row[-1])):
                    mine, theirs = getattr(block, what), getattr(other, what)
                    if mine is not None and theirs is not None and mine != theirs:
                        raise ValueError(
                            f"Argument `operators[{i}][{j}].{what}` ({mine}) must be the same as the {what} of the "
                            f"diagonal block in its {'column' if what == 'domain_dimension' else 'row'} ({theirs})."
                        )

    @property
    def operators(self) -> list:
        """The rows of blocks, `operators[i] = [L_i0, ..., L_ii]`."""
        return self._operators

    def _diagonal_blocks(self) -> list:
        return [row[-1] for row in self._operators]

    def _sizes(self) -> list[int]:
        return [known(o.domain_dimension) for o in self._diagonal_blocks()]

    def _shape(self) -> TensorShape:
        batch = broadcast_shapes(*(o.batch_shape for row in self._operators for o in row))
        n = sum(self._sizes())
        return batch.concatenate([n, n])

    def _block(self, i: int, j: int) -> LinearOperator:
        return self._operators[i][j]

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        parts = tf.split(adjoint_if(x, adjoint_arg), self._sizes(), axis=-2)
        count = len(self._operators)
        if adjoint:  # block upper triangular: y_j = sum_{i >= j} L_ij^H x_i
            results = [
                _sum([self._block(i, j).matmul(parts[i], adjoint=True) for i in range(j, count)]) for j in range(count)
            ]
        else:
            results = [_sum([self._block(i, j).matmul(parts[j]) for j in range(i + 1)]) for i in range(count)]
        return _concat_rows(results)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        rhs = adjoint_if(rhs, adjoint_arg)
        if self.batch_shape.rank:  # every block solves with the full batch
            rhs = broadcast_batch([rhs, tf.zeros(self.batch_shape.as_list() + [1, 1], self.dtype)])[0]
        parts = tf.split(rhs, self._sizes(), axis=-2)
        count = len(self._operators)
        solution: list[Any] = [None] * count
        order = range(count - 1, -1, -1) if adjoint else range(count)
        for i in order:
            known_terms = (
                [self._block(k, i).matmul(solution[k], adjoint=True) for k in range(i + 1, count)]
                if adjoint
                else [self._block(i, k).matmul(solution[k]) for k in range(i)]
            )
            residual = parts[i] - _sum(known_terms) if known_terms else parts[i]
            solution[i] = self._block(i, i).solve(residual, adjoint=adjoint)
        return _concat_rows(solution)

    def _determinant(self) -> Tensor:
        blocks = self._diagonal_blocks()
        result = blocks[0].determinant()
        for block in blocks[1:]:
            result *= block.determinant()
        return result

    def _log_abs_determinant(self) -> Tensor:
        return _sum([block.log_abs_determinant() for block in self._diagonal_blocks()])

    def _trace(self) -> Tensor:
        return _sum([block.trace() for block in self._diagonal_blocks()])

    def _diag_part(self) -> Tensor:
        parts = [tf.expand_dims(block.diag_part(), -1) for block in self._diagonal_blocks()]
        return tf.squeeze(_concat_rows(parts), -1)

    def _eigvals(self) -> Tensor:
        parts = [tf.expand_dims(block.eigvals(), -1) for block in self._diagonal_blocks()]
        return tf.squeeze(_concat_rows(parts), -1)

    def _to_dense(self) -> Tensor:
        sizes = self._sizes()
        batch = self.batch_shape.as_list()
        rows = []
        for i, row in enumerate(self._operators):
            blocks = [tf.broadcast_to(o.to_dense(), batch + [sizes[i], sizes[j]]) for j, o in enumerate(row)]
            after = sum(sizes[i + 1 :])
            if after:
                blocks.append(tf.zeros(batch + [sizes[i], after], self.dtype))
            rows.append(tf.concat(blocks, axis=-1))
        return tf.concat(rows, axis=-2)

    def _linop_inverse(self) -> LinearOperator:
        """The inverse, block lower triangular: `X_ii = L_ii^-1`, `X_ij = -L_ii^-1 sum_k L_ik X_kj` (dense)."""
        from tapeshim._src.linear_operator_leaves import LinearOperatorFullMatrix

        count = len(self._operators)
        inverse: list[list[LinearOperator]] = [[] for _ in range(count)]
        for i in range(count):
            for j in range(i):
                terms = [self._block(i, k).matmul(inverse[k][j].to_dense()) for k in range(j, i)]
                inverse[i].append(LinearOperatorFullMatrix(-self._block(i, i).solve(_sum(terms))))
            inverse[i].append(self._block(i, i).inverse())
        return LinearOperatorBlockLowerTriangular(
            inverse,
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
        )
