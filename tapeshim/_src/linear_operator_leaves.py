"""The `tf.linalg` operators given by tensors: full matrix, diagonal, lower triangular, identity, scaled identity.

As TF 2.21's (`tensorflow/python/ops/linalg/linear_operator_{full_matrix,diag,lower_triangular,identity}.py`):
the same hints and their checks, shapes, errors and simplified products (`diag @ diag` is a diagonal
operator). The base class is in `linear_operator.py`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tapeshim as tf  # the public ops (used at call time only: tapeshim imports this module)
from tapeshim._src.dtypes import as_dtype
from tapeshim._src.linear_operator import (
    LinearOperator,
    adjoint_if,
    conj_if_complex,
    keep,
    non_singular_hint,
    params,
    positive_definite_hint,
    read,
    self_adjoint_hint,
)
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor

__all__ = [
    "LinearOperatorDiag",
    "LinearOperatorFullMatrix",
    "LinearOperatorIdentity",
    "LinearOperatorLowerTriangular",
    "LinearOperatorScaledIdentity",
]


class LinearOperatorFullMatrix(LinearOperator):
    """An operator given by a dense [batch] matrix, as `tf.linalg.LinearOperatorFullMatrix`.

    Args:
      matrix: a tensor (or variable) of shape `[B1, ..., Bb, M, N]`, float16/32/64 or complex64/128.
      is_non_singular: hint (see `LinearOperator`).
      is_self_adjoint: hint.
      is_positive_definite: hint.
      is_square: hint.
      name: the operator's name.

    Raises:
      TypeError: for another dtype.
      ValueError: if `matrix` has rank below 2, or the hints contradict each other.
    """

    def __init__(
        self,
        matrix: Any,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorFullMatrix",
    ) -> None:
        parameters = params(
            matrix=matrix,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        self._matrix = keep(matrix)
        allowed = [tf.float16, tf.float32, tf.float64, tf.complex64, tf.complex128]
        if self._matrix.dtype not in allowed:
            raise TypeError(f"Argument `matrix` must have dtype in {allowed}. Received: {self._matrix.dtype}.")
        if self._matrix.shape.rank is not None and self._matrix.shape.rank < 2:
            raise ValueError(f"Argument `matrix` must have at least 2 dimensions. Received: {self._matrix}.")
        super().__init__(
            self._matrix.dtype,
            None,
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            is_square,
            name,
            parameters,
        )

    @property
    def matrix(self) -> Any:
        """The matrix defining this operator."""
        return self._matrix

    def _shape(self) -> TensorShape:
        return TensorShape(self._matrix.shape)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return tf.matmul(read(self._matrix), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _to_dense(self) -> Tensor:
        return read(self._matrix)


class LinearOperatorDiag(LinearOperator):
    """A square diagonal [batch] operator, as `tf.linalg.LinearOperatorDiag`.

    Args:
      diag: a tensor (or variable) of shape `[B1, ..., Bb, N]`: the diagonal.
      is_non_singular: hint (see `LinearOperator`).
      is_self_adjoint: hint (True for a real `diag`).
      is_positive_definite: hint.
      is_square: hint (always True).
      name: the operator's name.

    Raises:
      ValueError: if `diag` is a scalar, a real `diag` is hinted not self-adjoint, or `is_square` is False.
    """

    def __init__(
        self,
        diag: Any,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorDiag",
    ) -> None:
        parameters = params(
            diag=diag,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        self._diag = keep(diag)
        if self._diag.shape.rank is not None and self._diag.shape.rank < 1:
            raise ValueError(f"Argument diag must have at least 1 dimension.  Found: {self._diag}")
        if not self._diag.dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError("A real diagonal operator is always self adjoint.")
            is_self_adjoint = True
        if is_square is False:
            raise ValueError("Only square diagonal operators currently supported.")
        super().__init__(
            self._diag.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name, parameters
        )

    @property
    def diag(self) -> Any:
        """The diagonal."""
        return self._diag

    def _shape(self) -> TensorShape:
        shape = TensorShape(self._diag.shape)
        return shape.concatenate(shape[-1:])

    def _hints_with(self, right: LinearOperator) -> dict[str, Any]:
        return dict(
            is_non_singular=non_singular_hint(self, right),
            is_self_adjoint=self_adjoint_hint(self, right),
            is_positive_definite=positive_definite_hint(self, right),
            is_square=True,
        )

    def _linop_matmul(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        assert isinstance(left, LinearOperatorDiag)
        hints = left._hints_with(right)
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(read(left.diag) * read(right.diag), **hints)
        if isinstance(right, LinearOperatorScaledIdentity):
            return LinearOperatorDiag(read(left.diag) * read(right.multiplier), **hints)
        if isinstance(right, LinearOperatorLowerTriangular):
            hints["is_positive_definite"] = None
            return LinearOperatorLowerTriangular(read(left.diag)[..., None] * right.to_dense(), **hints)
        return super()._linop_matmul(left, right)

    def _linop_solve(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        assert isinstance(left, LinearOperatorDiag)
        hints = left._hints_with(right)
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(read(right.diag) / read(left.diag), **hints)
        if isinstance(right, LinearOperatorScaledIdentity):
            return LinearOperatorDiag(read(right.multiplier) / read(left.diag), **hints)
        if isinstance(right, LinearOperatorLowerTriangular):
            hints["is_positive_definite"] = None
            return LinearOperatorLowerTriangular(right.to_dense() / read(left.diag)[..., None], **hints)
        return super()._linop_solve(left, right)

    def _linop_adjoint(self) -> LinearOperator:
        return LinearOperatorDiag(
            conj_if_complex(read(self._diag)),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
        )

    def _linop_inverse(self) -> LinearOperator:
        return LinearOperatorDiag(
            1.0 / read(self._diag),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
        )

    def _linop_cholesky(self) -> LinearOperator:
        return LinearOperatorDiag(
            tf.sqrt(read(self._diag)), is_non_singular=True, is_self_adjoint=True, is_positive_definite=True
        )

    def _term(self, adjoint: bool) -> Tensor:
        diag = read(self._diag)
        return tf.expand_dims(tf.math.conj(diag) if adjoint else diag, -1)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._term(adjoint) * adjoint_if(x, adjoint_arg)

    def _matvec(self, x: Tensor, adjoint: bool = False) -> Tensor:
        diag = read(self._diag)
        return (tf.math.conj(diag) if adjoint else diag) * x

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return adjoint_if(rhs, adjoint_arg) / self._term(adjoint)

    def _determinant(self) -> Tensor:
        return tf.reduce_prod(read(self._diag), axis=[-1])

    def _log_abs_determinant(self) -> Tensor:
        log_det = tf.reduce_sum(tf.math.log(tf.abs(read(self._diag))), axis=[-1])
        return tf.cast(log_det, self.dtype) if self.dtype.is_complex else log_det

    def _to_dense(self) -> Tensor:
        return tf.linalg.diag(read(self._diag))

    def _diag_part(self) -> Tensor:
        return read(self._diag)

    def _add_to_tensor(self, x: Tensor) -> Tensor:
        return tf.linalg.set_diag(x, read(self._diag) + tf.linalg.diag_part(x))

    def _eigvals(self) -> Tensor:
        return read(self._diag)

    def _cond(self) -> Tensor:
        magnitude = tf.abs(read(self._diag))
        return tf.reduce_max(magnitude, axis=-1) / tf.reduce_min(magnitude, axis=-1)


class LinearOperatorLowerTriangular(LinearOperator):
    """A square lower-triangular [batch] operator, as `tf.linalg.LinearOperatorLowerTriangular`.

    Only the lower triangle (with the diagonal) of `tril` is used.

    Args:
      tril: a tensor (or variable) of shape `[B1, ..., Bb, N, N]`.
      is_non_singular: hint (see `LinearOperator`).
      is_self_adjoint: hint.
      is_positive_definite: hint.
      is_square: hint (always True).
      name: the operator's name.

    Raises:
      ValueError: if `is_square` is False or `tril` has rank below 2.
    """

    def __init__(
        self,
        tril: Any,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorLowerTriangular",
    ) -> None:
        parameters = params(
            tril=tril,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        if is_square is False:
            raise ValueError("Only square lower triangular operators supported at this time.")
        self._tril = keep(tril)
        if self._tril.shape.rank is not None and self._tril.shape.rank < 2:
            raise ValueError(f"Argument tril must have at least 2 dimensions.  Found: {self._tril}")
        super().__init__(
            self._tril.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name, parameters
        )

    @property
    def tril(self) -> Any:
        """The lower-triangular matrix defining this operator (as given)."""
        return self._tril

    def _lower(self) -> Tensor:
        return tf.linalg.band_part(read(self._tril), -1, 0)

    def _diagonal(self) -> Tensor:
        return tf.linalg.diag_part(read(self._tril))

    def _shape(self) -> TensorShape:
        return TensorShape(self._tril.shape)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return tf.matmul(self._lower(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _linop_matmul(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorLowerTriangular(
                left.to_dense() * read(right.diag),
                is_non_singular=non_singular_hint(right, left),
                is_self_adjoint=self_adjoint_hint(right, left),
                is_positive_definite=None,
                is_square=True,
            )
        return super()._linop_matmul(left, right)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return tf.linalg.triangular_solve(self._lower(), adjoint_if(rhs, adjoint_arg), lower=True, adjoint=adjoint)

    def _determinant(self) -> Tensor:
        return tf.reduce_prod(self._diagonal(), axis=[-1])

    def _log_abs_determinant(self) -> Tensor:
        return tf.reduce_sum(tf.math.log(tf.abs(self._diagonal())), axis=[-1])

    def _to_dense(self) -> Tensor:
        return self._lower()

    def _eigvals(self) -> Tensor:
        return self._diagonal()


def _static_int(value: Any, what: str, rank: int) -> Any:
    """The static value of `num_rows` (rank 0) or `batch_shape` (rank 1), checked as TF checks it."""
    if isinstance(value, TensorShape):
        value = value.as_list()
    tensor = tf.convert_to_tensor(value, dtype=tf.int32 if isinstance(value, (list, tuple)) and not value else None)
    if not tensor.dtype.is_integer:
        raise TypeError(f"Argument {what} must be integer type.  Found: {tensor}")
    static = tf.get_static_value(tensor)
    if static is None:
        raise ValueError(f"Argument {what} must be known statically in tapeshim.  Found: {tensor}")
    static = np.asarray(static)
    if static.ndim != rank:
        raise ValueError(f"Argument {what} must be a {rank}-D Tensor.  Found: {static}")
    if np.any(static < 0):
        raise ValueError(f"Argument {what} must be non-negative.  Found: {static}")
    return static.tolist()


class LinearOperatorIdentity(LinearOperator):
    """The [batch] identity operator, as `tf.linalg.LinearOperatorIdentity`.

    Args:
      num_rows: the number of rows `N` (a non-negative integer scalar).
      batch_shape: the batch shape (a 1-D integer list or tensor), or None for no batch dimensions.
      dtype: the operator's dtype (default float32).
      is_non_singular: hint (must be True).
      is_self_adjoint: hint (must be True).
      is_positive_definite: hint (must be True).
      is_square: hint (must be True).
      assert_proper_shapes: ignored (the shapes are checked statically).
      name: the operator's name.

    Raises:
      TypeError: if `num_rows` or `batch_shape` is not integer.
      ValueError: if a hint is not True, or `num_rows`/`batch_shape` has the wrong rank or a negative entry.
    """

    def __init__(
        self,
        num_rows: Any,
        batch_shape: Any = None,
        dtype: Any = None,
        is_non_singular: bool = True,
        is_self_adjoint: bool = True,
        is_positive_definite: bool = True,
        is_square: bool = True,
        assert_proper_shapes: bool = False,
        name: str = "LinearOperatorIdentity",
    ) -> None:
        parameters: dict[str, Any] = dict(num_rows=num_rows, batch_shape=batch_shape, dtype=dtype, name=name)
        dtype = as_dtype(dtype or tf.float32)
        if not is_self_adjoint:
            raise ValueError("An identity operator is always self adjoint.")
        if not is_non_singular:
            raise ValueError("An identity operator is always non-singular.")
        if not is_positive_definite:
            raise ValueError("An identity operator is always positive-definite.")
        if not is_square:
            raise ValueError("An identity operator is always square.")
        super().__init__(
            dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name, parameters
        )
        self._num_rows = int(_static_int(num_rows, "num_rows", 0))
        self._batch = None if batch_shape is None else list(_static_int(batch_shape, "batch_shape", 1))

    def _shape(self) -> TensorShape:
        return TensorShape((self._batch or []) + [self._num_rows, self._num_rows])

    def _ones_diag(self) -> Tensor:
        return tf.ones(self.batch_shape.as_list() + [self._num_rows], self.dtype)

    def _broadcast(self, x: Tensor) -> Tensor:
        if self._batch is None:
            return x
        special = TensorShape(self._batch + [1, 1])
        if tf.broadcast_static_shape(TensorShape(x.shape), special) == TensorShape(x.shape):
            return x
        return x + tf.zeros(special.as_list(), self.dtype)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._broadcast(adjoint_if(x, adjoint_arg))

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._matmul(rhs, adjoint_arg=adjoint_arg)

    def _linop_adjoint(self) -> LinearOperator:
        return self

    def _linop_inverse(self) -> LinearOperator:
        return self

    def _linop_cholesky(self) -> LinearOperator:
        return LinearOperatorIdentity(self._num_rows, batch_shape=self._batch, dtype=self.dtype)

    def _linop_matmul(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        return right

    def _linop_solve(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        return right

    def _determinant(self) -> Tensor:
        return self._ones_like_batch()

    def _log_abs_determinant(self) -> Tensor:
        return tf.zeros(self.batch_shape.as_list(), self.dtype)

    def _trace(self) -> Tensor:
        return self._num_rows * self._ones_like_batch()

    def _to_dense(self) -> Tensor:
        return tf.eye(self._num_rows, batch_shape=self._batch, dtype=self.dtype)

    def _diag_part(self) -> Tensor:
        return self._ones_diag()

    def add_to_tensor(self, mat: Any, name: str = "add_to_tensor") -> Tensor:
        """`I + mat` (adds one to the diagonal of `mat`)."""
        mat = tf.convert_to_tensor(mat)
        return tf.linalg.set_diag(mat, 1 + tf.linalg.diag_part(mat))

    def _eigvals(self) -> Tensor:
        return self._ones_diag()

    def _cond(self) -> Tensor:
        return self._ones_like_batch()


class LinearOperatorScaledIdentity(LinearOperator):
    """`c I`, a [batch] scaled identity operator, as `tf.linalg.LinearOperatorScaledIdentity`.

    Args:
      num_rows: the number of rows `N` (a non-negative integer scalar).
      multiplier: a tensor (or variable) of shape `[B1, ..., Bb]`: the scale `c` (its shape is the batch shape).
      is_non_singular: hint (see `LinearOperator`).
      is_self_adjoint: hint (True for a real multiplier).
      is_positive_definite: hint.
      is_square: hint (must be True).
      assert_proper_shapes: ignored (the shapes are checked statically).
      name: the operator's name.

    Raises:
      ValueError: if `is_square` is not True, a real multiplier is hinted not self-adjoint, or `num_rows` is
        not a non-negative scalar.
      TypeError: if `num_rows` is not integer.
    """

    def __init__(
        self,
        num_rows: Any,
        multiplier: Any,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool = True,
        assert_proper_shapes: bool = False,
        name: str = "LinearOperatorScaledIdentity",
    ) -> None:
        parameters = params(
            num_rows=num_rows,
            multiplier=multiplier,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            name=name,
        )
        self._multiplier = keep(multiplier)
        if not self._multiplier.dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError("A real diagonal operator is always self adjoint.")
            is_self_adjoint = True
        if not is_square:
            raise ValueError("A ScaledIdentity operator is always square.")
        super().__init__(
            self._multiplier.dtype,
            None,
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            is_square,
            name,
            parameters,
        )
        self._num_rows = int(_static_int(num_rows, "num_rows", 0))

    @property
    def multiplier(self) -> Any:
        """The scale `c`, of shape `[B1, ..., Bb]`."""
        return self._multiplier

    def _shape(self) -> TensorShape:
        return TensorShape(self._multiplier.shape).concatenate([self._num_rows, self._num_rows])

    def _ones_diag(self) -> Tensor:
        return tf.ones(self.batch_shape.as_list() + [self._num_rows], self.dtype)

    def _matrix(self, conjugate: bool = False) -> Tensor:
        m = tf.expand_dims(tf.expand_dims(read(self._multiplier), -1), -1)
        return tf.math.conj(m) if conjugate else m

    def _scaled(self, multiplier: Tensor, **hints: Any) -> LinearOperatorScaledIdentity:
        return LinearOperatorScaledIdentity(self._num_rows, multiplier, is_square=True, **hints)

    def _linop_adjoint(self) -> LinearOperator:
        return self._scaled(
            conj_if_complex(read(self._multiplier)),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
        )

    def _linop_cholesky(self) -> LinearOperator:
        return self._scaled(
            tf.sqrt(read(self._multiplier)), is_non_singular=True, is_self_adjoint=True, is_positive_definite=True
        )

    def _linop_inverse(self) -> LinearOperator:
        return self._scaled(
            1.0 / read(self._multiplier),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=True,
            is_positive_definite=self.is_positive_definite,
        )

    def _hints_with(self, right: LinearOperator) -> dict[str, Any]:
        return dict(
            is_non_singular=non_singular_hint(self, right),
            is_self_adjoint=self_adjoint_hint(self, right),
            is_positive_definite=positive_definite_hint(self, right),
        )

    def _linop_matmul(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        assert isinstance(left, LinearOperatorScaledIdentity)
        hints = left._hints_with(right)
        if isinstance(right, LinearOperatorScaledIdentity):
            return left._scaled(read(left.multiplier) * read(right.multiplier), **hints)
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(read(right.diag) * read(left.multiplier), is_square=True, **hints)
        return super()._linop_matmul(left, right)

    def _linop_solve(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        assert isinstance(left, LinearOperatorScaledIdentity)
        hints = left._hints_with(right)
        if isinstance(right, LinearOperatorScaledIdentity):
            return left._scaled(read(right.multiplier) / read(left.multiplier), **hints)
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(read(right.diag) / read(left.multiplier), is_square=True, **hints)
        return super()._linop_solve(left, right)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return adjoint_if(x, adjoint_arg) * self._matrix(conjugate=adjoint)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return adjoint_if(rhs, adjoint_arg) / self._matrix(conjugate=adjoint)

    def _determinant(self) -> Tensor:
        return read(self._multiplier) ** tf.cast(self._num_rows, self.dtype)

    def _log_abs_determinant(self) -> Tensor:
        real = self.dtype.real_dtype
        return tf.cast(self._num_rows, real) * tf.math.log(tf.abs(read(self._multiplier)))

    def _trace(self) -> Tensor:
        return read(self._multiplier) * self._num_rows * self._ones_like_batch()

    def _to_dense(self) -> Tensor:
        return self._matrix() * tf.eye(self._num_rows, dtype=self.dtype)

    def _diag_part(self) -> Tensor:
        return self._ones_diag() * read(self._multiplier)[..., None]

    def add_to_tensor(self, mat: Any, name: str = "add_to_tensor") -> Tensor:
        """`c I + mat` (adds the multiplier to the diagonal of `mat`)."""
        multiplier = tf.expand_dims(read(self._multiplier), -1)
        mat = tf.convert_to_tensor(mat)
        return tf.linalg.set_diag(mat, tf.linalg.diag_part(mat) + multiplier)

    def _eigvals(self) -> Tensor:
        return self._diag_part()

    def _cond(self) -> Tensor:
        return self._ones_like_batch()
