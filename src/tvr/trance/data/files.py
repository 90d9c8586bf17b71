"""Reading and writing sample files (`samples.jsonl`), with errors that name file, line and field."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tvr.core.data_path import reference_file
from tvr.core.errors import InputError, UserError, quote
from tvr.core.gc_pause import without_gc
from tvr.core.jsonl import iter_jsonl, write_json, write_jsonl
from tvr.trance.data.sample import Sample
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab
from tvr.trance.world.simulator import array_to_objects, objects_to_array


# --- validation -------------------------------------------------------------------------------------
def _check_objects(path: Path, lineno: int, field: str, objects: Any) -> None:
    if not isinstance(objects, list) or len(objects) != vocab.NUM_OBJECTS:
        raise InputError(path, lineno, field, f"expected a list of {vocab.NUM_OBJECTS} objects")
    for i, o in enumerate(objects):
        where = f"{field}[{i}]"
        if not isinstance(o, dict):
            raise InputError(path, lineno, where, "expected an object")
        for attr, names in vocab.CATEGORIES.items():
            if o.get(attr) not in names:
                raise InputError(
                    path, lineno, f"{where}.{attr}", f"{o.get(attr)!r} is not one of {list(names)}"
                )
        pos = o.get("position")
        if (
            not isinstance(pos, list | tuple)
            or len(pos) != 2
            or not all(isinstance(p, int) and not isinstance(p, bool) for p in pos)
        ):
            raise InputError(
                path, lineno, f"{where}.position", f"expected two integers, got {pos!r}"
            )
        if not world.on_plane(pos[0], pos[1]):
            raise InputError(
                path, lineno, f"{where}.position", f"{pos} lies outside the plane [-40, 40]"
            )


def _objects_look_right(objects: Any) -> bool:
    """Fast check of an object list; False sends it to `_check_objects` for a located error."""
    try:
        if len(objects) != vocab.NUM_OBJECTS:
            return False
        arr = objects_to_array(objects)
        coords = [p for o in objects for p in o["position"]]
    except (KeyError, TypeError, IndexError, ValueError, OverflowError):
        return False
    return (
        len(coords) == 2 * vocab.NUM_OBJECTS
        and all(type(p) is int for p in coords)
        and bool((arr[:, :2] >= vocab.GRID_MIN).all() and (arr[:, :2] <= vocab.GRID_MAX).all())
    )


def sample_from_record(path: Path, lineno: int, d: Any) -> Sample:
    """A `Sample` from one parsed line of a tvr samples file, validated field by field."""
    if not isinstance(d, dict):
        raise InputError(path, lineno, None, "expected a JSON object")
    fmt = d.get("format")
    if fmt != "tvr.trance.sample/1":
        hint = " (a release data.jsonl? use `tvr convert --from-release`)" if "states" in d else ""
        raise InputError(
            path, lineno, "format", f"expected 'tvr.trance.sample/1', got {fmt!r}{hint}"
        )
    for key in ("id", "objects", "steps", "final"):
        if key not in d:
            raise InputError(path, lineno, key, "missing")
    if not isinstance(d["id"], str) or not d["id"]:
        raise InputError(path, lineno, "id", f"expected a non-empty string, got {quote(d['id'])}")
    for key in ("objects", "final"):
        if not _objects_look_right(d[key]):
            _check_objects(path, lineno, key, d[key])  # raises with the exact field
    steps = d["steps"]
    if not isinstance(steps, list) or not 1 <= len(steps) <= vocab.MAX_STEPS:
        raise InputError(path, lineno, "steps", f"expected a list of 1..{vocab.MAX_STEPS} steps")
    for k, s in enumerate(steps):
        if not isinstance(s, dict):
            raise InputError(path, lineno, f"steps[{k}]", "expected an object")
        obj = s.get("obj")
        if not isinstance(obj, int) or not 0 <= obj < vocab.NUM_OBJECTS:
            raise InputError(
                path, lineno, f"steps[{k}].obj", f"{obj!r} is not an object index 0..9"
            )
        for name in [s.get("value"), *s.get("options", [])]:
            if name not in vocab.VALUE_INDEX:
                raise InputError(path, lineno, f"steps[{k}].value", f"unknown value {name!r}")
    return Sample.from_dict(d)


@without_gc
def read_samples(path: str | Path) -> list[Sample]:
    """All samples of a tvr samples file (JSON lines)."""
    path = Path(path)
    samples = [sample_from_record(path, lineno, d) for lineno, d in iter_jsonl(path)]
    seen: dict[str, int] = {}
    for i, s in enumerate(samples):
        if s.id in seen:
            raise InputError(
                path,
                None,
                "id",
                f"sample id {s.id!r} appears twice (samples {seen[s.id] + 1} and {i + 1})",
            )
        seen[s.id] = i
    return samples


def write_samples(path: str | Path, samples: Iterable[Sample]) -> int:
    return write_jsonl(path, (s.to_dict() for s in samples))


def check_consistent(sample: Sample) -> str | None:
    """None if the reference steps, applied in order, turn the initial state into the final one
    without breaking a rule; otherwise what is wrong."""
    state, results = world.apply_steps(
        sample.initial_array, [(s.obj, s.value) for s in sample.steps]
    )
    for k, r in enumerate(results):
        if r.broken_rule:
            return f"step {k + 1} breaks the {r.broken_rule} rule"
    if world.distance(state, sample.final_array) != 0:
        return "the steps do not reproduce the final state"
    return None


__all__ = [
    "array_to_objects",
    "check_consistent",
    "iter_jsonl",
    "objects_to_array",
    "read_samples",
    "write_json",
    "write_jsonl",
    "write_samples",
]


# --- a dataset given as --data: its samples file and its setting ------------------------------------
#: where a samples file sits in a folder: `tvr sample` / a split of `tvr generate`, a whole
#: `tvr generate` dataset (per split), `tvr demo`'s folder
SAMPLES_IN_FOLDER = ("samples.jsonl", "{split}/samples.jsonl", "samples/samples.jsonl")


def samples_file(path: str | Path, split: str = "test", option: str = "--data") -> Path:
    """The samples file of `--data PATH`: PATH itself, or the samples.jsonl of the folder PATH
    (of its `split` for a `tvr generate` dataset)."""
    return reference_file(path, SAMPLES_IN_FOLDER, split=split, option=option)


def data_setting(samples: str | Path) -> tuple[str, Path] | None:
    """The setting that the data's own config.json names (beside the samples file, or in the
    dataset folder above a split) and that file; None if there is none to read."""
    samples = Path(samples)
    for folder in (samples.parent, samples.parent.parent):
        config = folder / "config.json"
        try:
            value = json.loads(config.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        setting = value.get("setting") if isinstance(value, dict) else None
        if isinstance(setting, str) and setting in vocab.SETTINGS:
            return setting, config
    return None


def setting_of_data(samples: str | Path, given: str | None, option: str = "--setting") -> str:
    """The setting to read `samples` under: the one its config.json names, else `given`, else
    "event". A `given` setting that contradicts the data's config.json is a UserError: nothing
    is silently scored under another setting."""
    found = data_setting(samples)
    if found is None:
        return given or "event"
    setting, config = found
    if given is not None and given != setting:
        raise UserError(f"{option} {given} contradicts {config} (setting {setting!r}); drop "
                        f"{option}, the data says its setting")  # fmt: skip
    return setting
