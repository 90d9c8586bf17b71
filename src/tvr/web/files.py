"""The data files an app sends: real files under its data roots, of the kinds it expects."""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePath

from starlette.responses import FileResponse, PlainTextResponse, Response

__all__ = [
    "KINDS",
    "DataRoots",
    "FileRefused",
    "data_roots",
    "file_kind",
    "file_response",
    "safe_file",
]

# The rule (docs/web.md, "Files and hosts"). A route never takes a path from the request: it
# builds a path *relative to its data root* (a --data folder) and asks `safe_file`, which
#   1. refuses a relative path that is empty, absolute, holds a NUL or a backslash, or has an
#      empty, "." or ".." part (so no traversal can be spelled, encoded or not);
#   2. resolves it (every symlink followed, strict: it must exist) and refuses what does not lie
#      under one of the roots, themselves resolved: a symlink out of the folder, a symlink to a
#      directory outside it, a file in a symlinked directory outside it. A symlink that stays
#      inside the roots is followed (a dataset may link its own files);
#   3. refuses anything but a regular file (a directory, a link to one, a FIFO, a device);
#   4. refuses a file with more than one hard link unless every one of its names lies under the
#      roots. A hard link is a second name of the same file, not a pointer: no path tells which
#      name is the "original", so a file linked from /home/x/secret.png into the data folder
#      cannot be told from a data file by its path. Its count of names (st_nlink) can be: the
#      roots are walked once (without following symlinks) to count the names of each file with
#      st_nlink > 1, and the file is served only when all its names were found there. tvr's own
#      CLEVRER layout hard-links the shards' files into videos/ and annotations/ (both inside
#      the set), so its files pass; a link to anything outside fails. The walk happens only
#      when such a file is asked for, and is redone at most once a minute for a new name;
#   5. checks the kind by content (the first bytes), not by name: PNG, JPEG, MP4 (ISO BMFF
#      "ftyp"), WebM (EBML with the "webm" doc type), JSON (an object or array); the answer's
#      Content-Type is the one of the kind found.
# Every refusal is a 404 to the client (it learns nothing about the file system) and a warning in
# the server's log naming the file and the reason, for the operator.
# What is not caught: a path swapped for a link between the check and the sending (a race won
# only by someone writing into the data folder during the request); data folders must be
# writable only by people trusted with the server's own files.

log = logging.getLogger(__name__)

#: the kinds of file an app may send, with the Content-Type each is sent as
KINDS: Mapping[str, str] = {
    "png": "image/png",
    "jpeg": "image/jpeg",
    "mp4": "video/mp4",
    "webm": "video/webm",
    "json": "application/json",
}
#: how many first bytes the content check reads
HEAD_BYTES = 4096
#: the walk counting hard links' names is redone at most this often (seconds)
RELINK_SECONDS = 60.0


class FileRefused(LookupError):
    """A file an app may not send; `reason` says why (for the log, never for the client)."""

    def __init__(self, relative: object, reason: str) -> None:
        super().__init__(f"{relative}: {reason}")
        self.relative = relative
        self.reason = reason


def file_kind(head: bytes, kinds: Iterable[str] = KINDS) -> str | None:
    """The kind among `kinds` that the first bytes `head` of a file are, or None."""
    for kind in kinds:
        if kind not in KINDS:
            raise ValueError(f"unknown file kind {kind!r} (known: {', '.join(KINDS)})")
        if _is(kind, head):
            return kind
    return None


def _is(kind: str, head: bytes) -> bool:
    if kind == "png":
        return head.startswith(b"\x89PNG\r\n\x1a\n")
    if kind == "jpeg":
        return head.startswith(b"\xff\xd8\xff")
    if kind == "mp4":
        return head[4:8] == b"ftyp"
    if kind == "webm":
        # an EBML header whose DocType (element 0x4282) is "webm"
        return (
            head.startswith(b"\x1a\x45\xdf\xa3")
            and b"\x42\x82" in head[:64]
            and b"webm" in head[:64]
        )
    # json: an object or an array, after an optional UTF-8 BOM and white space
    return head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")[:1] in (b"{", b"[")


def _parts(relative: str | PurePath) -> tuple[str, ...]:
    """The parts of a relative path, or FileRefused for one that could leave its root."""
    text = os.fspath(relative)
    if not isinstance(text, str):
        raise FileRefused(relative, "not a text path")
    if not text or "\x00" in text or "\\" in text:
        raise FileRefused(relative, "empty, or holds a NUL or a backslash")
    if text.startswith("/"):
        raise FileRefused(relative, "an absolute path")
    parts = tuple(text.split("/"))
    if any(p in ("", ".", "..") for p in parts):
        raise FileRefused(relative, "an empty, '.' or '..' part")
    return parts


class DataRoots:
    """The data roots of one app, resolved once, and the count of in-root names of each file
    with several hard links (made when first needed)."""

    def __init__(self, roots: Iterable[str | os.PathLike[str]]) -> None:
        resolved: list[Path] = []
        for root in roots:
            try:
                real = Path(root).resolve(strict=True)
            except OSError:
                continue  # a root that is gone serves nothing
            if real not in resolved:
                resolved.append(real)
        #: the resolved roots, in the order given (the first is the one paths are relative to)
        self.roots: tuple[Path, ...] = tuple(resolved)
        self._names: Counter[tuple[int, int]] | None = None
        self._counted_at = 0.0
        self._lock = threading.Lock()

    def file(self, relative: str | PurePath, kinds: Sequence[str] = ()) -> tuple[Path, str | None]:
        """(the real path, the kind found) of `relative` under the first root, by the module's
        rule; FileRefused otherwise. With no `kinds` the content is not checked (kind None)."""
        parts = _parts(relative)
        if not self.roots:
            raise FileRefused(relative, "no data root to serve from")
        candidate = self.roots[0].joinpath(*parts)
        try:
            real = candidate.resolve(strict=True)
        except (OSError, RuntimeError):  # missing, a symlink loop, a name too long
            raise FileRefused(relative, "no such file") from None
        if not any(real.is_relative_to(root) for root in self.roots):
            raise FileRefused(relative, f"resolves to {real}, outside the data folders")
        try:
            fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
        except OSError as err:
            raise FileRefused(relative, f"cannot be opened ({err.strerror})") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise FileRefused(relative, "not a regular file")
            if st.st_nlink > 1 and self.names(st) < st.st_nlink:
                raise FileRefused(
                    relative,
                    f"has {st.st_nlink} hard links, not all of them in the data folders "
                    "(copy the file instead of linking it)",
                )
            head = os.read(fd, HEAD_BYTES) if kinds else b""
        finally:
            os.close(fd)
        kind = file_kind(head, kinds) if kinds else None
        if kinds and kind is None:
            raise FileRefused(relative, f"its content is none of {', '.join(kinds)}")
        return real, kind

    def names(self, st: os.stat_result) -> int:
        """How many names under the roots the file of `st` has (walking the roots when the last
        count misses some and is older than RELINK_SECONDS)."""
        key = (st.st_dev, st.st_ino)
        with self._lock:
            stale = time.monotonic() - self._counted_at >= RELINK_SECONDS
            if self._names is None or (self._names[key] < st.st_nlink and stale):
                self._names = self._count()
                self._counted_at = time.monotonic()
            return self._names[key]

    def _count(self) -> Counter[tuple[int, int]]:
        names: Counter[tuple[int, int]] = Counter()
        # a root inside another root is walked with it, not twice
        tops = [
            r for r in self.roots if not any(r != o and r.is_relative_to(o) for o in self.roots)
        ]
        for top in tops:
            for folder, _dirs, files in os.walk(top, followlinks=False):
                for name in files:
                    try:
                        st = os.lstat(os.path.join(folder, name))
                    except OSError:
                        continue
                    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                        names[(st.st_dev, st.st_ino)] += 1
        return names


_ROOTS: dict[tuple[str, ...], DataRoots] = {}
_ROOTS_LOCK = threading.Lock()


def data_roots(roots: DataRoots | Iterable[str | os.PathLike[str]]) -> DataRoots:
    """`roots` as DataRoots (one per tuple of roots, kept: their hard-link count is reused)."""
    if isinstance(roots, DataRoots):
        return roots
    key = tuple(os.fspath(r) for r in roots)
    with _ROOTS_LOCK:
        if key not in _ROOTS:
            _ROOTS[key] = DataRoots(key)
        return _ROOTS[key]


def safe_file(
    roots: DataRoots | Iterable[str | os.PathLike[str]],
    relative: str | PurePath,
    kinds: Sequence[str] = (),
) -> Path:
    """The real path of `relative` (relative to the first of `roots`) when the module's rule lets
    it be sent: under the roots once resolved, a regular file, no hard link outside, and (given
    `kinds`) of one of `kinds` by content; FileRefused otherwise."""
    return data_roots(roots).file(relative, kinds)[0]


def file_response(
    roots: DataRoots | Iterable[str | os.PathLike[str]],
    relative: str | PurePath,
    kinds: Sequence[str],
    headers: Mapping[str, str] | None = None,
    missing: str = "no such file",
) -> Response:
    """The file `relative` (under the first of `roots`) as a FileResponse with the Content-Type of
    the kind its content is, or a 404 saying `missing` when `safe_file` refuses it (the reason
    goes to the log)."""
    if not kinds:
        raise ValueError("file_response needs the kinds of file it may send")
    try:
        real, kind = data_roots(roots).file(relative, kinds)
    except FileRefused as err:
        log.warning("refused to send %s: %s", relative, err.reason)
        return PlainTextResponse(missing, status_code=404)
    assert kind is not None
    return FileResponse(real, media_type=KINDS[kind], headers=dict(headers or {}))
