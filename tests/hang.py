"""A guard against a hang (not a speed measure): the block fails if it is still running after
`seconds` (SIGALRM, main thread, POSIX)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def no_hang(seconds: int) -> Iterator[None]:
    def hung(*_: object) -> None:
        pytest.fail(f"still running after {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
