"""JSON lines, JSON and text files written atomically; JSON lines read with errors that name the line."""

from __future__ import annotations

import errno
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from tvr.core.errors import InputError, UserError


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> int:
    """Write records as JSON lines atomically (a temporary file renamed into place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    n = 0
    try:
        with os.fdopen(fd, "wb") as f:
            for r in records:
                f.write(orjson.dumps(r, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n")
                n += 1
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


def write_json(path: str | Path, data: Any) -> None:
    """Write one JSON document atomically, indented for people to read."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON) for each non-empty line; a bad line raises InputError."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    with path.open("rb") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                yield lineno, orjson.loads(line)
            except orjson.JSONDecodeError as err:
                raise InputError(path, lineno, None, f"not valid JSON ({err})") from None


def write_text(path: Path, text: str) -> None:
    """Write a text file atomically (temporary file, then os.replace)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def prepare_output_folder(path: str | Path, option: str = "--out") -> Path:
    """Create output folder `path` (and its parents) and check that files can be written in it;
    a UserError naming `option` and the path if not (a file in the way, a read-only mount)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UserError(f"{option} {path}: cannot create the folder (a file of that name exists)")
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-probe.", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise UserError(f"{option} {path}: {describe_os_error(err, path)}") from None
    return path


def describe_os_error(err: OSError, path: str | Path | None = None) -> str:
    """Why writing at `path` failed, in a few words: 'cannot create the folder (Read-only file
    system)', 'cannot write /a/b (Permission denied)', 'a/b is a file, not a folder'."""
    reason = err.strerror or str(err)
    where = err.filename
    if where is not None and Path(where) != Path(path or ""):
        if err.errno == errno.EEXIST or err.errno == errno.ENOTDIR:
            return f"{where} is a file, not a folder"
        return f"cannot write {where} ({reason})"
    if err.errno == errno.EEXIST:
        return "cannot create the folder (a file of that name exists)"
    if err.errno == errno.ENOTDIR:
        return "cannot create the folder (a part of the path is a file)"
    return f"cannot create the folder ({reason})"


def write_file_bytes(path: Path, data: bytes) -> None:
    """Write a binary file atomically (temporary file in the same folder, then os.replace),
    readable by all like a normal file (mkstemp would leave it private)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
