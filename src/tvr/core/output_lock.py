"""One writer per output: an exclusive kernel lock beside each output folder or file, held until the command ends.

The lock of an output OUT (a folder or a file) is `flock(2)` on the hidden file `.NAME.tvr-lock`
beside it (NAME is OUT's name), so an output is locked before it exists; the lock file is removed
again when the command made no output, so a refused or failed run leaves nothing behind. Every command takes the lock of its `--out` before it reads its inputs (`tvr.cli.main`),
and every writer takes it again when it prepares its folder (`prepare_output_folder`, a training
run's folder in `fit_run`), so library calls are covered too. A second run into the same output
is refused in one line naming the holder's PID. The kernel releases the lock when the holder
exits, however it ends (kill -9 included): a stale lock never needs guessing or cleaning. Beside
an output that exists the lock file stays (it holds the last holder's PID); it is never read as
data.

The lock is re-entrant within a process and is released by `release_all` (the CLI calls it when
a command ends) or at process exit.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from tvr.core.errors import UserError

try:  # POSIX; elsewhere folders are not locked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_SUFFIX = ".tvr-lock"

_HELD: dict[Path, int] = {}


def _key(output: Path) -> Path:
    return Path(os.path.realpath(output))


def lock_path(output: str | Path) -> Path:
    """The lock file of an output folder or file: `.NAME.tvr-lock` beside it."""
    key = _key(Path(output))
    return key.parent / f".{key.name}{LOCK_SUFFIX}"


def lock_output(output: str | Path) -> None:
    """Take the exclusive lock of an output folder or file for this process; a UserError naming
    the output and the holder's PID if another process holds it. An output whose parent folder
    does not exist yet is locked later, when its writer creates it (`prepare_output_folder`)."""
    key = _key(Path(output))
    if key in _HELD or fcntl is None or not key.parent.is_dir():
        return
    path = lock_path(key)
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError:
            return  # an output that cannot be written fails with its own message where written
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            who = f"PID {holder}" if holder else "another process"
            raise UserError(
                f"{output}: another tvr run is writing it ({who}); wait for it to end or stop "
                "it, then run again"
            ) from None
        except OSError:
            os.close(fd)  # a file system without locks: go on unlocked
            return
        if _same_file(fd, path):
            break
        os.close(fd)  # its holder removed it as we opened it: lock the new one
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _HELD[key] = fd


def _same_file(fd: int, path: Path) -> bool:
    try:
        a, b = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def holds(output: str | Path) -> bool:
    """Whether this process holds the lock of `output`."""
    return _key(Path(output)) in _HELD


def _unlock(key: Path, fd: int) -> None:
    """Close a held lock; its file goes too when the output was never made (a refused or
    failed command leaves nothing behind). Removed while still locked, so that a process
    that opened the old file sees it is gone (`_same_file`) and locks a new one."""
    if not os.path.lexists(key):
        with contextlib.suppress(OSError):
            os.unlink(lock_path(key))
    os.close(fd)


def release(output: str | Path) -> None:
    """Release the lock of `output` if this process holds it."""
    key = _key(Path(output))
    fd = _HELD.pop(key, None)
    if fd is not None:
        _unlock(key, fd)


def release_all() -> None:
    """Release every lock this process holds (the end of a command)."""
    while _HELD:
        _unlock(*_HELD.popitem())


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None
    except OSError:
        return None
