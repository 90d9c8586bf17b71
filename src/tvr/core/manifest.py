"""A job folder's saved config (refusing to mix data of two configs) and file checksums."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.core.jsonl import prepare_output_folder, write_json

CONFIG_FILE = "config.json"


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    """The hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def check_same_config(
    out: Path,
    config: dict[str, Any],
    *,
    what: str = "data",
    legacy: Callable[[Any], Any] | None = None,
    name_options: bool = True,
) -> None:
    """UserError if folder `out` holds `what` made with a config other than `config` (the dict
    saved as OUT/config.json). `legacy(saved)` fills in the defaults of options that older
    folders do not name; `name_options` names the differing options in the message (an
    unreadable config.json differs in every one)."""
    cfg_path = Path(out) / CONFIG_FILE
    if not cfg_path.exists():
        return
    try:
        old = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        old = None
    if legacy is not None:
        old = legacy(old)
    if old == config:
        return
    detail = ""
    if name_options:
        diff = (
            sorted(k for k in config if old.get(k) != config[k])
            if isinstance(old, dict)
            else ["(unreadable config.json)"]
        )
        detail = f"; differs in {', '.join(diff)}"
    raise UserError(
        f"{out} already holds {what} made with another config ({cfg_path}{detail}); "
        "choose another --out or the same options"
    )


def save_config(out: Path, config: dict[str, Any]) -> None:
    """Create folder `out` and write OUT/config.json unless it is there already (checked by
    `check_same_config` first); a UserError naming --out if the folder cannot be written."""
    out = prepare_output_folder(out)
    cfg_path = out / CONFIG_FILE
    if not cfg_path.exists():
        write_json(cfg_path, config)
