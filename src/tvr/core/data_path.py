"""`--data PATH`, a dataset folder or its reference file, resolved alike for every benchmark."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

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
