"""The `tf.linalg` operators made of other operators: composition, inversion, adjoint, block diagonal, Kronecker.

As TF 2.21's (`tensorflow/python/ops/linalg/linear_operator_{composition,inversion,adjoint,block_diag,
kronecker}.py`): the same hints and their checks, shapes and errors; the leaf operators are in
`linear_operator_leaves.py`, the base class in `linear_operator.py`.
"""

from __future__ import annotations

from typing import Any, Sequence

import tapeshim as tf  # the public ops (used at call time only: tapeshim imports this module)
from tapeshim._src.linear_operator import (
    LinearOperator,
    broadcast_batch,
    broadcast_shapes,
    check_compatible,
    conj_if_complex,
    known,
    params,
)
from tapeshim._src.linear_operator_leaves import LinearOperatorLowerTriangular
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor

__all__ = [
    "LinearOperatorAdjoint",
    "LinearOperatorBlockDiag",
    "LinearOperatorComposition",
    "LinearOperatorInversion",
    "LinearOperatorKronecker",
]


def _operator_list(operators: Sequence[LinearOperator], empty_message: str, dtype_message: str) -> list:
    operators = list(operators)
    if not operators:
        raise ValueError(empty_message.format(operators))
    if any(o.dtype != operators[0].dtype for o in operators):
        raise TypeError(dtype_message + "   ".join(str((o.name, o.dtype)) for o in operators))
    return operators


def _all_hint(operators: list, attribute: str, given: bool | None, message: str) -> bool | None:
    """True when every operator has the hint (a ValueError if the user said False), else the user's hint."""
    if all(getattr(o, attribute) for o in operators):
        if given is False:
            raise ValueError(message.format(given))
        return True
    return given


def _is_adjoint_pair(x: LinearOperator, y: LinearOperator) -> bool:
    if x is y:
        if x.is_self_adjoint is False:
            return False
        if x.is_self_adjoint:
            return True
    return x.H is y or y.H is x


def _is_aat_form(operators: list) -> bool:
    if len(operators) % 2:
        return False
    return all(_is_adjoint_pair(operators[i], operators[-1 - i]) for i in range(len(operators) // 2))


def _hints_of(operator: LinearOperator, relation: str, *given: bool | None) -> list:
    """`[is_square, is_non_singular, is_self_adjoint, is_positive_definite]` of an operator made from `operator`
    (its inverse or adjoint: `relation`), each `operator`'s or the given one (`given`, in that order)."""
    names = ("square", "non-singular", "self-adjoint", "positive-definite")
    return [
        _operator_or_given_hint(
            operator, attribute, hint, f"An operator is {what} if and only if its {relation} is {what}."
        )
        for attribute, hint, what in zip(
            ("is_square", "is_non_singular", "is_self_adjoint", "is_positive_definite"), given, names
        )
    ]


def _operator_or_given_hint(operator: LinearOperator, attribute: str, given: bool | None, message: str) -> Any:
    hint = getattr(operator, attribute)
    if (hint is False and given) or (hint and given is False):
        raise ValueError(message)
    if hint or given:
        return True
    if hint is False or given is False:
        return False
    return None


class LinearOperatorComposition(LinearOperator):
    """The product `A1 A2 ... AJ` of operators, as `tf.linalg.LinearOperatorComposition`.

    Args:
      operators: a non-empty list of operators of one dtype, with compatible dimensions and batch shapes.
      is_non_singular: hint (True when every operator is non-singular).
      is_self_adjoint: hint.
      is_positive_definite: hint.
      is_square: hint.
      name: the operator's name (default: the operators' names joined by `_o_`).

    Raises:
      TypeError: if the operators' dtypes differ.
      ValueError: if `operators` is empty, or the hints contradict the operators'.
    """

    def __init__(
        self,
        operators: Sequence[LinearOperator],
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str | None = None,
    ) -> None:
        parameters = params(
            operators=operators,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        ops = _operator_list(
            operators,
            "Expected a non-empty list of operators. Found: {}",
            "Expected all operators to have the same dtype.  Found ",
        )
        self._operators = ops
        is_non_singular = _all_hint(
            ops, "is_non_singular", is_non_singular, "The composition of non-singular operators is always non-singular."
        )
        aat = _is_aat_form(ops)
        if (len(ops) == 1 and ops[0].is_self_adjoint) or aat:
            if is_self_adjoint is False:
                raise ValueError(
                    "The composition was determined to be self-adjoint but user provided incorrect `False` hint."
                )
            is_self_adjoint = True
        if aat:
            if is_square is False:
                raise ValueError(
                    "The composition was determined have the form A @ A.H, hence it must be square. The user "
                    "provided an incorrect `False` hint."
                )
            is_square = True
            if is_non_singular:
                if is_positive_definite is False:
                    raise ValueError(
                        "The composition was determined to be non-singular and have the form A @ A.H, hence it "
                        "must be positive-definite. The user provided an incorrect `False` hint."
                    )
                is_positive_definite = True
        name = name or "_o_".join(o.name for o in ops)
        super().__init__(
            ops[0].dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name, parameters
        )

    @property
    def operators(self) -> list:
        """The factors, leftmost first."""
        return self._operators

    def _shape(self) -> TensorShape:
        ops = self._operators
        for left, right in zip(ops, ops[1:]):
            check_compatible(left.domain_dimension, right.range_dimension)
        batch = broadcast_shapes(*(o.batch_shape for o in ops))
        return batch.concatenate([ops[0].range_dimension, ops[-1].domain_dimension])

    def _linop_cholesky(self) -> LinearOperator:
        ops = self._operators
        if not (len(ops) == 2 and _is_aat_form(ops) and isinstance(ops[0], LinearOperatorLowerTriangular)):
            return super()._linop_cholesky()
        left = ops[0]
        if left.is_positive_definite:
            return left
        sign = tf.expand_dims(tf.sign(left.diag_part()), axis=-2)
        return LinearOperatorLowerTriangular(
            tf.convert_to_tensor(left.tril) / sign,
            is_non_singular=left.is_non_singular,
            is_self_adjoint=left.is_self_adjoint,
            is_positive_definite=True if left.is_positive_definite else None,
            is_square=True,
        )

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        order = self._operators if adjoint else list(reversed(self._operators))
        result = order[0].matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for operator in order[1:]:
            result = operator.matmul(result, adjoint=adjoint)
        return result

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        order = list(reversed(self._operators)) if adjoint else self._operators
        result = order[0].solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for operator in order[1:]:
            result = operator.solve(result, adjoint=adjoint)
        return result

    def _determinant(self) -> Tensor:
        result = self._operators[0].determinant()
        for operator in self._operators[1:]:
            result *= operator.determinant()
        return result

    def _log_abs_determinant(self) -> Tensor:
        result = self._operators[0].log_abs_determinant()
        for operator in self._operators[1:]:
            result += operator.log_abs_determinant()
        return result


class LinearOperatorInversion(LinearOperator):
    """The inverse `A^-1` of an operator, as `tf.linalg.LinearOperatorInversion`.

    Args:
      operator: a square, non-singular (or not hinted otherwise) operator.
      is_non_singular: hint (must agree with the operator's).
      is_self_adjoint: hint (must agree with the operator's).
      is_positive_definite: hint (must agree with the operator's).
      is_square: hint (must agree with the operator's).
      name: the operator's name (default: the operator's name with `_inv`).

    Raises:
      ValueError: if the operator or the hints say singular or not square, or the hints contradict.
    """

    def __init__(
        self,
        operator: LinearOperator,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str | None = None,
    ) -> None:
        parameters = params(
            operator=operator,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        self._operator = operator
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError(
                "Argument `is_non_singular` or argument `operator` must have supplied hint `is_non_singular` "
                f"equal to `True` or `None`. Found `operator.is_non_singular`: {operator.is_non_singular}, "
                f"`is_non_singular`: {is_non_singular}."
            )
        if operator.is_square is False or is_square is False:
            raise ValueError(
                "Argument `is_square` or argument `operator` must have supplied hint `is_square` equal to `True` "
                f"or `None`. Found `operator.is_square`: {operator.is_square}, `is_square`: {is_square}."
            )
        hints = _hints_of(operator, "inverse", is_square, is_non_singular, is_self_adjoint, is_positive_definite)
        name = name or operator.name + "_inv"
        super().__init__(operator.dtype, None, hints[1], hints[2], hints[3], hints[0], name, parameters)

    @property
    def operator(self) -> LinearOperator:
        """The operator before inversion."""
        return self._operator

    def _linop_inverse(self) -> LinearOperator:
        return self._operator

    def _linop_solve(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        assert isinstance(left, LinearOperatorInversion)
        return left.operator.matmul(right)

    def _shape(self) -> TensorShape:
        return self._operator.shape

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self) -> Tensor:
        return 1.0 / self._operator.determinant()

    def _log_abs_determinant(self) -> Tensor:
        return -1.0 * self._operator.log_abs_determinant()

    def _eigvals(self) -> Tensor:
        return 1.0 / self._operator.eigvals()

    def _cond(self) -> Tensor:
        return self._operator.cond()


class LinearOperatorAdjoint(LinearOperator):
    """The adjoint `A^H` of an operator, as `tf.linalg.LinearOperatorAdjoint`.

    Args:
      operator: the operator.
      is_non_singular: hint (must agree with the operator's).
      is_self_adjoint: hint (must agree with the operator's).
      is_positive_definite: hint (must agree with the operator's).
      is_square: hint (must agree with the operator's).
      name: the operator's name (default: the operator's name with `_adjoint`).

    Raises:
      ValueError: if the hints contradict the operator's.
    """

    def __init__(
        self,
        operator: LinearOperator,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str | None = None,
    ) -> None:
        parameters = params(
            operator=operator,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        self._operator = operator
        hints = _hints_of(operator, "adjoint", is_square, is_non_singular, is_self_adjoint, is_positive_definite)
        name = name or operator.name + "_adjoint"
        super().__init__(operator.dtype, None, hints[1], hints[2], hints[3], hints[0], name, parameters)

    @property
    def operator(self) -> LinearOperator:
        """The operator before taking the adjoint."""
        return self._operator

    def _linop_adjoint(self) -> LinearOperator:
        return self._operator

    def _shape(self) -> TensorShape:
        shape = self._operator.shape
        return TensorShape(shape[:-2]).concatenate([shape[-1], shape[-2]])

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _matvec(self, x: Tensor, adjoint: bool = False) -> Tensor:
        return self._operator.matvec(x, adjoint=not adjoint)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solvevec(self, rhs: Tensor, adjoint: bool = False) -> Tensor:
        return self._operator.solvevec(rhs, adjoint=not adjoint)

    def _determinant(self) -> Tensor:
        return conj_if_complex(self._operator.determinant())

    def _log_abs_determinant(self) -> Tensor:
        return self._operator.log_abs_determinant()

    def _trace(self) -> Tensor:
        return conj_if_complex(self._operator.trace())

    def _to_dense(self) -> Tensor:
        return tf.linalg.adjoint(self._operator.to_dense())

    def _add_to_tensor(self, x: Tensor) -> Tensor:
        return self.to_dense() + x

    def _eigvals(self) -> Tensor:
        return conj_if_complex(self._operator.eigvals())

    def _cond(self) -> Tensor:
        return self._operator.cond()


def _concat_blocks(parts: list[Tensor], axis: int) -> Tensor:
    return tf.concat(broadcast_batch(parts), axis=axis)


class LinearOperatorBlockDiag(LinearOperator):
    """The block-diagonal operator `diag(A1, ..., AJ)`, as `tf.linalg.LinearOperatorBlockDiag`.

    `matmul` and `solve` take a dense tensor (TF also takes a list of per-block tensors; tapeshim does not).

    Args:
      operators: a non-empty list of operators of one dtype (the blocks).
      is_non_singular: hint (True when every block is non-singular).
      is_self_adjoint: hint (True when every block is self-adjoint).
      is_positive_definite: hint (True when every block is positive definite).
      is_square: hint (default True).
      name: the operator's name (default: the blocks' names joined by `_ds_`).

    Raises:
      TypeError: if the blocks' dtypes differ.
      ValueError: if `operators` is empty or the hints contradict the blocks'.
    """

    def __init__(
        self,
        operators: Sequence[LinearOperator],
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool = True,
        name: str | None = None,
    ) -> None:
        parameters = params(
            operators=operators,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        ops = _operator_list(
            operators,
            "Expected a non-empty list of operators. Found: {}",
            "Expected all operators to have the same dtype.  Found ",
        )
        self._operators = ops
        is_non_singular = _all_hint(
            ops, "is_non_singular", is_non_singular, "The direct sum of non-singular operators is always non-singular."
        )
        is_self_adjoint = _all_hint(
            ops, "is_self_adjoint", is_self_adjoint, "The direct sum of self-adjoint operators is always self-adjoint."
        )
        is_positive_definite = _all_hint(
            ops,
            "is_positive_definite",
            is_positive_definite,
            "The direct sum of positive definite operators is always positive definite.",
        )
        name = name or "_ds_".join(o.name for o in ops)
        super().__init__(
            ops[0].dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name, parameters
        )

    @property
    def operators(self) -> list:
        """The diagonal blocks."""
        return self._operators

    def _blocks(self, dims: str) -> list:
        return [getattr(o, dims) for o in self._operators]

    def _shape(self) -> TensorShape:
        batch = broadcast_shapes(*(o.batch_shape for o in self._operators))
        ranges, domains = self._blocks("range_dimension"), self._blocks("domain_dimension")
        range_ = None if None in ranges else sum(ranges)
        domain = None if None in domains else sum(domains)
        return batch.concatenate([range_, domain])

    def _each(self, method: str, **kwargs: Any) -> list:
        return [getattr(o, method)(**kwargs) for o in self._operators]

    def _linop_adjoint(self) -> LinearOperator:
        return LinearOperatorBlockDiag(
            self._each("adjoint"),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
        )

    def _linop_cholesky(self) -> LinearOperator:
        return LinearOperatorBlockDiag(
            self._each("cholesky"), is_non_singular=True, is_self_adjoint=None, is_square=True
        )

    def _linop_inverse(self) -> LinearOperator:
        return LinearOperatorBlockDiag(
            self._each("inverse"),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
        )

    def _pairwise(self, left: LinearOperator, right: LinearOperator, method: str) -> LinearOperator | None:
        if not (isinstance(left, LinearOperatorBlockDiag) and isinstance(right, LinearOperatorBlockDiag)):
            return None
        if len(left.operators) != len(right.operators):
            raise ValueError(
                "Can not efficiently multiply two `LinearOperatorBlockDiag`s together when number of blocks differ."
            )
        for a, b in zip(left.operators, right.operators):
            self._check_operators_agree(a, b, "x")
        return LinearOperatorBlockDiag(
            [getattr(a, method)(b) for a, b in zip(left.operators, right.operators)],
            is_non_singular=None,
            is_self_adjoint=None,
            is_positive_definite=None,
            is_square=True,
        )

    def _linop_matmul(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        return self._pairwise(left, right, "matmul") or super()._linop_matmul(left, right)

    def _linop_solve(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        return self._pairwise(left, right, "solve") or super()._linop_solve(left, right)

    def _split(self, x: Tensor, dims: list, axis: int) -> list:
        return tf.split(x, dims, axis=axis)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        dims = self._blocks("range_dimension" if adjoint else "domain_dimension")
        parts = self._split(x, dims, -1 if adjoint_arg else -2)
        results = [o.matmul(p, adjoint=adjoint, adjoint_arg=adjoint_arg) for o, p in zip(self._operators, parts)]
        return _concat_blocks(results, -2)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        dims = self._blocks("domain_dimension" if adjoint else "range_dimension")
        parts = self._split(rhs, dims, -1 if adjoint_arg else -2)
        results = [o.solve(p, adjoint=adjoint, adjoint_arg=adjoint_arg) for o, p in zip(self._operators, parts)]
        return _concat_blocks(results, -2)

    def _determinant(self) -> Tensor:
        result = self._operators[0].determinant()
        for operator in self._operators[1:]:
            result *= operator.determinant()
        return result

    def _log_abs_determinant(self) -> Tensor:
        result = self._operators[0].log_abs_determinant()
        for operator in self._operators[1:]:
            result += operator.log_abs_determinant()
        return result

    def _check_square_blocks(self, what: str) -> None:
        if not all(o.is_square for o in self._operators):
            raise NotImplementedError(f"`{what}` not implemented for an operator whose blocks are not square.")

    def _diag_part(self) -> Tensor:
        self._check_square_blocks("diag_part")
        return tf.squeeze(_concat_blocks([d[..., None] for d in self._each("diag_part")], -2), -1)

    def _trace(self) -> Tensor:
        self._check_square_blocks("trace")
        result = self._operators[0].trace()
        for operator in self._operators[1:]:
            result += operator.trace()
        return result

    def _to_dense(self) -> Tensor:
        blocks = broadcast_batch(self._each("to_dense"))
        domain = known(self.domain_dimension)
        rows, before = [], 0
        for block in blocks:
            batch_rows = list(block.shape[:-1])
            width = known(block.shape[-1])
            after = domain - before - width
            zeros_before = tf.zeros(batch_rows + [before], block.dtype)
            zeros_after = tf.zeros(batch_rows + [after], block.dtype)
            rows.append(tf.concat([zeros_before, block, zeros_after], axis=-1))
            before += width
        return tf.concat(rows, axis=-2)

    def _eigvals(self) -> Tensor:
        self._check_square_blocks("eigvals")
        return tf.squeeze(_concat_blocks([e[..., None] for e in self._each("eigvals")], -2), -1)


def _kron_vectors(a: Tensor, b: Tensor) -> Tensor:
    product = a[..., :, None] * b[..., None, :]
    shape = [known(d) for d in product.shape]
    return tf.reshape(product, shape[:-2] + [shape[-2] * shape[-1]])


class LinearOperatorKronecker(LinearOperator):
    """The Kronecker product `A1 ⊗ A2 ⊗ ... ⊗ AJ`, as `tf.linalg.LinearOperatorKronecker`.

    `matmul` multiplies by the dense product and `solve` by the Kronecker product of the factors' inverses
    (TF reshapes the argument factor by factor; the values agree to rounding).

    Args:
      operators: a non-empty list of operators of one dtype (the factors).
      is_non_singular: hint (True when every factor is non-singular).
      is_self_adjoint: hint (True when every factor is self-adjoint).
      is_positive_definite: hint (True when every factor is positive definite).
      is_square: hint.
      name: the operator's name (default: the factors' names joined by `_x_`).

    Raises:
      TypeError: if the factors' dtypes differ.
      ValueError: if `operators` is empty or the hints contradict the factors'.
    """

    def __init__(
        self,
        operators: Sequence[LinearOperator],
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str | None = None,
    ) -> None:
        parameters = params(
            operators=operators,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        ops = _operator_list(
            operators,
            "Argument `operators` must be a list of >=1 operators. Received: {}.",
            "Expected every operation in argument `operators` to have the same dtype. Received ",
        )
        self._operators = ops
        is_non_singular = _all_hint(
            ops,
            "is_non_singular",
            is_non_singular,
            "The Kronecker product of non-singular operators is always non-singular. Expected argument "
            "`is_non_singular` to be True. Received: {}.",
        )
        is_self_adjoint = _all_hint(
            ops,
            "is_self_adjoint",
            is_self_adjoint,
            "The Kronecker product of self-adjoint operators is always self-adjoint. Expected argument "
            "`is_self_adjoint` to be True. Received: {}.",
        )
        is_positive_definite = _all_hint(
            ops,
            "is_positive_definite",
            is_positive_definite,
            "The Kronecker product of positive-definite operators is always positive-definite. Expected argument "
            "`is_positive_definite` to be True. Received: {}.",
        )
        name = name or "_x_".join(o.name for o in ops)
        super().__init__(
            ops[0].dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name, parameters
        )

    @property
    def operators(self) -> list:
        """The factors, leftmost first."""
        return self._operators

    def _shape(self) -> TensorShape:
        batch = broadcast_shapes(*(o.batch_shape for o in self._operators))
        range_: int | None = 1
        domain: int | None = 1
        for o in self._operators:
            range_ = None if range_ is None or o.range_dimension is None else range_ * o.range_dimension
            domain = None if domain is None or o.domain_dimension is None else domain * o.domain_dimension
        return batch.concatenate([range_, domain])

    def _factors(self, method: str) -> LinearOperator:
        return LinearOperatorKronecker(
            [getattr(o, method)() for o in self._operators],
            is_non_singular=self.is_non_singular if method != "cholesky" else True,
            is_self_adjoint=self.is_self_adjoint if method != "cholesky" else None,
            is_positive_definite=self.is_positive_definite if method != "cholesky" else None,
            is_square=True,
        )

    def _linop_adjoint(self) -> LinearOperator:
        return self._factors("adjoint")

    def _linop_cholesky(self) -> LinearOperator:
        return self._factors("cholesky")

    def _linop_inverse(self) -> LinearOperator:
        return self._factors("inverse")

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        dense, x = broadcast_batch([self.to_dense(), x])
        return tf.matmul(dense, x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        inverse = LinearOperatorKronecker([o.inverse() for o in self._operators])
        return inverse.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self) -> Tensor:
        total = known(self.domain_dimension)
        result: Any = 1.0
        for o in self._operators:
            result = result * o.determinant() ** tf.cast(total / known(o.domain_dimension), o.dtype)
        return result

    def _log_abs_determinant(self) -> Tensor:
        total = known(self.domain_dimension)
        result: Any = 0.0
        for o in self._operators:
            result += o.log_abs_determinant() * tf.cast(total / known(o.domain_dimension), o.dtype)
        return result

    def _trace(self) -> Tensor:
        result: Any = 1.0
        for o in self._operators:
            result = result * o.trace()
        return result

    def _diag_part(self) -> Tensor:
        result = self._operators[0].diag_part()
        for o in self._operators[1:]:
            result = _kron_vectors(result, o.diag_part())
        return result

    def _to_dense(self) -> Tensor:
        result = self._operators[0].to_dense()
        for o in self._operators[1:]:
            factor = o.to_dense()
            product = result[..., :, None, :, None] * factor[..., None, :, None, :]
            shape = [known(d) for d in product.shape]
            result = tf.reshape(product, shape[:-4] + [shape[-4] * shape[-3], shape[-2] * shape[-1]])
        return result

    def _eigvals(self) -> Tensor:
        result = self._operators[0].eigvals()
        for o in self._operators[1:]:
            result = _kron_vectors(result, o.eigvals())
        return result
