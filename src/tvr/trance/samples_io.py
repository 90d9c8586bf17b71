"""Reading and writing sample files (`samples.jsonl`), with errors that name file, line and field.

Also converts to and from the public TRANCE release's `data.jsonl` layout, so data of the release
and data made by tvr can be used interchangeably:

    {"idx": 0,
     "states": [{"objects": [{"color", "material", "shape", "size", "position": [x, y],
                               "rotation"}, ...], "images": {"Camera_Center": "img_000000-init.C.png"}},
                {"objects": [...], "images": {"Camera_Left": "img_000000-fin.L.png", ...}}],
     "transformations": [{"obj_idx": 3, "attr": "position", "val": ["front", 1],
                          "type": "out", "options": [["front", 1], ...]},
                         {"obj_idx": 1, "attr": "color", "val": "red"}],
     "cameras": {"Camera_Left": [x, y, z], ...}, "lamps": {"Lamp_Key": [x, y, z], ...}}

Released rotations are the numbers Blender received as radians; tvr stores degrees.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from tvr.errors import InputError, UserError
from tvr.trance import vocab, world
from tvr.trance.sample import Sample, Step, array_to_objects, image_name, objects_to_array

_RELEASE_CAMERAS = {"L": "Camera_Left", "C": "Camera_Center", "R": "Camera_Right"}
_RELEASE_LAMPS = {"key": "Lamp_Key", "back": "Lamp_Back", "fill": "Lamp_Fill"}


# --- atomic writing -------------------------------------------------------------------------------
def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> int:
    """Write records as JSON lines atomically (a temporary file renamed into place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    n = 0
    try:
        with os.fdopen(fd, "wb") as f:
            for r in records:
                f.write(orjson.dumps(r, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n")
                n += 1
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


def write_json(path: str | Path, data: Any) -> None:
    """Write one JSON document atomically, indented for people to read."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON) for each non-empty line; a bad line raises InputError."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    with path.open("rb") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                yield lineno, orjson.loads(line)
            except orjson.JSONDecodeError as err:
                raise InputError(path, lineno, None, f"not valid JSON ({err})") from None


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


# --- the public release's layout ---------------------------------------------------------------------
def _release_value(attr: str, val: Any) -> str:
    if attr == "position":
        direction, step = val
        return f"position.{direction}.{int(step)}"
    return f"{attr}.{val}"


def _integral_position(o: Any) -> Any:
    """The object with an integral float position such as [3.0, -12.0] turned into ints."""
    pos = o.get("position") if isinstance(o, dict) else None
    if isinstance(pos, list | tuple) and all(isinstance(p, float) and p.is_integer() for p in pos):
        return {**o, "position": [int(p) for p in pos]}
    return o


def sample_from_release(path: Path, lineno: int, d: Any) -> Sample:
    """A `Sample` from one line of the release's data.jsonl."""
    if not isinstance(d, dict):
        raise InputError(path, lineno, None, "expected a JSON object")
    for key in ("idx", "states", "transformations"):
        if key not in d:
            raise InputError(path, lineno, key, "missing")
    states = d["states"]
    if not isinstance(states, list) or len(states) < 2:
        raise InputError(path, lineno, "states", "expected [initial, ..., final] states")

    def objects_of(k: int, field: str) -> list[dict[str, Any]]:
        objs = states[k].get("objects") if isinstance(states[k], dict) else None
        if isinstance(objs, list):
            objs = [_integral_position(o) for o in objs]
        _check_objects(path, lineno, field, objs)
        out = []
        for o in objs:
            rot = o.get("rotation", 0.0)
            out.append(
                {
                    "shape": o["shape"],
                    "size": o["size"],
                    "color": o["color"],
                    "material": o["material"],
                    "position": list(o["position"]),
                    "rotation": round(math.degrees(float(rot)) % 360.0, 3),
                }
            )
        return out

    objects = objects_of(0, "states[0].objects")
    final = objects_of(-1, f"states[{len(states) - 1}].objects")
    steps = []
    for k, t in enumerate(d["transformations"]):
        try:
            value = vocab.parse_value(_release_value(t["attr"], t["val"]))
            options = tuple(
                vocab.parse_value(_release_value(t["attr"], o)) for o in t.get("options", [])
            )
            obj = int(t["obj_idx"])
        except (KeyError, TypeError, ValueError) as err:
            raise InputError(
                path, lineno, f"transformations[{k}]", f"cannot read step: {err}"
            ) from None
        steps.append(Step(obj, value, t.get("type") if t["attr"] == "position" else None, options))
    cams = d.get("cameras", {})
    lamps = d.get("lamps", {})
    idx = int(d["idx"])
    return Sample(
        id=f"img_{idx:06d}",
        objects=objects,
        steps=steps,
        cameras={k: list(cams[v]) for k, v in _RELEASE_CAMERAS.items() if v in cams},
        lights={k: list(lamps[v]) for k, v in _RELEASE_LAMPS.items() if v in lamps},
        index=idx,
        final=final,
    )


def read_release(path: str | Path) -> list[Sample]:
    """All samples of a release `data.jsonl`; ids become `img_{idx:06d}` like its image names."""
    path = Path(path)
    return [sample_from_release(path, lineno, d) for lineno, d in iter_jsonl(path)]


def sample_to_release(sample: Sample, idx: int) -> dict[str, Any]:
    """One line of a release data.jsonl for a tvr sample (image names `img_{idx:06d}-...`)."""
    rid = f"img_{idx:06d}"

    def objs(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {
                "color": o["color"],
                "material": o["material"],
                "shape": o["shape"],
                "size": o["size"],
                "position": list(o["position"]),
                "rotation": math.radians(float(o.get("rotation", 0.0))),
            }
            for o in objects
        ]

    transformations = []
    for s in sample.steps:
        attr = s.attr
        rest = vocab.VALUES[s.value].split(".", 1)[1]
        if attr == "position":
            direction, step = rest.rsplit(".", 1)
            t: dict[str, Any] = {
                "obj_idx": s.obj,
                "attr": attr,
                "val": [direction, int(step)],
                "type": s.move_type,
            }
            t["options"] = [
                [vocab.VALUES[o].split(".")[1], int(vocab.VALUES[o].split(".")[2])]
                for o in s.accepted
            ]
        else:
            t = {"obj_idx": s.obj, "attr": attr, "val": rest}
        transformations.append(t)
    return {
        "idx": idx,
        "states": [
            {
                "objects": objs(sample.objects),
                "images": {"Camera_Center": image_name(rid, "init", "C")},
            },
            {
                "objects": objs(sample.final),
                "images": {_RELEASE_CAMERAS[v]: image_name(rid, "fin", v) for v in ("L", "C", "R")},
            },
        ],
        "transformations": transformations,
        "cameras": {_RELEASE_CAMERAS[k]: v for k, v in sample.cameras.items()},
        "lamps": {_RELEASE_LAMPS[k]: v for k, v in sample.lights.items()},
        "tvr_id": sample.id,
    }


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
    "read_release",
    "read_samples",
    "sample_to_release",
    "write_json",
    "write_jsonl",
    "write_samples",
]
