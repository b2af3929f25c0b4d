"""The machinery of `tf.raw_ops`: a raw op is a keyword-only call with TF's argument names and defaults.

`define(table, "MatMul", "a b", impl, transpose_a=False)` adds `MatMul(a, b, transpose_a=False, name=None)` to
`table`: its signature (what `inspect.signature` shows) is TF's, a positional argument raises TF's `TypeError`, a
missing or unknown keyword raises Python's, and `impl` receives every argument but `name` by keyword.
"""

from __future__ import annotations

import collections
import inspect
from typing import Any, Callable

RawOp = Callable[..., Any]


def tf_module() -> Any:
    """The `tapeshim` package (imported lazily: it imports this package's namespace)."""
    import tapeshim

    return tapeshim


def keywords_only(op_name: str, signature: inspect.Signature, fn: Callable[..., Any]) -> RawOp:
    """`fn` called with keyword arguments only, bound against `signature` (which it shows).

    Args:
        op_name: TF's op name (the raw op's `__name__`).
        signature: the raw op's signature (TF's names and defaults, ending in `name=None`).
        fn: the implementation; it receives every argument but `name`, by keyword.

    Returns:
        The raw op.
    """
    keys = list(signature.parameters)

    def raw_op(*args: Any, **kwargs: Any) -> Any:
        if args:
            raise TypeError(
                f"{op_name} only takes keyword args (possible keys: {keys}). Please pass these args as kwargs instead."
            )
        bound = signature.bind(**kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop("name", None)
        return fn(**arguments)

    raw_op.__name__ = raw_op.__qualname__ = op_name
    raw_op.__doc__ = f"`tf.raw_ops.{op_name}{signature}`: keyword arguments only."
    raw_op.__signature__ = signature  # type: ignore[attr-defined]
    return raw_op


def define(table: dict[str, RawOp], op_name: str, params: str, fn: Callable[..., Any], **defaults: Any) -> None:
    """Adds the raw op `op_name` to `table`.

    Args:
        table: the table (op name -> raw op).
        op_name: TF's op name.
        params: the required arguments' names, space-separated, in TF's order.
        fn: the implementation (see `keywords_only`).
        **defaults: the optional arguments with TF's defaults, in TF's order.
    """
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    parameters = [inspect.Parameter(p, kind) for p in params.split()]
    parameters += [inspect.Parameter(k, kind, default=v) for k, v in defaults.items()]
    parameters.append(inspect.Parameter("name", kind, default=None))
    table[op_name] = keywords_only(op_name, inspect.Signature(parameters), fn)


def named_tuple(op_name: str, fields: str) -> Any:
    """TF's output tuple of a raw op with several named outputs (`TopKV2(values, indices)`)."""
    return collections.namedtuple(op_name, fields.split())
