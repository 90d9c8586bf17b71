"""The cyclic garbage collector paused while a reader builds many objects that hold no cycles.

A reader that builds a large structure (a question file's videos, a submission, a list of
samples) allocates hundreds of thousands of lists, dicts and dataclasses that all stay alive.
CPython's collector is triggered by allocations and walks the young objects each time, and
every so often all of them: on CLEVRER's 5,000-video question file that cost three times the
parse itself. Parsed JSON and the records made from it have no reference cycles, so nothing is
lost by pausing the collector meanwhile; reference counting still frees everything that dies.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic collector off inside the block, back as it was after (nesting is fine)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def without_gc(fn: F) -> F:
    """`fn` run inside `paused_gc` (for a function that returns what it read, not a generator)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with paused_gc():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
