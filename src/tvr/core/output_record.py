"""No silent overwrite: an output folder remembers the inputs of the command that wrote it.

OUT/.tvr-inputs.json holds the command and its inputs (paths made absolute). A second run into
OUT with the same inputs is idempotent (it writes the same files again); one with other inputs,
or into a folder that holds files tvr did not record, is refused unless `overwrite` is given.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
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


def record_path(out: str | Path, beside: bool = False) -> Path:
    """Where folder `out` keeps its record: OUT/.tvr-inputs.json, or beside it
    (.OUT.tvr-inputs.json) for a folder meant to be uploaded as it is (`tvr export hf`), since the
    record holds absolute local paths."""
    out = Path(out)
    return out.parent / f".{out.name}{RECORD_FILE}" if beside else out / RECORD_FILE


def check_output_inputs(
    out: str | Path, record: dict[str, Any], overwrite: bool, option: str = "--out",
    beside: bool = False,
) -> None:
    """A UserError if folder `out` holds results of other inputs than `record` (or files tvr did
    not record) and `overwrite` is false; nothing to say for a missing or empty folder."""
    out = Path(out)
    if overwrite or not out.is_dir():
        return
    saved = _read_record(record_path(out, beside))
    if saved is None:
        if any(not p.name.startswith(".") and not _empty_tree(p) for p in out.iterdir()):
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


def write_output_record(out: str | Path, record: dict[str, Any], beside: bool = False) -> None:
    """Remember `record` for folder `out` (after the command wrote its results there)."""
    out = Path(out)
    if out.is_dir():
        write_json(record_path(out, beside), record)


def _empty_tree(path: Path) -> bool:
    """Whether `path` is a folder holding only (hidden files and) empty folders: what an
    interrupted export of an older tvr left, no result of anyone's."""
    if not path.is_dir() or path.is_symlink():
        return False
    return all(p.name.startswith(".") or _empty_tree(p) for p in path.iterdir())


STAGE_SUFFIX = ".tvr-partial"


def stage_path(out: str | Path) -> Path:
    """The folder an output OUT is built in before it is moved into place: `.NAME.tvr-partial`
    beside it."""
    out = Path(os.path.abspath(out))  # "." and "a/.." have a name too
    return out.parent / f".{out.name}{STAGE_SUFFIX}"


@contextlib.contextmanager
def staged_output(out: str | Path, own: Callable[[Path], Iterable[Path]],
                  option: str = "--out") -> Iterator[Path]:  # fmt: skip
    """Build an output folder whole, then move it into place; a failed or interrupted build
    leaves nothing that blocks the same command again.

    Yields an empty folder beside `out` (`stage_path`); when the block ends without an
    exception, the paths `own(out)` (what an earlier export of the command wrote there) are
    removed and every entry of the stage is renamed into `out` (created if missing; anything
    else in it is kept), then the stage is removed. On an exception (a bad line, a
    KeyboardInterrupt) the stage is removed and `out` is as it was. The caller holds `out`'s
    lock (`tvr.core.output_lock`), so a stage left by a killed run is its own to remove."""
    from tvr.core.jsonl import check_output_folder
    from tvr.core.output_lock import lock_output

    out = Path(out)
    check_output_folder(out, option)
    out.parent.mkdir(parents=True, exist_ok=True)
    lock_output(out)
    stage = stage_path(out)
    shutil.rmtree(stage, ignore_errors=True)  # a killed run's
    stage.mkdir()
    try:
        yield stage
        out.mkdir(exist_ok=True)
        for old in own(out):
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old)
            elif old.exists() or old.is_symlink():
                old.unlink()
        for entry in sorted(stage.iterdir()):
            target = out / entry.name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            os.replace(entry, target)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


BACKUP_SUFFIX = ".tvr-before"


def _same_bytes(a: Path, b: Path) -> bool:
    import filecmp

    if a.exists() != b.exists():
        return False
    return not a.exists() or filecmp.cmp(a, b, shallow=False)


@contextlib.contextmanager
def guarded_file(
    out: str | Path,
    overwrite: bool,
    what: str = "results",
    beside: Iterable[str | Path] = (),
    option: str = "--out",
) -> Iterator[None]:
    """No silent overwrite of a single output file: the evaluators' rule for a file.

    Around a command that writes file `out` (and the files `beside` it, e.g. its settings):
    when `out` exists and `overwrite` is false, a copy of each is kept; if the command wrote
    the same bytes (the same inputs), nothing changes; if it wrote other bytes (other inputs),
    the former files are put back and a UserError says so (`--overwrite` replaces them). A
    failed or interrupted command puts them back too."""
    out = Path(out)
    if overwrite or not out.is_file():
        yield
        return
    paths = [out, *(Path(p) for p in beside)]
    kept = {p: p.parent / f".{p.name}{BACKUP_SUFFIX}" for p in paths if p.is_file()}
    new = [p for p in paths if p not in kept]  # written by this run only: removed if refused
    for path, backup in kept.items():
        shutil.copy2(path, backup)
    same = False
    try:
        yield
        same = all(_same_bytes(p, b) for p, b in kept.items())
    finally:
        for path, backup in kept.items():
            if same:
                backup.unlink(missing_ok=True)
            else:
                os.replace(backup, path)
        if not same:
            for path in new:
                path.unlink(missing_ok=True)
    if not same:
        raise UserError(f"{option} {out}: holds other {what} than these inputs give; kept it "
                        "(give --overwrite to replace it, or another --out)")  # fmt: skip
