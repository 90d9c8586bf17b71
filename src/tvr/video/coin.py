"""Read COIN's annotation file (COIN.json, ActivityNet style) into validated VideoRecords.

The file is `{"database": {youtube_id: {"duration", "class", "video_url", "start", "end",
"subset", "recipe_type", "annotation": [{"id", "segment": [start, end], "label"}]}}}`; other
top-level keys and other fields of a video are ignored. Required for each video: "annotation"
(a list, may be empty), "class", "recipe_type" and "subset"; for each step: "segment" (two
numbers, 0 <= start <= end), a non-empty "label" and an "id". Optional (absent or null):
"duration" (a number >= 0), "video_url" (a string). Steps are kept in the file's order. The first
problem found raises an InputError that names the file and the field, e.g. `COIN.json, field
'database["abc"].annotation[2].segment': expected [start, end] with 0 <= start <= end, got
[9.0,4.0]`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import orjson

from tvr.core.errors import InputError, UserError
from tvr.video.records import Step, VideoRecord

SUBSETS = ("training", "validation", "testing")
_MISSING = object()


def read_coin(path: str | Path) -> list[VideoRecord]:
    """The videos of a COIN.json, in the file's order, each validated (InputError otherwise)."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as err:
        raise InputError(path, err.lineno, None, f"not valid JSON ({err.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("database"), dict):
        raise InputError(path, None, "database", 'expected {"database": {youtube_id: {...}}}')
    return [_video(path, vid, entry) for vid, entry in data["database"].items()]


def _video(path: Path, vid: str, entry: Any) -> VideoRecord:
    where = f"database[{_quote(vid)}]"
    if not vid.strip():
        raise InputError(path, None, where, "empty video id")
    if not isinstance(entry, dict):
        raise InputError(path, None, where, f"expected an object, got {_show(entry)}")
    task = _string(path, f"{where}.class", entry.get("class", _MISSING))
    task_id = entry.get("recipe_type", _MISSING)
    if isinstance(task_id, bool) or not isinstance(task_id, (int, str)) or str(task_id) == "":
        raise InputError(
            path, None, f"{where}.recipe_type", f"expected a task id, got {_show(task_id)}"
        )
    subset = entry.get("subset", _MISSING)
    if subset not in SUBSETS:
        raise InputError(
            path,
            None,
            f"{where}.subset",
            f"expected one of {', '.join(SUBSETS)}, got {_show(subset)}",
        )
    duration = entry.get("duration", _MISSING)
    if duration is _MISSING or duration is None:
        duration = None
    else:
        duration = _number(path, f"{where}.duration", duration)
        if duration < 0:
            raise InputError(
                path, None, f"{where}.duration", f"expected a number >= 0, got {duration}"
            )
    url = entry.get("video_url", _MISSING)
    if url is _MISSING or url is None:
        url = None
    elif not isinstance(url, str):
        raise InputError(path, None, f"{where}.video_url", f"expected a string, got {_show(url)}")
    annotation = entry.get("annotation", _MISSING)
    if not isinstance(annotation, list):
        raise InputError(
            path, None, f"{where}.annotation", f"expected a list of steps, got {_show(annotation)}"
        )
    steps = tuple(_step(path, f"{where}.annotation[{i}]", a) for i, a in enumerate(annotation))
    return VideoRecord(vid, "coin", task, str(task_id), subset, steps, duration, url)


def _step(path: Path, where: str, item: Any) -> Step:
    if not isinstance(item, dict):
        raise InputError(path, None, where, f"expected an object, got {_show(item)}")
    seg = item.get("segment", _MISSING)
    expected = "expected [start, end] with 0 <= start <= end"
    if not isinstance(seg, list) or len(seg) != 2:
        raise InputError(path, None, f"{where}.segment", f"{expected}, got {_show(seg)}")
    start = _number(path, f"{where}.segment", seg[0])
    end = _number(path, f"{where}.segment", seg[1])
    if not 0 <= start <= end:
        raise InputError(path, None, f"{where}.segment", f"{expected}, got {_show(seg)}")
    label = _string(path, f"{where}.label", item.get("label", _MISSING))
    step_id = item.get("id", _MISSING)
    if isinstance(step_id, bool) or not isinstance(step_id, (int, str)) or str(step_id) == "":
        raise InputError(path, None, f"{where}.id", f"expected a step id, got {_show(step_id)}")
    return Step(label.strip(), start, end, str(step_id))


def _number(path: Path, field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(path, None, field, f"expected a number, got {_show(value)}")
    return float(value)


def _string(path: Path, field: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(path, None, field, f"expected a non-empty string, got {_show(value)}")
    return value


def _quote(key: str) -> str:
    return orjson.dumps(key).decode()


def _show(value: Any) -> str:
    """A short rendering of a JSON value for a message ("nothing" for a missing field)."""
    text = "nothing" if value is _MISSING else orjson.dumps(value).decode()
    return text if len(text) <= 60 else text[:57] + "..."
