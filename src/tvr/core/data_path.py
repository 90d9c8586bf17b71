"""`--data PATH`, a dataset folder or its reference file, resolved alike for every benchmark."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError


def reference_file(
    path: str | Path, candidates: Sequence[str], *, split: str | None = None, option: str = "--data"
) -> Path:
    """The reference file that `path` names: `path` itself if it is a file, else the first of
    `candidates` (paths relative to the folder; "{split}" stands for `split`) that exists in the
    folder `path`. A UserError names `option`, the path and what was looked for otherwise.

    Example: reference_file("data/ev", ["samples.jsonl", "{split}/samples.jsonl"], split="test")
    is data/ev/test/samples.jsonl for a `tvr generate` folder."""
    path = Path(path)
    if path.is_file():
        return path
    if not path.exists():
        raise UserError(f"{option} {path}: no such file or folder")
    if not path.is_dir():
        raise UserError(f"{option} {path}: neither a file nor a folder")
    names = [c.format(split=split) for c in candidates if split is not None or "{split}" not in c]
    for name in names:
        if (path / name).is_file():
            return path / name
    looked = ", ".join(names) or "(nothing: give a file)"
    raise UserError(f"{option} {path}: a folder without its reference file (looked for {looked})")


# --- which benchmark a --data PATH is: each benchmark registers how it recognizes its data ------
#: benchmark -> recognize(path, first record of a file or None) -> bool
_RECOGNIZERS: dict[str, Callable[[Path, Any], bool]] = {}


def register_recognizer(benchmark: str, recognize: Callable[[Path, Any], bool]) -> None:
    """How `benchmark` knows its data (a plugin module registers it): `recognize(path, first)`
    looks at the folder `path` (its own files) or, for a file, at `first`, the file's first
    record (a JSON line, or a JSON list's first element; None where it has none)."""
    _RECOGNIZERS[benchmark] = recognize


def first_record(path: Path) -> Any:
    """The first record of a JSON or JSON lines file, or None (read leniently: this only guesses
    the benchmark; the benchmark's own reader then checks the file)."""
    import json

    try:
        with path.open("rb") as f:
            head = f.read(1 << 20)
    except OSError:
        return None
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    try:
        if text.startswith(b"["):
            value = json.loads(path.read_bytes())
            return value[0] if isinstance(value, list) and value else None
        return json.loads(text.split(b"\n", 1)[0])
    except (ValueError, OSError, UnicodeDecodeError):
        return None


def recognized_benchmarks(path: str | Path) -> list[str]:
    """The benchmarks whose registered recognizer takes `path` (the plugins loaded first)."""
    from tvr.core.plugins import load_benchmarks

    load_benchmarks()
    path = Path(path)
    first = first_record(path) if path.is_file() else None
    found = []
    for name, recognize in sorted(_RECOGNIZERS.items()):
        try:
            if recognize(path, first):
                found.append(name)
        except (OSError, ValueError, TypeError, KeyError):
            continue
    return found
