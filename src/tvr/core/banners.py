"""Third-party banners kept out of a command's output.

Some native libraries print a line when they are imported, from C code, straight to a file
descriptor (pybullet writes "pybullet build time: ..." to file descriptor 2 when its extension
module loads). Python's `sys.stdout`/`sys.stderr` never see it, so neither redirecting those nor
silencing only descriptor 1 helps. `dropped_lines(pattern)` captures descriptors 1 and 2 while a
block runs, then writes back every line that does not match the pattern, in place, so nothing
else is lost: not our own output, not a warning, not an error message of the library. It works
whatever the descriptors are (a terminal, a pipe, a file) and in every process that runs it
(spawned workers import the library again, and run the block again).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from typing import IO, Any

# C's stdio flush: a banner that a library wrote with printf to a pipe or a file is still in C's
# buffer when the block ends; flushed before the descriptors are restored, it is captured too
try:
    _LIBC: ctypes.CDLL | None = ctypes.CDLL(None)
except (OSError, TypeError):  # pragma: no cover - no C library by that name (Windows)
    _LIBC = None


def _flush_c_stdio() -> None:
    if _LIBC is not None:
        with contextlib.suppress(AttributeError, OSError):
            _LIBC.fflush(None)


def _flush_python_streams() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(AttributeError, OSError, ValueError):
            if stream is not None:
                stream.flush()


@contextlib.contextmanager
def dropped_lines(pattern: str) -> Iterator[None]:
    """Drop the lines matching `pattern` (a regular expression, searched in each line) that
    anything in this process writes to file descriptors 1 or 2 while the block runs; write the
    other lines back where they were going when the block ends, even if it raises.

    Use it around an import whose C code prints a banner:

        with dropped_lines(r"^pybullet build time: "):
            import pybullet
    """
    drop = re.compile(pattern)
    _flush_python_streams()
    _flush_c_stdio()
    captured = _capture()
    try:
        yield
    finally:
        if captured:
            _flush_python_streams()
            _flush_c_stdio()
            _restore(captured, drop)


def _capture() -> list[tuple[int, int, IO[bytes]]]:
    """Point descriptors 1 and 2 at temporary files: (fd, a copy of the old fd, its file) each.
    If that fails (no room for a temporary file), nothing is captured and the banner shows."""
    captured: list[tuple[int, int, IO[bytes]]] = []
    try:
        for fd in (1, 2):
            try:
                saved = os.dup(fd)
            except OSError:  # the descriptor is not open: nothing to capture
                continue
            try:
                sink = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _restore
            except OSError:
                os.close(saved)
                raise
            captured.append((fd, saved, sink))
            os.dup2(sink.fileno(), fd)
    except OSError:
        _restore(captured, re.compile("(?!)"))
        return []
    return captured


def _restore(captured: list[tuple[int, int, IO[bytes]]], drop: re.Pattern[str]) -> None:
    """Put each descriptor back and write to it what it received, less the dropped lines."""
    for fd, saved, sink in captured:
        os.dup2(saved, fd)
        os.close(saved)
        sink.seek(0)
        data = sink.read()
        sink.close()
        kept = b"".join(
            line for line in data.splitlines(keepends=True)
            if not drop.search(line.decode("utf-8", "replace"))
        )  # fmt: skip
        with contextlib.suppress(OSError):  # a closed pipe: nobody is reading
            while kept:
                kept = kept[os.write(fd, kept) :]


#: the line pybullet's extension module prints to file descriptor 2 when it loads
PYBULLET_BANNER = r"^pybullet build time: "


def import_pybullet() -> Any:
    """The `pybullet` module, imported without its build-time banner: every importer of
    pybullet in tvr goes through here. A missing pybullet raises ModuleNotFoundError, as the
    import would (`tvr.cli.main` names its extra)."""
    with dropped_lines(PYBULLET_BANNER):
        import pybullet
    return pybullet
