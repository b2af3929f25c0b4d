"""A recorded op (`Node`) and its identity (`OpKey`).

A lazy tensor points at the `Node` that computes it. The node's `key` says
which op it is: compiled programs and per-op kernels are cached by it, so two
nodes with equal keys must compute the same function of their inputs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Collection, Hashable, Sequence

if TYPE_CHECKING:
    from tapeshim._src.state import Epoch


class OpKey(tuple):
    """A recorded node's identity: `(TF op type, *identity)`, e.g. `("GatherV2", static arguments)`.

    It is a tuple, so it hashes and compares exactly as the plain tuple of its
    fields does: cache keys built from it discriminate as before. Code that
    needs the op's TF type asks `op_type_of(key)` (or `Node.op_type`) instead
    of indexing the key.
    """

    __slots__ = ()

    def __new__(cls, op_type: str, *identity: Hashable) -> "OpKey":
        return tuple.__new__(cls, (op_type, *identity))


def op_type_of(key: Hashable) -> str | None:
    """The TF op type named by a node key (an `OpKey`, or a plain tuple of the same shape); None if it names none."""
    if isinstance(key, tuple) and key and isinstance(key[0], str):
        return key[0]
    return None


def static_of(key: Hashable) -> tuple:
    """The static arguments of an op-table node key (`()` for keys without them)."""
    if isinstance(key, tuple) and len(key) > 1 and isinstance(key[1], tuple):
        return key[1]
    return ()


class Node:
    """One recorded op: a pure JAX function of its input tensors' values.

    Attributes:
      fn: `fn(*arrays) -> tuple of arrays`, the op with its static arguments bound.
      key: hashable identity of `fn` (an `OpKey`: op type and static
        arguments), part of the compiled-program cache key.
      inputs: the input tensors.
      out_tids: the ids of the output tensors.
      deps: for ops built from whole programs (a recorded gradient, a function
        call), the input positions each output depends on differentiably;
        None means every output depends on every input.
      owner: the `state.Epoch` of the recording that made it, if any.
    """

    __slots__ = ("fn", "key", "inputs", "out_tids", "deps", "owner")

    def __init__(
        self,
        fn: Callable[..., tuple],
        key: Hashable,
        inputs: tuple,
        out_tids: tuple,
        deps: Sequence[Collection[int]] | None = None,
        owner: Epoch | None = None,
    ) -> None:
        self.fn = fn
        self.key = key
        self.inputs = inputs
        self.out_tids = out_tids
        self.deps = deps
        self.owner = owner

    @property
    def op_type(self) -> str | None:
        """The TF op type of the node (`"MatMul"`), None for a key that names none."""
        return op_type_of(self.key)
