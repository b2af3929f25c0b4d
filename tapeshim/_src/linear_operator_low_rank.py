"""`tf.linalg.LinearOperatorLowRankUpdate`: `L + U D V^H`, solved with the Woodbury identity (as TF 2.21's).

The hints, the shape checks and the computation (the capacitance matrix `D^-1 + V^H L^-1 U`, a Cholesky
solve where the update keeps the operator self-adjoint positive definite) follow TF's
`tensorflow/python/ops/linalg/linear_operator_low_rank_update.py`.
"""

from __future__ import annotations

from typing import Any

import tapeshim as tf  # the public ops (used at call time only: tapeshim imports this module)
from tapeshim._src.linear_operator import (
    LinearOperator,
    broadcast_batch,
    broadcast_shapes,
    check_compatible,
    keep,
    params,
    read,
    solve_with_broadcast,
)
from tapeshim._src.linear_operator_leaves import LinearOperatorDiag, LinearOperatorIdentity
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor

__all__ = ["LinearOperatorLowRankUpdate"]


class LinearOperatorLowRankUpdate(LinearOperator):
    """`A = L + U D V^H`, a low-rank update of an operator, as `tf.linalg.LinearOperatorLowRankUpdate`.

    Args:
      base_operator: `L`, an operator of shape `[B1, ..., Bb, M, N]`.
      u: `U`, a tensor (or variable) of shape `[..., M, K]`.
      diag_update: the diagonal of `D`, shape `[..., K]`, or None for the identity.
      v: `V`, shape `[..., N, K]`, or None for `U`.
      is_diag_update_positive: hint: every entry of `diag_update` is positive.
      is_non_singular: hint (see `LinearOperator`).
      is_self_adjoint: hint.
      is_positive_definite: hint.
      is_square: hint.
      name: the operator's name.

    Raises:
      ValueError: if the hints contradict each other, or the shapes of `L`, `U`, `D`, `V` are incompatible.
    """

    def __init__(
        self,
        base_operator: LinearOperator,
        u: Any,
        diag_update: Any = None,
        v: Any = None,
        is_diag_update_positive: bool | None = None,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorLowRankUpdate",
    ) -> None:
        parameters = params(
            base_operator=base_operator,
            u=u,
            diag_update=diag_update,
            v=v,
            is_diag_update_positive=is_diag_update_positive,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        dtype = base_operator.dtype
        if diag_update is None:
            if is_diag_update_positive is False:
                raise ValueError(
                    "Default diagonal is the identity, which is positive.  However, user set "
                    "'is_diag_update_positive' to False."
                )
            is_diag_update_positive = True
        self._use_cholesky = bool(
            base_operator.is_positive_definite and base_operator.is_self_adjoint and is_diag_update_positive
        ) and (v is None)
        if base_operator.is_self_adjoint and v is None and not dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError(
                    "A = L + UDU^H, with L self-adjoint and D real diagonal.  Since UDU^H is self-adjoint, this "
                    "must be a self-adjoint operator."
                )
            is_self_adjoint = True
        if self._use_cholesky:
            if is_positive_definite is False or is_self_adjoint is False or is_non_singular is False:
                raise ValueError("Arguments imply this is self-adjoint positive-definite operator.")
            is_positive_definite = is_self_adjoint = True
        self._u = keep(u)
        self._v = self._u if v is None else keep(v)
        self._diag_update = None if diag_update is None else keep(diag_update)
        self._base_operator = base_operator
        super().__init__(
            dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name, parameters
        )
        self._diag_operator: LinearOperator
        if self._diag_update is not None:
            self._diag_operator = LinearOperatorDiag(self._diag_update, is_positive_definite=is_diag_update_positive)
        else:
            self._diag_operator = LinearOperatorIdentity(self._u.shape[-1], dtype=dtype)
        self._is_diag_update_positive = is_diag_update_positive
        self._check_shapes()

    def _check_shapes(self) -> None:
        uv = tf.broadcast_static_shape(TensorShape(self._u.shape), TensorShape(self._v.shape))
        batch = broadcast_shapes(self._base_operator.batch_shape, TensorShape(uv[:-2]))
        check_compatible(self._base_operator.domain_dimension, uv[-2])
        if self._diag_update is not None:
            check_compatible(uv[-1], self._diag_update.shape[-1])
            broadcast_shapes(batch, TensorShape(self._diag_update.shape[:-1]))

    @property
    def u(self) -> Any:
        """`U`."""
        return self._u

    @property
    def v(self) -> Any:
        """`V` (`U` when none was given)."""
        return self._v

    @property
    def diag_update(self) -> Any:
        """The diagonal of `D`, or None (the identity)."""
        return self._diag_update

    @property
    def diag_operator(self) -> LinearOperator:
        """`D`, as an operator."""
        return self._diag_operator

    @property
    def base_operator(self) -> LinearOperator:
        """`L`."""
        return self._base_operator

    @property
    def is_diag_update_positive(self) -> bool | None:
        """Whether `D` is hinted positive."""
        return self._is_diag_update_positive

    def _shape(self) -> TensorShape:
        batch = broadcast_shapes(
            self._base_operator.batch_shape,
            self._diag_operator.batch_shape,
            TensorShape(self._u.shape[:-2]),
            TensorShape(self._v.shape[:-2]),
        )
        return batch.concatenate(self._base_operator.shape[-2:])

    def _uv(self) -> tuple[Tensor, Tensor]:
        u = read(self._u)
        return u, u if self._v is self._u else read(self._v)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        u, v = self._uv()
        if adjoint:
            u, v = v, u
        leading = self._base_operator.matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        vh_x = tf.matmul(v, x, adjoint_a=True, adjoint_b=adjoint_arg)
        return leading + tf.matmul(u, self._diag_operator.matmul(vh_x, adjoint=adjoint))

    def _capacitance(self, u: Tensor, v: Tensor) -> Tensor:
        vh_linv_u = tf.matmul(v, self._base_operator.solve(u), adjoint_a=True)
        return self._diag_operator.inverse().add_to_tensor(vh_linv_u)

    def _determinant(self) -> Tensor:
        if self.is_positive_definite:
            return tf.exp(self.log_abs_determinant())
        det_c = tf.linalg.det(self._capacitance(*self._uv()))
        return det_c * self._diag_operator.determinant() * self._base_operator.determinant()

    def _log_abs_determinant(self) -> Tensor:
        capacitance = self._capacitance(*self._uv())
        if self._use_cholesky:
            diag = tf.linalg.diag_part(tf.linalg.cholesky(capacitance))
            log_abs_det_c = 2 * tf.reduce_sum(tf.math.log(diag), axis=[-1])
        else:
            log_abs_det_c = tf.math.log(tf.abs(tf.linalg.det(capacitance)))
            if self.dtype.is_complex:
                log_abs_det_c = tf.cast(log_abs_det_c, self.dtype)
        return log_abs_det_c + self._diag_operator.log_abs_determinant() + self._base_operator.log_abs_determinant()

    def _diag_part(self) -> Tensor:
        u, v = self._uv()
        product = u * tf.math.conj(v)
        if self._diag_update is not None:
            product *= tf.expand_dims(read(self._diag_update), axis=-2)
        return tf.reduce_sum(product, axis=-1) + self._base_operator.diag_part()

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        if self._base_operator.is_non_singular is False:
            raise ValueError("Solve not implemented unless this is a perturbation of a non-singular LinearOperator.")
        base = self._base_operator
        u, v = self._uv()
        capacitance = self._capacitance(u, v)
        if adjoint:
            u, v = v, u
        linv_rhs = base.solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        vh_linv_rhs = tf.matmul(v, linv_rhs, adjoint_a=True)
        if self._use_cholesky:
            chol, vh_linv_rhs = broadcast_batch([tf.linalg.cholesky(capacitance), vh_linv_rhs])
            cap_solved = tf.linalg.cholesky_solve(chol, vh_linv_rhs)
        else:
            cap_solved = solve_with_broadcast(capacitance, vh_linv_rhs, adjoint=adjoint)
        return linv_rhs - base.solve(tf.matmul(u, cap_solved), adjoint=adjoint)
