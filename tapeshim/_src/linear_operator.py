"""`tf.linalg.LinearOperator`, the base class of tapeshim's linear operators, built from its ops (as TF 2.21's).

An operator holds its parameters (tensors, or variables read at each use, so a `GradientTape` sees the
reads) and computes with the ordinary op table, so it works eagerly, under a tape and inside
`tapeshim.function`. The hints (`is_non_singular`, ...) and their checks, the shape rules and the errors
follow TF's `tensorflow/python/ops/linalg/linear_operator*.py`. The operators given by tensors (full matrix,
diagonal, lower triangular, identity, scaled identity) are in `linear_operator_leaves.py`; the operators made
of other operators (composition, inversion, adjoint, block diagonal, Kronecker) in `linear_operator_more.py`;
the low-rank update in `linear_operator_low_rank.py`.
"""

from __future__ import annotations

import abc
from typing import Any

import tapeshim as tf  # the public ops (used at call time only: tapeshim imports this module)
from tapeshim._src.dtypes import DType, as_dtype
from tapeshim._src.module import Module
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor
from tapeshim._src.variable import Variable

__all__ = ["LinearOperator"]


# -- helpers shared with linear_operator_more.py ----------------------------------------------------------
def keep(value: Any) -> Any:
    """A parameter as TF keeps it: a variable stays a variable (read at each use), else a tensor."""
    return value if isinstance(value, Variable) else tf.convert_to_tensor(value)


def read(value: Any) -> Tensor:
    """The current value of a kept parameter."""
    return tf.convert_to_tensor(value)


def params(**parameters: Any) -> dict[str, Any]:
    """The parameters an operator was made with (its `parameters` property)."""
    return parameters


def known(dimension: int | None) -> int:
    """A dimension that must be known statically (tapeshim's shapes of tensors and variables always are)."""
    if dimension is None:
        raise ValueError("tapeshim's linear operators need statically known matrix dimensions")
    return dimension


def check_compatible(a: int | None, b: int | None) -> None:
    """TF's `Dimension.assert_is_compatible_with`: a ValueError when two known dimensions differ."""
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions {a} and {b} are not compatible")


def broadcast_shapes(*shapes: TensorShape) -> TensorShape:
    """The broadcast of static batch shapes (a ValueError when they are incompatible, as TF)."""
    result = shapes[0]
    for shape in shapes[1:]:
        result = tf.broadcast_static_shape(result, shape)
    return result


def broadcast_batch(tensors: list[Tensor]) -> list[Tensor]:
    """Broadcasts the batch dimensions (all but the last two) of [batch] matrices to a common shape."""
    batch = broadcast_shapes(*(TensorShape(t.shape[:-2]) for t in tensors))
    out = []
    for t in tensors:
        if list(t.shape[:-2]) != batch.as_list():
            t = tf.broadcast_to(t, batch.as_list() + list(t.shape[-2:]))
        out.append(t)
    return out


def adjoint_if(x: Tensor, flag: bool) -> Tensor:
    """`tf.linalg.adjoint(x)` when `flag`, else x."""
    return tf.linalg.adjoint(x) if flag else x


def conj_if_complex(x: Tensor) -> Tensor:
    """The complex conjugate of a complex tensor; a real one unchanged."""
    return tf.math.conj(x) if x.dtype.is_complex else x


def solve_with_broadcast(matrix: Tensor, rhs: Tensor, adjoint: bool = False) -> Tensor:
    """`tf.linalg.solve` with the batch dimensions of `matrix` and `rhs` broadcast."""
    matrix, rhs = broadcast_batch([matrix, rhs])
    return tf.linalg.solve(matrix, rhs, adjoint=adjoint)


def non_singular_hint(a: LinearOperator, b: LinearOperator) -> bool | None:
    """TF's combined non-singular hint of a product of two operators."""
    if a.is_non_singular is False or b.is_non_singular is False:
        return False
    return a.is_non_singular and b.is_non_singular


def self_adjoint_hint(a: LinearOperator, b: LinearOperator) -> bool | None:
    """TF's combined self-adjoint hint of a product of two commuting operators."""
    if a.is_self_adjoint and b.is_self_adjoint:
        return True
    if {a.is_self_adjoint, b.is_self_adjoint} == {True, False}:
        return False
    return None


def positive_definite_hint(a: LinearOperator, b: LinearOperator) -> bool | None:
    """TF's combined positive-definite hint of a product of two commuting operators."""
    if all(o.is_positive_definite is True and o.is_self_adjoint is True for o in (a, b)):
        return True
    return None


def square_hint(a: LinearOperator, b: LinearOperator) -> bool | None:
    """TF's hint of whether the product `a @ b` is square."""
    if a.is_square and b.is_square:
        return True
    if a.is_square is False and b.is_square is False:
        m, n = a.range_dimension, b.domain_dimension
        if m is not None and n is not None:
            return m == n
    if a.is_square is not None and b.is_square is not None and a.is_square != b.is_square:
        return False
    return None


class LinearOperator(Module, metaclass=abc.ABCMeta):
    """Base class of a [batch of] linear operator[s], as `tf.linalg.LinearOperator`.

    An operator acts like a batch of matrices of shape `[B1, ..., Bb, M, N]` without (necessarily) making
    them. Subclasses implement `_shape` and `_matmul`, and may give faster versions of the other methods;
    the defaults here go through the dense matrix, as TF's do.

    Args:
      dtype: the operator's dtype.
      graph_parents: ignored (deprecated in TF).
      is_non_singular: hint: the operator is invertible.
      is_self_adjoint: hint: the operator equals its adjoint.
      is_positive_definite: hint: `Re(x^H A x) > 0` for all nonzero `x`.
      is_square: hint: the operator acts like square [batch] matrices.
      name: the operator's name (default: the class name).
      parameters: the parameters used to make the operator.

    Raises:
      ValueError: if the hints contradict each other.
    """

    def __init__(
        self,
        dtype: DType | Any,
        graph_parents: Any = None,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str | None = None,
        parameters: dict[str, Any] | None = None,
    ) -> None:
        if is_positive_definite:
            if is_non_singular is False:
                raise ValueError("A positive definite matrix is always non-singular.")
            is_non_singular = True
        if is_non_singular:
            if is_square is False:
                raise ValueError("A non-singular matrix is always square.")
            is_square = True
        if is_self_adjoint:
            if is_square is False:
                raise ValueError("A self-adjoint matrix is always square.")
            is_square = True
        del graph_parents
        self._square_hint = is_square
        self._dtype = as_dtype(dtype).base_dtype if dtype else dtype
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._parameters = dict(parameters or {})
        self._name = name or type(self).__name__
        self._scope_name = self._name + "/"

    # -- properties ---------------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The operator's name."""
        return self._name

    @property
    def parameters(self) -> dict[str, Any]:
        """The parameters used to make this operator."""
        return dict(self._parameters)

    @property
    def dtype(self) -> DType:
        """The dtype of the tensors this operator acts on and returns."""
        return self._dtype

    @property
    def graph_parents(self) -> list[Any]:
        """Always empty (deprecated in TF)."""
        return []

    @property
    def is_non_singular(self) -> bool | None:
        return self._is_non_singular

    @property
    def is_self_adjoint(self) -> bool | None:
        return self._is_self_adjoint

    @property
    def is_positive_definite(self) -> bool | None:
        return self._is_positive_definite

    @property
    def is_square(self) -> bool | None:
        """Whether the operator is square: the hint, else found from the static shape.

        Raises:
          ValueError: if the hint said False but the operator is square.
        """
        domain, range_ = self.domain_dimension, self.range_dimension
        auto = domain == range_ if domain is not None and range_ is not None else None
        if self._square_hint is False and auto:
            raise ValueError("User set is_square hint to False, but the operator was square.")
        if self._square_hint is None:
            return auto
        return self._square_hint

    @abc.abstractmethod
    def _shape(self) -> TensorShape:
        raise NotImplementedError("_shape is not implemented.")

    @property
    def shape(self) -> TensorShape:
        """The static `TensorShape` `[B1, ..., Bb, M, N]`."""
        return self._shape()

    def shape_tensor(self, name: str = "shape_tensor") -> Tensor:
        """The shape as an int32 tensor."""
        return tf.constant(self.shape.as_list(), tf.int32)

    @property
    def batch_shape(self) -> TensorShape:
        """The static batch shape `[B1, ..., Bb]`."""
        return TensorShape(self.shape[:-2])

    def batch_shape_tensor(self, name: str = "batch_shape_tensor") -> Tensor:
        """The batch shape as an int32 tensor."""
        return tf.constant(self.batch_shape.as_list(), tf.int32)

    @property
    def tensor_rank(self) -> int | None:
        """The rank of the [batch] matrix, `b + 2`."""
        return self.shape.rank

    def tensor_rank_tensor(self, name: str = "tensor_rank_tensor") -> Tensor:
        """The rank as an int32 tensor."""
        return tf.constant(self.tensor_rank, tf.int32)

    @property
    def domain_dimension(self) -> int | None:
        """`N`, the dimension of the domain (an int, where TF gives a `Dimension`)."""
        return self.shape[-1]

    def domain_dimension_tensor(self, name: str = "domain_dimension_tensor") -> Tensor:
        """`N` as an int32 tensor."""
        return tf.constant(self.domain_dimension, tf.int32)

    @property
    def range_dimension(self) -> int | None:
        """`M`, the dimension of the range (an int, where TF gives a `Dimension`)."""
        return self.shape[-2]

    def range_dimension_tensor(self, name: str = "range_dimension_tensor") -> Tensor:
        """`M` as an int32 tensor."""
        return tf.constant(self.range_dimension, tf.int32)

    def _check_input_dtype(self, arg: Tensor) -> None:
        if arg.dtype.base_dtype != self.dtype:
            raise TypeError(f"Expected argument to have dtype {self.dtype}.  Found: {arg.dtype} in tensor {arg}")

    def _dim(self, index: int) -> int | None:
        return self.shape[index]

    def _ones_like_batch(self) -> Tensor:
        return tf.ones(self.batch_shape.as_list(), self.dtype)

    # -- matmul -------------------------------------------------------------------------------------------
    @abc.abstractmethod
    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        raise NotImplementedError("_matmul is not implemented.")

    def matmul(self, x: Any, adjoint: bool = False, adjoint_arg: bool = False, name: str = "matmul") -> Any:
        """`A x` (or `A^H x`, `A x^H`) for a [batch] matrix `x`, or the product with another operator.

        Args:
          x: a tensor of shape `[..., N, R]` and this operator's dtype, or a `LinearOperator`.
          adjoint: multiply by the adjoint `A^H`.
          adjoint_arg: multiply by the adjoint of `x`.
          name: ignored (a TF op name).

        Returns:
          A tensor of shape `[..., M, R]`, or a `LinearOperator` for an operator `x`.

        Raises:
          TypeError: if `x` has another dtype.
          ValueError: if the dimensions are incompatible.
        """
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            self._check_operators_agree(left, right, "x")
            return self._linop_matmul(left, right)
        x = tf.convert_to_tensor(x)
        self._check_input_dtype(x)
        check_compatible(self._dim(-2 if adjoint else -1), x.shape[-1 if adjoint_arg else -2])
        return self._matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    @staticmethod
    def _check_operators_agree(left: LinearOperator, right: LinearOperator, arg: str) -> None:
        r, d = right.range_dimension, left.domain_dimension
        if r is not None and d is not None and r != d:
            raise ValueError(f"Operators are incompatible. Expected `{arg}` to have dimension {d} but got {r}.")

    def _linop_matmul(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        from tapeshim._src.linear_operator_more import LinearOperatorComposition

        if hasattr(right, "_ones_diag") and not hasattr(right, "multiplier"):  # the identity (as TF tells it)
            return left
        if hasattr(right, "_zeros_product"):  # anything times zeros is zeros (as TF)
            return right._zeros_product(left, right)
        is_square = square_hint(left, right)
        non_singular: bool | None = None
        self_adjoint: bool | None = None
        positive_definite: bool | None = None
        if is_square:
            non_singular = non_singular_hint(left, right)
        elif is_square is False:
            non_singular = self_adjoint = positive_definite = False
        return LinearOperatorComposition(
            [left, right],
            is_non_singular=non_singular,
            is_self_adjoint=self_adjoint,
            is_positive_definite=positive_definite,
            is_square=is_square,
        )

    def __matmul__(self, other: Any) -> Any:
        return self.matmul(other)

    def _matvec(self, x: Tensor, adjoint: bool = False) -> Tensor:
        return tf.squeeze(self.matmul(tf.expand_dims(x, -1), adjoint=adjoint), -1)

    def matvec(self, x: Any, adjoint: bool = False, name: str = "matvec") -> Tensor:
        """`A x` (or `A^H x`) for a [batch] vector `x` of shape `[..., N]`.

        Raises:
          TypeError: if `x` has another dtype.
          ValueError: if the dimensions are incompatible.
        """
        x = tf.convert_to_tensor(x)
        self._check_input_dtype(x)
        check_compatible(self._dim(-2 if adjoint else -1), x.shape[-1])
        return self._matvec(x, adjoint=adjoint)

    # -- solve --------------------------------------------------------------------------------------------
    def _can_use_cholesky(self) -> bool:
        return bool(self.is_self_adjoint and self.is_positive_definite)

    def _dense_solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        if self.is_square is False:
            raise NotImplementedError("Solve is not yet implemented for non-square operators.")
        rhs = adjoint_if(rhs, adjoint_arg)
        if self._can_use_cholesky():
            chol, rhs = broadcast_batch([tf.linalg.cholesky(self.to_dense()), rhs])
            return tf.linalg.cholesky_solve(chol, rhs)
        return solve_with_broadcast(self.to_dense(), rhs, adjoint=adjoint)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._dense_solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _check_solvable(self) -> None:
        if self.is_non_singular is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is expected to be singular.")
        if self.is_square is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is expected to not be square.")

    def solve(self, rhs: Any, adjoint: bool = False, adjoint_arg: bool = False, name: str = "solve") -> Any:
        """`X` with `A X = rhs` (or `A^H X = rhs`); for an operator `rhs`, the operator `A^-1 rhs`.

        Args:
          rhs: a tensor of shape `[..., M, R]` and this operator's dtype, or a `LinearOperator`.
          adjoint: solve with the adjoint `A^H`.
          adjoint_arg: solve for the adjoint of `rhs`.
          name: ignored (a TF op name).

        Raises:
          NotImplementedError: if the operator is hinted singular or not square.
          TypeError: if `rhs` has another dtype.
          ValueError: if the dimensions are incompatible.
        """
        self._check_solvable()
        if isinstance(rhs, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = rhs.adjoint() if adjoint_arg else rhs
            self._check_operators_agree(left, right, "rhs")
            return self._linop_solve(left, right)
        rhs = tf.convert_to_tensor(rhs)
        self._check_input_dtype(rhs)
        check_compatible(self._dim(-1 if adjoint else -2), rhs.shape[-1 if adjoint_arg else -2])
        return self._solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _linop_solve(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        from tapeshim._src.linear_operator_more import LinearOperatorComposition, LinearOperatorInversion

        if hasattr(right, "_ones_diag") and not hasattr(right, "multiplier"):
            return left.inverse()
        is_square = square_hint(left, right)
        non_singular: bool | None = None
        self_adjoint: bool | None = None
        positive_definite: bool | None = None
        if is_square:
            non_singular = non_singular_hint(left, right)
        elif is_square is False:
            non_singular = self_adjoint = positive_definite = False
        return LinearOperatorComposition(
            [LinearOperatorInversion(left), right],
            is_non_singular=non_singular,
            is_self_adjoint=self_adjoint,
            is_positive_definite=positive_definite,
            is_square=is_square,
        )

    def _solvevec(self, rhs: Tensor, adjoint: bool = False) -> Tensor:
        return tf.squeeze(self.solve(tf.expand_dims(rhs, -1), adjoint=adjoint), -1)

    def solvevec(self, rhs: Any, adjoint: bool = False, name: str = "solve") -> Tensor:
        """`x` with `A x = rhs` (or `A^H x = rhs`) for a [batch] vector `rhs` of shape `[..., M]`.

        Raises:
          NotImplementedError: if the operator is hinted singular or not square.
          TypeError: if `rhs` has another dtype.
          ValueError: if the dimensions are incompatible.
        """
        rhs = tf.convert_to_tensor(rhs)
        self._check_input_dtype(rhs)
        check_compatible(self._dim(-1 if adjoint else -2), rhs.shape[-1])
        return self._solvevec(rhs, adjoint=adjoint)

    # -- derived operators --------------------------------------------------------------------------------
    def adjoint(self, name: str = "adjoint") -> LinearOperator:
        """The adjoint `A^H` (this operator itself when it is hinted self-adjoint)."""
        if self.is_self_adjoint is True:
            return self
        return self._linop_adjoint()

    H = property(adjoint, None, None, "The adjoint `A^H` (as `adjoint()`).")

    def _linop_adjoint(self) -> LinearOperator:
        from tapeshim._src.linear_operator_more import LinearOperatorAdjoint

        return LinearOperatorAdjoint(
            self,
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=self.is_square,
        )

    def inverse(self, name: str = "inverse") -> LinearOperator:
        """The inverse `A^-1` as an operator.

        Raises:
          ValueError: if the operator is hinted not square or singular.
        """
        if self.is_square is False:
            raise ValueError("Cannot take the Inverse: This operator represents a non square matrix.")
        if self.is_non_singular is False:
            raise ValueError("Cannot take the Inverse: This operator represents a singular matrix.")
        return self._linop_inverse()

    def _linop_inverse(self) -> LinearOperator:
        from tapeshim._src.linear_operator_more import LinearOperatorInversion

        return LinearOperatorInversion(
            self,
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=self.is_square,
        )

    def cholesky(self, name: str = "cholesky") -> LinearOperator:
        """The lower-triangular Cholesky factor `L` (`A = L L^H`) as an operator.

        Raises:
          ValueError: unless the operator is hinted self-adjoint and positive definite.
        """
        if not self._can_use_cholesky():
            raise ValueError("Cannot take the Cholesky decomposition: Not a positive definite self adjoint matrix.")
        return self._linop_cholesky()

    def _linop_cholesky(self) -> LinearOperator:
        from tapeshim._src.linear_operator_leaves import LinearOperatorLowerTriangular

        return LinearOperatorLowerTriangular(
            tf.linalg.cholesky(self.to_dense()), is_non_singular=True, is_self_adjoint=False, is_square=True
        )

    # -- dense views and reductions -----------------------------------------------------------------------
    def _to_dense(self) -> Tensor:
        eye = tf.eye(known(self.domain_dimension), batch_shape=self.batch_shape.as_list(), dtype=self.dtype)
        return self.matmul(eye)

    def to_dense(self, name: str = "to_dense") -> Tensor:
        """The dense [batch] matrix of shape `[B1, ..., Bb, M, N]`."""
        return self._to_dense()

    def _diag_part(self) -> Tensor:
        return tf.linalg.diag_part(self.to_dense())

    def diag_part(self, name: str = "diag_part") -> Tensor:
        """The [batch] diagonal, shape `[B1, ..., Bb, min(M, N)]`."""
        return self._diag_part()

    def _trace(self) -> Tensor:
        return tf.reduce_sum(self.diag_part(), axis=-1)

    def trace(self, name: str = "trace") -> Tensor:
        """The [batch] trace, shape `[B1, ..., Bb]`."""
        return self._trace()

    def _check_square_for_determinant(self) -> None:
        if self.is_square is False:
            raise NotImplementedError("Determinant not implemented for an operator that is expected to not be square.")

    def _determinant(self) -> Tensor:
        if self._can_use_cholesky():
            return tf.exp(self.log_abs_determinant())
        return tf.linalg.det(self.to_dense())

    def determinant(self, name: str = "det") -> Tensor:
        """The [batch] determinant.

        Raises:
          NotImplementedError: if the operator is hinted not square.
        """
        self._check_square_for_determinant()
        return self._determinant()

    def _log_abs_determinant(self) -> Tensor:
        if self._can_use_cholesky():
            diag = tf.linalg.diag_part(tf.linalg.cholesky(self.to_dense()))
            return 2 * tf.reduce_sum(tf.math.log(diag), axis=[-1])
        log_abs_det = tf.linalg.slogdet(self.to_dense())[1]
        # TF's slogdet gives a complex matrix's log |det| in the matrix's (complex) dtype
        return tf.cast(log_abs_det, self.dtype) if self.dtype.is_complex else log_abs_det

    def log_abs_determinant(self, name: str = "log_abs_det") -> Tensor:
        """The [batch] `log |det A|`.

        Raises:
          NotImplementedError: if the operator is hinted not square.
        """
        self._check_square_for_determinant()
        return self._log_abs_determinant()

    def _add_to_tensor(self, x: Tensor) -> Tensor:
        return self.to_dense() + x

    def add_to_tensor(self, x: Any, name: str = "add_to_tensor") -> Tensor:
        """`A + x` for a [batch] matrix `x` (a dense tensor).

        Raises:
          TypeError: if `x` has another dtype.
        """
        x = tf.convert_to_tensor(x)
        self._check_input_dtype(x)
        return self._add_to_tensor(x)

    def _eigvals(self) -> Tensor:
        return tf.linalg.eigvalsh(self.to_dense())

    def eigvals(self, name: str = "eigvals") -> Tensor:
        """The [batch] eigenvalues of a self-adjoint operator.

        Raises:
          NotImplementedError: if the operator is not hinted self-adjoint.
        """
        if not self.is_self_adjoint:
            raise NotImplementedError("Only self-adjoint matrices are supported.")
        return self._eigvals()

    def _cond(self) -> Tensor:
        if not self.is_self_adjoint:
            values = tf.linalg.svd(self.to_dense(), compute_uv=False)
        else:
            values = tf.abs(self._eigvals())
        return tf.reduce_max(values, axis=-1) / tf.reduce_min(values, axis=-1)

    def cond(self, name: str = "cond") -> Tensor:
        """The [batch] condition number (ratio of the largest to the smallest singular value)."""
        return self._cond()
