"""TRANCO's scoring files (JSON lines): the reference samples and the predictions, read with errors
that name the file, line and field.

Samples (one per line; the dataset builder writes more fields, which are ignored here):

    {"id": "sample id", "clips": ["clip id", ...], "candidates": ["clip id", ...]}

- "id": a non-empty string, unique in the file;
- "clips": the reference T, the step clips in order: at least one, no clip twice;
- "candidates" (optional): the sample's own candidate set (the "tiny" set of 100 in the paper),
  no clip twice, holding every clip of "clips". Without it a sample is scored against the full
  set: every clip of the file.

Predictions (one per line, any order, extra fields ignored):

    {"id": "sample id", "clips": ["clip id", ...]}

- "id": a sample of the samples file, at most one line each; a sample without a line is scored
  as an empty prediction and counted as missing;
- "clips": the predicted clips in order; may be empty; a repeated clip is allowed and scored as
  `tvr.tranco.eval.metrics` says.

Clip and sample ids are strings (COIN's are); a number where an id belongs is an error, so that
"3" and 3 are never compared.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tvr.core.errors import InputError, UserError
from tvr.core.gc_pause import without_gc
from tvr.core.jsonl import iter_jsonl, skip_if_lenient, write_jsonl


@dataclass(frozen=True)
class ReferenceSample:
    """One sample to score against: its reference clips and, if listed, its own candidates."""

    id: str
    clips: tuple[str, ...]
    candidates: tuple[str, ...] | None = None
    line: int = 0


@dataclass(frozen=True)
class Prediction:
    """One predicted sequence of clips, and the line it was read from."""

    id: str
    clips: tuple[str, ...]
    line: int = 0


@without_gc
def read_samples(path: str | Path) -> list[ReferenceSample]:
    """The samples of a samples file, in file order (InputError at the first bad line)."""
    path = Path(path)
    samples: list[ReferenceSample] = []
    seen: dict[str, int] = {}
    for line, record in iter_jsonl(path):
        _require_object(record, path, line)
        sample_id = _id(record, path, line)
        if sample_id in seen:
            raise InputError(path, line, "id", f"sample {sample_id!r} is also on line "
                             f"{seen[sample_id]}")  # fmt: skip
        seen[sample_id] = line
        clips = _clip_list(record, "clips", path, line)
        if not clips:
            raise InputError(path, line, "clips", "the reference needs at least one clip")
        _no_repeat(clips, "clips", path, line)
        candidates = None
        if record.get("candidates") is not None:
            candidates = _clip_list(record, "candidates", path, line)
            _no_repeat(candidates, "candidates", path, line)
            listed = set(candidates)
            absent = [clip for clip in clips if clip not in listed]
            if absent:
                raise InputError(path, line, "candidates",
                                 f"the reference clip {absent[0]!r} is not a candidate")  # fmt: skip
        samples.append(ReferenceSample(sample_id, clips, candidates, line))
    if not samples:
        raise UserError(f"{path}: no sample in the file")
    return samples


@without_gc
def read_predictions(
    path: str | Path,
    sample_ids: Collection[str] | None = None,
    problems: list[InputError] | None = None,
) -> dict[str, Prediction]:
    """sample id -> prediction; with `sample_ids`, an id outside them is an InputError. With a
    `problems` list (--lenient) a bad line is added to it and skipped (its sample is then
    missing, so scored wrong) instead of raised."""
    path = Path(path)
    known = set(sample_ids) if sample_ids is not None else None
    found: dict[str, Prediction] = {}
    for line, record in iter_jsonl(path, problems):
        with skip_if_lenient(problems):
            _require_object(record, path, line)
            sample_id = _id(record, path, line)
            if sample_id in found:
                raise InputError(path, line, "id", f"sample {sample_id!r} is also predicted on "
                                 f"line {found[sample_id].line}")  # fmt: skip
            if known is not None and sample_id not in known:
                raise InputError(path, line, "id",
                                 f"no sample {sample_id!r} in the samples file")  # fmt: skip
            found[sample_id] = Prediction(sample_id, _clip_list(record, "clips", path, line), line)
    if not found and not problems:
        raise UserError(f"{path}: no prediction in the file")
    return found


def candidate_pools(
    samples: Sequence[ReferenceSample], setting: str = "auto"
) -> tuple[str, list[tuple[str, ...]]]:
    """The candidate set of each sample, and the setting they make: "tiny" (each sample's listed
    candidates), "full" (every clip of the file: reference and listed ones, in file order) or
    "auto" (tiny if every sample lists candidates, else full)."""
    if setting not in ("auto", "tiny", "full"):
        raise ValueError(f"unknown candidate setting {setting!r} (auto, tiny, full)")
    if setting == "auto":
        setting = "tiny" if all(s.candidates is not None for s in samples) else "full"
    if setting == "tiny":
        bare = next((s for s in samples if s.candidates is None), None)
        if bare is not None:
            raise UserError(f"sample {bare.id!r} (line {bare.line}) lists no candidates, so the "
                            "tiny setting cannot score it (use the full setting)")  # fmt: skip
        return setting, [s.candidates or () for s in samples]
    every: dict[str, None] = {}
    for s in samples:
        every.update(dict.fromkeys(s.clips))
        every.update(dict.fromkeys(s.candidates or ()))
    pool = tuple(every)
    return setting, [pool] * len(samples)


def write_predictions(path: str | Path, predictions: Iterable[tuple[str, Sequence[str]]]) -> int:
    """Write (sample id, clips) pairs as a predictions file, atomically; returns the count."""
    return write_jsonl(path, ({"id": i, "clips": list(clips)} for i, clips in predictions))


def write_samples(path: str | Path, samples: Iterable[ReferenceSample]) -> int:
    """Write samples in the samples format (candidates only where listed), atomically."""
    records = (
        {"id": s.id, "clips": list(s.clips)}
        | ({"candidates": list(s.candidates)} if s.candidates is not None else {})
        for s in samples
    )
    return write_jsonl(path, records)


def _require_object(record: Any, path: Path, line: int) -> None:
    if not isinstance(record, dict):
        raise InputError(path, line, None, f"expected a JSON object, got {type(record).__name__}")


def _id(record: dict[str, Any], path: Path, line: int) -> str:
    value = record.get("id")
    if not isinstance(value, str) or not value:
        raise InputError(path, line, "id", f"expected a non-empty string, got {_shown(value)}")
    return value


def _clip_list(record: dict[str, Any], field: str, path: Path, line: int) -> tuple[str, ...]:
    value = record.get(field)
    if not isinstance(value, list):
        raise InputError(path, line, field, f"expected a list of clip ids, got {_shown(value)}")
    for i, clip in enumerate(value):
        if not isinstance(clip, str) or not clip:
            raise InputError(path, line, f"{field}[{i}]",
                             f"expected a clip id (a non-empty string), got {_shown(clip)}")  # fmt: skip
    return tuple(value)


def _no_repeat(clips: Sequence[str], field: str, path: Path, line: int) -> None:
    seen: set[str] = set()
    for i, clip in enumerate(clips):
        if clip in seen:
            raise InputError(path, line, f"{field}[{i}]", f"clip {clip!r} is listed twice")
        seen.add(clip)


def _shown(value: Any) -> str:
    """A value as an error message shows it: missing, or its JSON type and a short repr."""
    if value is None:
        return "nothing"
    text = repr(value)
    return f"{type(value).__name__} {text[:40]}{'...' if len(text) > 40 else ''}"
