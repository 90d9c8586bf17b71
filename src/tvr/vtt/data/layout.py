"""Where a VTT release folder keeps its parts: the records file `meta/vtt.jsonl` and `states/`."""

from __future__ import annotations

from pathlib import Path

from tvr.core.errors import UserError

RECORDS = Path("meta") / "vtt.jsonl"
STATES = Path("states")


def records_file(data: str | Path) -> Path:
    """The records file of `data`: a release folder (its meta/vtt.jsonl) or the file itself."""
    data = Path(data)
    if data.is_dir():
        path = data / RECORDS
        if not path.is_file():
            raise UserError(f"{data}: no {RECORDS} in this folder (a VTT release folder has one)")
        return path
    if not data.is_file():
        raise UserError(f"{data}: no such records file or release folder")
    return data


def states_folder(data: str | Path, states: str | Path | None = None) -> Path:
    """The folder of state images: `states` if given, else the release folder's states/ (or the
    states/ beside a records file's meta/ folder)."""
    if states is not None:
        folder = Path(states)
    else:
        data = Path(data)
        root = data if data.is_dir() else data.parent.parent
        folder = root / STATES
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder of state images ({{id}}_{{N+1}}_{{i}}.jpg)")
    return folder
