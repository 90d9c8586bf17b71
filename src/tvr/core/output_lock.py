"""One writer per output: an exclusive kernel lock per output folder or file, held until the command ends, leaving no file behind.

The lock of an output OUT (a folder or a file) is `flock(2)` on the hidden file `.NAME.tvr-lock`
beside it (NAME is OUT's name), so an output is locked before it exists and whether or not it is
later replaced by a rename (writers build in a temporary file or folder and rename it into place;
a lock on OUT's own inode would not survive that). Every command takes the lock of its `--out`
(and of a training run's OUTPUT_DIR/RUN_NAME) before it reads its inputs (`tvr.cli.main`), and
every writer takes it again when it prepares its folder (`prepare_output_folder`, a training
run's folder in `fit_run`), so library calls are covered too. A second run into the same output
is refused at once in one line naming the holder's PID (non-blocking: nobody waits).

The lock file exists only while its holder runs: releasing a lock (the end of a command, however
it ends short of a kill, or `atexit` for library use) unlinks the file and then closes it, so
after the command, refused or not, succeeded or failed, nothing is left beside the output (no
`.eval.tvr-lock` piling up in `git status`). Removing a lock file another process may have open
is safe because of two rules:

- only the holder unlinks, and it unlinks while it still holds the lock (checking first that the
  path is still its own file);
- a taker that got the lock checks that the path still names the file it locked (same device and
  inode, `_same_file`); if not, the holder unlinked it between the taker's `open` and `flock`, and
  the taker opens the path again (creating a fresh file) and locks that.

So the race "A holds; B opens the file; A unlinks and closes; B's flock succeeds on the unlinked
file" ends with B retrying on a new file, never with two holders: every holder holds the lock of
the file the path names. (B's flock before A closes fails, and B is refused: A was still
writing, which is the truth.) A holder killed by a signal that runs no clean-up (SIGKILL) leaves
its file, unlocked: the kernel released the lock when the process died, so the next run into that
output takes the file over and removes it when it ends; a stale lock never needs guessing or
cleaning. A forked child inherits the lock but never removes the parent's file (the holder's PID
is checked).

The lock is re-entrant within a process and is released by `release` / `release_all` (the CLI
calls it when a command ends) or at interpreter exit.
"""

from __future__ import annotations

import atexit
import contextlib
import os
from pathlib import Path

from tvr.core.errors import UserError

try:  # POSIX; elsewhere folders are not locked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_SUFFIX = ".tvr-lock"

#: output -> (fd of its locked lock file, that file's path, PID of the process that took it)
_HELD: dict[Path, tuple[int, Path, int]] = {}


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
        except OSError:  # a file system without locks: go on unlocked, leaving no file
            with contextlib.suppress(OSError):
                os.unlink(path)
            os.close(fd)
            return
        if _same_file(fd, path):
            break
        os.close(fd)  # its holder removed it as we opened it: lock the new one
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _HELD[key] = (fd, path, os.getpid())


def _same_file(fd: int, path: Path) -> bool:
    try:
        a, b = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def holds(output: str | Path) -> bool:
    """Whether this process holds the lock of `output`."""
    return _key(Path(output)) in _HELD


def _unlock(key: Path, held: tuple[int, Path, int]) -> None:
    """Remove a held lock's file, then close it (the order that makes removing safe: see the
    module docstring). A forked child closes its copy and leaves the parent's file alone."""
    fd, path, pid = held
    if pid == os.getpid() and _same_file(fd, path):
        with contextlib.suppress(OSError):
            os.unlink(path)
    os.close(fd)


def release(output: str | Path) -> None:
    """Release the lock of `output` if this process holds it."""
    key = _key(Path(output))
    held = _HELD.pop(key, None)
    if held is not None:
        _unlock(key, held)


def release_all() -> None:
    """Release every lock this process holds (the end of a command)."""
    while _HELD:
        _unlock(*_HELD.popitem())


atexit.register(release_all)  # library use: no lock file outlives the interpreter


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None
    except OSError:
        return None
