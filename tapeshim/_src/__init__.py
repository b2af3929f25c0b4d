"""tapeshim's private implementation. Import from `tapeshim` instead.

`tensor` is imported first: the op table needs `Tensor`, and `Tensor`'s
operators need the op table.
"""

from tapeshim._src import tensor  # noqa: F401
