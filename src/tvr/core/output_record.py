"""No silent overwrite: an output folder remembers the inputs of the command that wrote it.

OUT/.tvr-inputs.json holds the command and its inputs (paths made absolute). A second run into
OUT with the same inputs is idempotent (it writes the same files again); one with other inputs,
or into a folder that holds files tvr did not record, is refused unless `overwrite` is given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.core.jsonl import write_json

RECORD_FILE = ".tvr-inputs.json"


def _plain(value: Any) -> Any:
    """A JSON form of an option's value that compares equal for the same input."""
    if isinstance(value, Path):
        return str(value.expanduser().resolve())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def inputs_record(command: str, options: dict[str, Any]) -> dict[str, Any]:
    """The record of one run: the command and its options (in a stable, JSON form)."""
    return {"command": command, "inputs": {k: _plain(v) for k, v in sorted(options.items())}}


def _read_record(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def check_output_inputs(
    out: str | Path, record: dict[str, Any], overwrite: bool, option: str = "--out"
) -> None:
    """A UserError if folder `out` holds results of other inputs than `record` (or files tvr did
    not record) and `overwrite` is false; nothing to say for a missing or empty folder."""
    out = Path(out)
    if overwrite or not out.is_dir():
        return
    saved = _read_record(out / RECORD_FILE)
    if saved is None:
        if any(not p.name.startswith(".") for p in out.iterdir()):
            raise UserError(f"{option} {out}: the folder holds files of another command; give "
                            "--overwrite to write into it anyway")  # fmt: skip
        return
    if saved == record:
        return
    if saved.get("command") != record["command"]:
        raise UserError(f"{option} {out}: holds the results of `{saved.get('command')}`; give "
                        "another folder, or --overwrite to replace them")  # fmt: skip
    old, new = saved.get("inputs") or {}, record["inputs"]
    differ = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    name = differ[0] if differ else "?"
    shown = "--" + name.replace("_", "-")
    raise UserError(f"{option} {out}: holds results of other inputs ({shown} was "
                    f"{old.get(name)!r}, now {new.get(name)!r}); give another folder, or "
                    "--overwrite to replace them")  # fmt: skip


def write_output_record(out: str | Path, record: dict[str, Any]) -> None:
    """Remember `record` in folder `out` (after the command wrote its results there)."""
    out = Path(out)
    if out.is_dir():
        write_json(out / RECORD_FILE, record)
