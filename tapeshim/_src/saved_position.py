"""A host-side position (an iterator's, a random generator's) that checkpoints save in a variable.

The owner keeps its position in Python (ints) and makes the variable only when a checkpoint (or the
user, `tf.random.Generator.state`) asks for it. A restore or an assignment replaces the variable's value;
`changed` tells the owner so, and `take` hands it the new value, before the owner goes on.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class SavedPosition:
    """The variable holding an owner's position, made on first use.

    Args:
      name: the variable's name.
    """

    __slots__ = ("_name", "_variable", "_seen")

    def __init__(self, name: str) -> None:
        self._name = name
        self._variable: Any = None
        self._seen: Any = None  # the variable's value as the owner last set or took it

    def changed(self) -> bool:
        """Whether a restore or an assignment gave the variable another value since the owner last looked."""
        return self._variable is not None and self._variable._value is not self._seen

    def take(self) -> np.ndarray:
        """The variable's new value (after `changed`), now seen."""
        self._seen = self._variable._value
        return np.asarray(self._seen)

    def variable(self, current: np.ndarray) -> Any:
        """The variable, holding `current` (the owner's position; take a `changed` value first)."""
        from tapeshim._src.variable import Variable  # import cycle: variable -> ops -> ... -> the owners

        if self._variable is None:
            self._variable = Variable(current, trainable=False, name=self._name)
        else:
            self._variable.assign(current)
        self._seen = self._variable._value
        return self._variable
