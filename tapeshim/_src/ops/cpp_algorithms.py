"""The C++ standard library's heap and sort algorithms (as GCC's libstdc++, which TF's Linux builds use), and
TF's `gtl::TopN` over them (TF 2.21's `tensorflow/core/lib/gtl/top_n.h`, whose heap holds exactly `limit`
elements).

A kernel that keeps or sorts elements by a comparison that ties (TF's CTC beam search ranks beams by their
probabilities) returns tied elements in the order these algorithms leave them, which is neither stable nor
Python's. Each function here moves the elements of a list exactly as its C++ namesake moves them, with the
same calls of the comparison `greater(a, b)` (the "less" argument of the C++ function: TF's `TopN` passes a
greater-than comparison, so its heaps keep the smallest element first and its sorts are descending).
"""

from __future__ import annotations

from typing import Any, Callable

Compare = Callable[[Any, Any], bool]
_THRESHOLD = 16  # libstdc++'s `_S_threshold`: introsort leaves runs this short to insertion sort


def _parent(index: int) -> int:
    return (index - 1) // 2 if index > 0 else 0  # (C++'s (i - 1) / 2 truncates toward 0)


def _push_heap(items: list, first: int, hole: int, top: int, value: Any, comp: Compare) -> None:
    parent = _parent(hole)
    while hole > top and comp(items[first + parent], value):
        items[first + hole] = items[first + parent]
        hole = parent
        parent = _parent(hole)
    items[first + hole] = value


def _adjust_heap(items: list, first: int, hole: int, length: int, value: Any, comp: Compare) -> None:
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if comp(items[first + child], items[first + child - 1]):
            child -= 1
        items[first + hole] = items[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        items[first + hole] = items[first + child - 1]
        hole = child - 1
    _push_heap(items, first, hole, top, value, comp)


def _pop_heap_into(items: list, first: int, last: int, result: int, comp: Compare) -> None:
    value = items[result]
    items[result] = items[first]
    _adjust_heap(items, first, 0, last - first, value, comp)


def make_heap(items: list, first: int, last: int, comp: Compare) -> None:
    """`std::make_heap(first, last, comp)`."""
    length = last - first
    if length < 2:
        return
    parent = (length - 2) // 2
    while True:
        _adjust_heap(items, first, parent, length, items[first + parent], comp)
        if parent == 0:
            return
        parent -= 1


def push_heap(items: list, first: int, last: int, comp: Compare) -> None:
    """`std::push_heap(first, last, comp)`: the element at `last - 1` joins the heap before it."""
    _push_heap(items, first, last - first - 1, 0, items[last - 1], comp)


def pop_heap(items: list, first: int, last: int, comp: Compare) -> None:
    """`std::pop_heap(first, last, comp)`: the heap's first element moves to `last - 1`."""
    if last - first > 1:
        _pop_heap_into(items, first, last - 1, last - 1, comp)


def sort_heap(items: list, first: int, last: int, comp: Compare) -> None:
    """`std::sort_heap(first, last, comp)`."""
    while last - first > 1:
        last -= 1
        _pop_heap_into(items, first, last, last, comp)


def _insertion_sort(items: list, first: int, last: int, comp: Compare) -> None:
    if first == last:
        return
    for i in range(first + 1, last):
        if comp(items[i], items[first]):
            value = items[i]
            items[first + 1 : i + 1] = items[first:i]
            items[first] = value
        else:
            _unguarded_linear_insert(items, i, comp)


def _unguarded_linear_insert(items: list, last: int, comp: Compare) -> None:
    value = items[last]
    before = last - 1
    while comp(value, items[before]):
        items[last] = items[before]
        last = before
        before -= 1
    items[last] = value


def _move_median_to_first(items: list, result: int, a: int, b: int, c: int, comp: Compare) -> None:
    if comp(items[a], items[b]):
        if comp(items[b], items[c]):
            pick = b
        elif comp(items[a], items[c]):
            pick = c
        else:
            pick = a
    elif comp(items[a], items[c]):
        pick = a
    elif comp(items[b], items[c]):
        pick = c
    else:
        pick = b
    items[result], items[pick] = items[pick], items[result]


def _unguarded_partition(items: list, first: int, last: int, pivot: int, comp: Compare) -> int:
    while True:
        while comp(items[first], items[pivot]):
            first += 1
        last -= 1
        while comp(items[pivot], items[last]):
            last -= 1
        if not first < last:
            return first
        items[first], items[last] = items[last], items[first]
        first += 1


def _introsort_loop(items: list, first: int, last: int, depth: int, comp: Compare) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:  # std::__partial_sort(first, last, last): a heap sort
            make_heap(items, first, last, comp)
            sort_heap(items, first, last, comp)
            return
        depth -= 1
        _move_median_to_first(items, first, first + 1, first + (last - first) // 2, last - 1, comp)
        cut = _unguarded_partition(items, first + 1, last, first, comp)
        _introsort_loop(items, cut, last, depth, comp)
        last = cut


def sort(items: list, comp: Compare) -> None:
    """`std::sort(items.begin(), items.end(), comp)`: introsort, then insertion sort."""
    n = len(items)
    if n == 0:
        return
    _introsort_loop(items, 0, n, 2 * (n.bit_length() - 1), comp)
    if n > _THRESHOLD:
        _insertion_sort(items, 0, _THRESHOLD, comp)
        for i in range(_THRESHOLD, n):
            _unguarded_linear_insert(items, i, comp)
    else:
        _insertion_sort(items, 0, n, comp)


class TopN:
    """TF's `gtl::TopN<T, Cmp>`: the `limit` greatest elements pushed, by `greater`.

    It keeps TF's three states (unordered, bottom known, a heap once more than `limit` were pushed) and moves
    elements as TF's does, so that `extract` orders tied elements as TF's `Extract`.
    """

    _UNORDERED, _BOTTOM_KNOWN, _HEAP_SORTED = range(3)

    def __init__(self, limit: int, greater: Compare) -> None:
        self.limit = limit
        self.greater = greater
        self.elements: list = []
        self.state = self._UNORDERED

    def size(self) -> int:
        """How many elements it holds (at most `limit`)."""
        return len(self.elements)

    def push(self, value: Any) -> None:
        """Adds `value`, dropping the smallest element once there are more than `limit`."""
        if self.limit == 0:
            return
        items, greater = self.elements, self.greater
        if self.state != self._HEAP_SORTED:
            items.append(value)  # (one past `limit` for a moment: the smallest is then dropped)
            if len(items) == self.limit + 1:
                make_heap(items, 0, len(items), greater)
                pop_heap(items, 0, len(items), greater)
                items.pop()
                self.state = self._HEAP_SORTED
            elif self.state != self._UNORDERED and not greater(items[-1], items[0]):
                items[0], items[-1] = items[-1], items[0]
        elif greater(value, items[0]):
            pop_heap(items, 0, len(items), greater)
            items[-1] = value
            push_heap(items, 0, len(items), greater)

    def peek_bottom(self) -> Any:
        """The smallest element held (found by a scan the first time, as TF's)."""
        items = self.elements
        if self.state == self._UNORDERED:
            smallest = 0
            for i in range(1, len(items)):
                if self.greater(items[smallest], items[i]):
                    smallest = i
            if smallest != 0:
                items[0], items[smallest] = items[smallest], items[0]
            self.state = self._BOTTOM_KNOWN
        return items[0]

    def extract(self) -> list:
        """The elements, greatest first (TF's `Extract`; `reset` before pushing again)."""
        out, self.elements = self.elements, []
        if self.state != self._HEAP_SORTED:
            sort(out, self.greater)
        else:
            sort_heap(out, 0, len(out), self.greater)
        return out

    def unsorted(self) -> list:
        """The elements held, in their stored order (TF's `unsorted_begin()` to `unsorted_end()`)."""
        return list(self.elements)

    def reset(self) -> None:
        """Empties it."""
        self.elements = []
        self.state = self._UNORDERED
