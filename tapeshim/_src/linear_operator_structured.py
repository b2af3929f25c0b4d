"""The structured `tf.linalg` operators: circulant (1-D, 2-D, 3-D), Toeplitz and Householder.

As TF 2.21's (`tensorflow/python/ops/linalg/linear_operator_{circulant,toeplitz,householder}.py`): the same
constructor arguments, hints and their checks, shapes, errors and derived operators (the adjoint and inverse
of a circulant operator are circulant, a Householder reflection is its own adjoint and inverse). Each is
written on tapeshim's public ops, so it records on a `GradientTape` and works inside `tapeshim.function`.
The permutation, tridiagonal and zeros operators are in `linear_operator_structured_more.py`, the base class
in `linear_operator.py`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tapeshim as tf  # the public ops (used at call time only: tapeshim imports this module)
from tapeshim._src import dtypes
from tapeshim._src.dtypes import DType, as_dtype
from tapeshim._src.linear_operator import (
    LinearOperator,
    adjoint_if,
    broadcast_shapes,
    conj_if_complex,
    keep,
    known,
    non_singular_hint,
    params,
    positive_definite_hint,
    read,
    self_adjoint_hint,
)
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor

__all__ = [
    "LinearOperatorCirculant",
    "LinearOperatorCirculant2D",
    "LinearOperatorCirculant3D",
    "LinearOperatorHouseholder",
    "LinearOperatorToeplitz",
]


def _complex_of(dtype: DType) -> DType:
    """The complex dtype with `dtype`'s precision (complex dtypes unchanged)."""
    if dtype.is_complex:
        return dtype
    return tf.complex128 if dtype == tf.float64 else tf.complex64


def _hints(**hints: bool | None) -> dict[str, bool | None]:
    return hints


# -- circulant ------------------------------------------------------------------------------------------------
class _BaseCirculant(LinearOperator):
    """A [batch] multilevel circulant operator given by its spectrum (the DFT of its convolution kernel).

    Subclasses fix `_block_depth` (1, 2 or 3 levels), which picks `tf.signal.fft`, `fft2d` or `fft3d`.
    """

    _block_depth = 1

    def __init__(
        self,
        spectrum: Any,
        input_output_dtype: Any = dtypes.complex64,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool = True,
        name: str = "LinearOperatorCirculant",
    ) -> None:
        parameters = params(
            spectrum=spectrum,
            input_output_dtype=input_output_dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        self._spectrum = keep(spectrum)
        depth = self._block_depth
        if self._spectrum.shape.rank is not None and self._spectrum.shape.rank < depth:
            raise ValueError(
                f"Argument `spectrum` must have at least {depth} dimensions. Received: {read(self._spectrum)}."
            )
        if not self._spectrum.dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError(
                    "A real spectrum always corresponds to a self-adjoint operator. Expected argument "
                    "`is_self_adjoint` to be True when `spectrum.dtype.is_complex` = True. Received: False."
                )
            is_self_adjoint = True
        if is_square is False:
            raise ValueError(
                "A [[nested] block] circulant operator is always square. Expected argument `is_square` to be True. "
                "Received: False."
            )
        super().__init__(
            as_dtype(input_output_dtype),
            None,
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            True,
            name,
            parameters,
        )

    @property
    def spectrum(self) -> Any:
        """The spectrum, of shape `[B1, ..., Bb] + block_shape`."""
        return self._spectrum

    @property
    def block_depth(self) -> int:
        """The number of nested circulant levels (1, 2 or 3)."""
        return self._block_depth

    @property
    def block_shape(self) -> TensorShape:
        """The sizes of the circulant levels, the spectrum's last `block_depth` dimensions."""
        return TensorShape(self._spectrum.shape[-self._block_depth :])

    def block_shape_tensor(self) -> Tensor:
        """`block_shape` as an int32 tensor."""
        return tf.constant(self.block_shape.as_list(), tf.int32)

    def _shape(self) -> TensorShape:
        shape = TensorShape(self._spectrum.shape)
        depth = self._block_depth
        n = int(np.prod([known(d) for d in shape[-depth:]]))
        return TensorShape(shape[:-depth]).concatenate([n, n])

    def _fft(self, x: Tensor) -> Tensor:
        return {1: tf.signal.fft, 2: tf.signal.fft2d, 3: tf.signal.fft3d}[self._block_depth](x)

    def _ifft(self, x: Tensor) -> Tensor:
        return {1: tf.signal.ifft, 2: tf.signal.ifft2d, 3: tf.signal.ifft3d}[self._block_depth](x)

    def _complex_spectrum(self) -> Tensor:
        spectrum = read(self._spectrum)
        if spectrum.dtype.is_complex:
            return spectrum
        return tf.cast(spectrum, _complex_of(spectrum.dtype) if spectrum.dtype.is_floating else self.dtype)

    def _to_io(self, x: Tensor) -> Tensor:
        """A complex result in the operator's dtype (the real part for a real dtype, as `tf.cast`)."""
        return x if x.dtype == self.dtype else tf.cast(x, self.dtype)

    def _apply(self, x: Tensor, spectrum: Tensor) -> Tensor:
        """`F^-1 diag(spectrum) F x` for `x` of shape `[..., N, R]`."""
        block = [known(d) for d in self.block_shape]
        x = tf.cast(x, spectrum.dtype) if x.dtype != spectrum.dtype else x
        x = tf.linalg.matrix_transpose(x)  # [..., R, N]
        lead = [known(d) for d in x.shape[:-1]]
        x = tf.reshape(x, lead + block)
        spectrum = tf.expand_dims(spectrum, -self._block_depth - 1)  # broadcast over the R columns
        y = self._ifft(spectrum * self._fft(x))
        lead = [known(d) for d in y.shape[: -self._block_depth]]
        y = tf.reshape(y, lead + [int(np.prod(block))])
        return self._to_io(tf.linalg.matrix_transpose(y))

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        spectrum = self._complex_spectrum()
        return self._apply(adjoint_if(x, adjoint_arg), tf.math.conj(spectrum) if adjoint else spectrum)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        spectrum = self._complex_spectrum()
        spectrum = tf.math.conj(spectrum) if adjoint else spectrum
        return self._apply(adjoint_if(rhs, adjoint_arg), 1.0 / spectrum)

    def _block_axes(self) -> list[int]:
        return list(range(-self._block_depth, 0))

    def _determinant(self) -> Tensor:
        return self._to_io(tf.reduce_prod(self._complex_spectrum(), axis=self._block_axes()))

    def _log_abs_determinant(self) -> Tensor:
        log_abs = tf.reduce_sum(tf.math.log(tf.abs(self._complex_spectrum())), axis=self._block_axes())
        return tf.cast(log_abs, self.dtype)

    def _trace(self) -> Tensor:
        return self._to_io(tf.reduce_sum(self._complex_spectrum(), axis=self._block_axes()))

    def _diag_part(self) -> Tensor:
        n = known(self.domain_dimension)
        mean = self._trace() / tf.cast(n, self.dtype)
        return tf.expand_dims(mean, -1) * tf.ones([n], self.dtype)

    def _flat_spectrum(self) -> Tensor:
        return tf.reshape(read(self._spectrum), self.batch_shape.as_list() + [known(self.domain_dimension)])

    def _eigvals(self) -> Tensor:
        return self._flat_spectrum()

    def _cond(self) -> Tensor:
        magnitude = tf.abs(self._flat_spectrum())
        return tf.reduce_max(magnitude, axis=-1) / tf.reduce_min(magnitude, axis=-1)

    def convolution_kernel(self, name: str = "convolution_kernel") -> Tensor:
        """The convolution kernel (the inverse DFT of the spectrum), in the operator's dtype."""
        return self._to_io(self._ifft(self._complex_spectrum()))

    def _same_kind(self, spectrum: Tensor, dtype: Any = dtypes.complex64, **hints: Any) -> LinearOperator:
        return type(self)(spectrum, input_output_dtype=dtype, is_square=True, **hints)

    def _own_hints(self) -> dict[str, Any]:
        return _hints(
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
        )

    def _linop_adjoint(self) -> LinearOperator:
        return self._same_kind(conj_if_complex(read(self._spectrum)), **self._own_hints())

    def _linop_inverse(self) -> LinearOperator:
        spectrum = read(self._spectrum)
        if spectrum.dtype.is_integer:
            spectrum = tf.cast(spectrum, self.dtype.real_dtype)
        return self._same_kind(1.0 / spectrum, self.dtype, **self._own_hints())

    def _pair_hints(self, right: LinearOperator) -> dict[str, Any]:
        return _hints(
            is_non_singular=non_singular_hint(self, right),
            is_self_adjoint=self_adjoint_hint(self, right),
            is_positive_definite=positive_definite_hint(self, right),
        )

    def _linop_matmul(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        if type(right) is type(left) and isinstance(left, _BaseCirculant) and isinstance(right, _BaseCirculant):
            spectrum = read(left.spectrum) * read(right.spectrum)
            return left._same_kind(spectrum, **left._pair_hints(right))
        return super()._linop_matmul(left, right)

    def _linop_solve(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        if type(right) is type(left) and isinstance(left, _BaseCirculant) and isinstance(right, _BaseCirculant):
            spectrum = read(right.spectrum) / read(left.spectrum)
            return left._same_kind(spectrum, **left._pair_hints(right))
        return super()._linop_solve(left, right)


class LinearOperatorCirculant(_BaseCirculant):
    """A [batch] circulant operator, as `tf.linalg.LinearOperatorCirculant`.

    `A = F^H diag(spectrum) F`, with `F` the (unitary) DFT: `A x` is the circular convolution of `x` with
    the kernel `ifft(spectrum)`.

    Args:
      spectrum: a tensor (or variable) of shape `[B1, ..., Bb, N]`, float16/32/64 or complex64/128.
      input_output_dtype: the operator's dtype (default complex64); a real dtype keeps the real part.
      is_non_singular: hint (see `LinearOperator`).
      is_self_adjoint: hint (True for a real spectrum).
      is_positive_definite: hint.
      is_square: hint (must be True).
      name: the operator's name.

    Raises:
      TypeError: for a spectrum of another dtype.
      ValueError: for a scalar spectrum, a real spectrum hinted not self-adjoint, or `is_square` False.
    """

    _block_depth = 1


class LinearOperatorCirculant2D(_BaseCirculant):
    """A [batch] block circulant operator with circulant blocks, as `tf.linalg.LinearOperatorCirculant2D`.

    Args:
      spectrum: a tensor (or variable) of shape `[B1, ..., Bb, N0, N1]` (the operator is `N0 N1` square).
      input_output_dtype: the operator's dtype (default complex64).
      is_non_singular: hint (see `LinearOperator`).
      is_self_adjoint: hint (True for a real spectrum).
      is_positive_definite: hint.
      is_square: hint (must be True).
      name: the operator's name.

    Raises:
      TypeError: for a spectrum of another dtype.
      ValueError: for a spectrum of rank below 2, a real spectrum hinted not self-adjoint, or `is_square` False.
    """

    _block_depth = 2

    def __init__(
        self,
        spectrum: Any,
        input_output_dtype: Any = dtypes.complex64,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool = True,
        name: str = "LinearOperatorCirculant2D",
    ) -> None:
        super().__init__(
            spectrum, input_output_dtype, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name
        )


class LinearOperatorCirculant3D(_BaseCirculant):
    """A [batch] doubly nested block circulant operator, as `tf.linalg.LinearOperatorCirculant3D`.

    Args:
      spectrum: a tensor (or variable) of shape `[B1, ..., Bb, N0, N1, N2]` (the operator is `N0 N1 N2` square).
      input_output_dtype: the operator's dtype (default complex64).
      is_non_singular: hint (see `LinearOperator`).
      is_self_adjoint: hint (True for a real spectrum).
      is_positive_definite: hint.
      is_square: hint (must be True).
      name: the operator's name.

    Raises:
      TypeError: for a spectrum of another dtype.
      ValueError: for a spectrum of rank below 3, a real spectrum hinted not self-adjoint, or `is_square` False.
    """

    _block_depth = 3

    def __init__(
        self,
        spectrum: Any,
        input_output_dtype: Any = dtypes.complex64,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool = True,
        name: str = "LinearOperatorCirculant3D",
    ) -> None:
        super().__init__(
            spectrum, input_output_dtype, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name
        )


# -- Toeplitz -------------------------------------------------------------------------------------------------
class LinearOperatorToeplitz(LinearOperator):
    """A square [batch] Toeplitz operator (constant along each diagonal), as `tf.linalg.LinearOperatorToeplitz`.

    The first column is `col` and the first row is `row` (`row[0]` is ignored: the diagonal is `col[0]`).
    `matmul` multiplies by the dense matrix (TF embeds it in a circulant operator; the values agree to
    rounding).

    Args:
      col: a tensor (or variable) of shape `[B1, ..., Bb, N]`: the first column.
      row: a tensor (or variable) of shape `[B1, ..., Bb, N]`: the first row.
      is_non_singular: hint (see `LinearOperator`).
      is_self_adjoint: hint.
      is_positive_definite: hint.
      is_square: hint (must not be False).
      name: the operator's name.

    Raises:
      ValueError: if `is_square` is False, `col` or `row` is a scalar, or their lengths differ.
    """

    def __init__(
        self,
        col: Any,
        row: Any,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorToeplitz",
    ) -> None:
        parameters = params(
            col=col,
            row=row,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        self._col = keep(col)
        self._row = keep(row)
        if self._row.dtype != self._col.dtype:
            self._row = tf.cast(read(self._row), self._col.dtype)
        for what, value in (("row", self._row), ("col", self._col)):
            if value.shape.rank is not None and value.shape.rank < 1:
                raise ValueError(f"Argument {what} must have at least 1 dimension.  Found: {read(value)}")
        if is_square is False:
            raise ValueError("Only square Toeplitz operators currently supported.")
        if self._row.shape[-1] != self._col.shape[-1]:
            raise ValueError("Expected square matrix, got row and col with mismatched dimensions.")
        super().__init__(
            self._col.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name, parameters
        )

    @property
    def col(self) -> Any:
        """The first column."""
        return self._col

    @property
    def row(self) -> Any:
        """The first row."""
        return self._row

    def _shape(self) -> TensorShape:
        batch = broadcast_shapes(TensorShape(self._row.shape[:-1]), TensorShape(self._col.shape[:-1]))
        n = self._col.shape[-1]
        return batch.concatenate([n, n])

    def _to_dense(self) -> Tensor:
        n = known(self.domain_dimension)
        col, row = read(self._col), read(self._row)
        batch = self.batch_shape.as_list()
        col = tf.broadcast_to(col, batch + [n])
        row = tf.broadcast_to(row, batch + [n])
        values = tf.concat([tf.reverse(row[..., 1:], [-1]), col], axis=-1)  # entry (i, j) is at n - 1 + i - j
        index = (n - 1) + np.arange(n)[:, None] - np.arange(n)[None, :]
        return tf.gather(values, tf.constant(index, tf.int32), axis=len(batch))

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return tf.matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _diag_part(self) -> Tensor:
        n = known(self.domain_dimension)
        return read(self._col)[..., :1] * tf.ones(self.batch_shape.as_list() + [n], self.dtype)


# -- Householder ----------------------------------------------------------------------------------------------
class LinearOperatorHouseholder(LinearOperator):
    """A [batch] Householder reflection `I - 2 v v^H / (v^H v)`, as `tf.linalg.LinearOperatorHouseholder`.

    It is self-adjoint, orthogonal (unitary) and its own inverse; its determinant is -1.

    Args:
      reflection_axis: a tensor (or variable) of shape `[B1, ..., Bb, N]`: the normal `v` of the hyperplane.
      is_non_singular: hint (see `LinearOperator`).
      is_self_adjoint: hint (must not be False).
      is_positive_definite: hint (must not be True).
      is_square: hint (must not be False).
      name: the operator's name.

    Raises:
      ValueError: for a scalar `reflection_axis` or a contradicting hint.
    """

    def __init__(
        self,
        reflection_axis: Any,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorHouseholder",
    ) -> None:
        parameters = params(
            reflection_axis=reflection_axis,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        self._reflection_axis = keep(reflection_axis)
        if self._reflection_axis.shape.rank is not None and self._reflection_axis.shape.rank < 1:
            raise ValueError(
                f"Argument reflection_axis must have at least 1 dimension.  Found: {read(self._reflection_axis)}"
            )
        if is_self_adjoint is False:
            raise ValueError("A Householder operator is always self adjoint.")
        if is_positive_definite is True:
            raise ValueError("A Householder operator is always non-positive definite.")
        if is_square is False:
            raise ValueError("A Householder operator is always square.")
        super().__init__(self._reflection_axis.dtype, None, is_non_singular, True, False, True, name, parameters)

    @property
    def reflection_axis(self) -> Any:
        """The normal of the reflecting hyperplane."""
        return self._reflection_axis

    def _shape(self) -> TensorShape:
        shape = TensorShape(self._reflection_axis.shape)
        return shape.concatenate(shape[-1:])

    def _unit(self) -> Tensor:
        return tf.math.l2_normalize(read(self._reflection_axis), axis=-1)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        x = adjoint_if(x, adjoint_arg)
        u = tf.expand_dims(self._unit(), -1)
        projection = tf.reduce_sum(conj_if_complex(u) * x, axis=-2, keepdims=True)
        return x - 2 * u * projection

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self) -> Tensor:
        return -self._ones_like_batch()

    def _log_abs_determinant(self) -> Tensor:
        return tf.zeros(self.batch_shape.as_list(), self.dtype)

    def _trace(self) -> Tensor:
        return (known(self.domain_dimension) - 2) * self._ones_like_batch()

    def _diag_part(self) -> Tensor:
        u = self._unit()
        return 1 - 2 * u * conj_if_complex(u)

    def _cond(self) -> Tensor:
        return self._ones_like_batch()  # an orthogonal (unitary) matrix

    def _linop_adjoint(self) -> LinearOperator:
        return self

    def _linop_inverse(self) -> LinearOperator:
        return self
