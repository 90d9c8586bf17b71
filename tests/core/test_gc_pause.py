"""`tvr.core.gc_pause`: the collector is off inside, back as it was after, also on an error and
when nested, and a paused reader returns what it read."""

from __future__ import annotations

import gc

import pytest

from tvr.core.gc_pause import paused_gc, without_gc


def test_paused_and_restored_also_nested_and_on_error():
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block leaves the outer pause alone
    assert gc.isenabled()
    with pytest.raises(RuntimeError), paused_gc():
        raise RuntimeError
    assert gc.isenabled()


def test_left_off_when_it_was_off():
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_paused_function_returns_and_keeps_its_name():
    @without_gc
    def read(a, *, b):
        """Doc."""
        return (a, b, gc.isenabled())

    assert read(1, b=2) == (1, 2, False)
    assert read.__name__ == "read" and read.__doc__ == "Doc."
    assert gc.isenabled()
