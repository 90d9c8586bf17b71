"""The released VTT records (`meta/vtt.jsonl`, one sample a line) and their state images, validated.

A record, as released:

    {"id": "0a1b2c3d4e5f6789", "youtube_id": "...", "ori": "coin" | "cross",
     "split": "train" | "val" | "test", "duration": 123.4, "topic": "...", "category": "...",
     "annotation": [{"clip_id": "{id}_{N}_{i}", "segment": [start_s, end_s], "label": "..."}],
     "frames": {clip_id: {...}}}

N = len(annotation) transformations, 1 to 12, in time order and not overlapping (the release drops
samples with overlapping steps or more than 12); "frames" (the per-clip frame counts of the
release) is optional here and only checked to be an object keyed by the sample's clip ids. The
N + 1 state images are `states/{id}_{N+1}_{i}.jpg`, i = 0..N. "duration" is seconds, or -1 where
unknown. Every error names the file, the line and the field.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tvr.core.errors import InputError, UserError
from tvr.core.jsonl import iter_jsonl

#: "coin" and "cross" as released; "trance" marks the TRANCE text testbed (docs/vtt.md)
ORIGINS = ("coin", "cross", "trance")
SPLITS = ("train", "val", "test")
MAX_TRANSFORMATIONS = 12
_ID = re.compile(r"[0-9a-f]{16}")
_FIELDS = ("id", "youtube_id", "ori", "split", "duration", "topic", "category", "annotation")


@dataclass(frozen=True)
class Step:
    """One transformation: its clip id, its segment of the video (seconds) and its description."""

    clip_id: str
    segment: tuple[float, float]
    label: str


@dataclass(frozen=True)
class VttRecord:
    """One VTT sample: N + 1 states of one video and the N transformations between them."""

    id: str
    youtube_id: str
    ori: str
    split: str
    duration: float
    topic: str
    category: str
    steps: tuple[Step, ...]
    frames: dict[str, Any] | None
    line: int  # the line of the records file it came from

    @property
    def n(self) -> int:
        """The number of transformations N."""
        return len(self.steps)

    @property
    def labels(self) -> list[str]:
        """The N reference descriptions, in order."""
        return [s.label for s in self.steps]

    def state_names(self) -> list[str]:
        """The file names of the N + 1 state images, in order."""
        return [f"{self.id}_{self.n + 1}_{i}.jpg" for i in range(self.n + 1)]


def read_records(path: str | Path) -> list[VttRecord]:
    """Every record of a `vtt.jsonl` file, validated; ids are unique."""
    path = Path(path)
    records: list[VttRecord] = []
    seen: dict[str, int] = {}
    for lineno, data in iter_jsonl(path):
        record = parse_record(data, path, lineno)
        if record.id in seen:
            raise InputError(path, lineno, "id",
                             f"{record.id!r} is also the id of line {seen[record.id]}")  # fmt: skip
        seen[record.id] = lineno
        records.append(record)
    if not records:
        raise UserError(f"{path}: no records (an empty file)")
    return records


def parse_record(data: Any, path: str | Path, line: int) -> VttRecord:
    """One record from its parsed JSON line; InputError naming the field if it is malformed."""

    def bad(field: str | None, message: str) -> InputError:
        return InputError(path, line, field, message)

    if not isinstance(data, dict):
        raise bad(None, f"expected a JSON object, got {type(data).__name__}")
    for key in _FIELDS:
        if key not in data:
            raise bad(key, "missing")
    sample_id = data["id"]
    if not isinstance(sample_id, str) or not _ID.fullmatch(sample_id):
        raise bad("id", f"expected 16 lowercase hexadecimal digits, got {sample_id!r}")
    for key in ("youtube_id", "topic", "category"):
        if not isinstance(data[key], str) or not data[key].strip():
            raise bad(key, f"expected a non-empty string, got {data[key]!r}")
    if data["ori"] not in ORIGINS:
        raise bad("ori", f"expected one of {', '.join(ORIGINS)}, got {data['ori']!r}")
    if data["split"] not in SPLITS:
        raise bad("split", f"expected one of {', '.join(SPLITS)}, got {data['split']!r}")
    duration = data["duration"]
    if not _is_number(duration) or (duration < 0 and duration != -1):
        raise bad("duration", f"expected seconds (>= 0, or -1 if unknown), got {duration!r}")
    steps = _parse_steps(data["annotation"], sample_id, bad)
    frames = data.get("frames")
    if frames is not None:
        if not isinstance(frames, dict):
            raise bad("frames", f"expected an object keyed by clip id, got {frames!r}")
        clip_ids = {s.clip_id for s in steps}
        for key, value in frames.items():
            if key not in clip_ids:
                raise bad(f"frames[{key!r}]", "not a clip id of this sample's annotation")
            if not isinstance(value, dict):
                raise bad(f"frames[{key!r}]", f"expected an object, got {value!r}")
    return VttRecord(
        id=sample_id, youtube_id=data["youtube_id"], ori=data["ori"], split=data["split"],
        duration=float(duration), topic=data["topic"], category=data["category"],
        steps=steps, frames=frames, line=line,
    )  # fmt: skip


def _parse_steps(annotation: Any, sample_id: str, bad: Any) -> tuple[Step, ...]:
    if not isinstance(annotation, list) or not annotation:
        raise bad("annotation", f"expected a non-empty list of steps, got {annotation!r}")
    n = len(annotation)
    if n > MAX_TRANSFORMATIONS:
        raise bad("annotation",
                  f"{n} steps; VTT samples have 1 to {MAX_TRANSFORMATIONS} transformations")  # fmt: skip
    steps = []
    for i, step in enumerate(annotation):
        where = f"annotation[{i}]"
        if not isinstance(step, dict):
            raise bad(where, f"expected an object, got {step!r}")
        for key in ("clip_id", "segment", "label"):
            if key not in step:
                raise bad(f"{where}.{key}", "missing")
        expected = f"{sample_id}_{n}_{i}"
        if step["clip_id"] != expected:
            raise bad(f"{where}.clip_id", f"expected {expected!r} (id_N_i), got {step['clip_id']!r}")
        segment = step["segment"]
        if (
            not isinstance(segment, list)
            or len(segment) != 2
            or not all(_is_number(t) for t in segment)
            or not 0 <= segment[0] <= segment[1]
        ):
            raise bad(f"{where}.segment",
                      f"expected [start, end] in seconds with 0 <= start <= end, got {segment!r}")  # fmt: skip
        if steps and segment[0] < steps[-1].segment[1]:
            raise bad(f"{where}.segment",
                      f"starts at {segment[0]} before step {i - 1} ends at "
                      f"{steps[-1].segment[1]} (steps are in time order and do not overlap)")  # fmt: skip
        label = step["label"]
        if not isinstance(label, str) or not label.strip():
            raise bad(f"{where}.label", f"expected a non-empty description, got {label!r}")
        steps.append(Step(step["clip_id"], (float(segment[0]), float(segment[1])), label))
    return tuple(steps)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def check_states(
    records: list[VttRecord], states: str | Path, records_path: str | Path, verify: bool = False
) -> int:
    """Check that every record's N + 1 state images are in `states` (non-empty files; decodable
    images too if `verify`, which needs Pillow). Returns the number of images checked; the first
    missing or broken one raises InputError naming its record's line, with the count of all."""
    states = Path(states)
    if not states.is_dir():
        raise UserError(f"{states}: no such folder (the state images, states/)")
    missing: list[tuple[VttRecord, Path, str]] = []
    total = 0
    for record in records:
        for name in record.state_names():
            total += 1
            image = states / name
            problem = _image_problem(image, verify)
            if problem:
                missing.append((record, image, problem))
    if missing:
        record, image, problem = missing[0]
        more = f"; {len(missing)} of {total} state images are missing or broken" if len(
            missing) > 1 else ""  # fmt: skip
        raise InputError(records_path, record.line, None, f"state image {image}: {problem}{more}")
    return total


def _image_problem(image: Path, verify: bool) -> str | None:
    try:
        size = image.stat().st_size
    except FileNotFoundError:
        return "missing"
    except OSError as err:
        return f"unreadable ({err.strerror or err})"
    if size == 0:
        return "an empty file"
    if verify:
        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(image) as img:
                img.verify()
        except (OSError, UnidentifiedImageError, SyntaxError) as err:
            return f"not a readable image ({err})"
    return None
