"""The public TRANCE release's `data.jsonl` layout: one release line to a `Sample` and back.

So data of the release and data made by tvr can be used interchangeably:

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

import math
from pathlib import Path
from typing import Any

from tvr.core.errors import InputError, quote
from tvr.core.jsonl import iter_jsonl
from tvr.trance.data.files import _check_objects
from tvr.trance.data.sample import Sample, Step, image_name
from tvr.trance.world import vocab
from tvr.trance.world.vocab import VIEWS

#: the release's camera and lamp names, by tvr's view and light names
RELEASE_CAMERAS = {"L": "Camera_Left", "C": "Camera_Center", "R": "Camera_Right"}
RELEASE_LAMPS = {"key": "Lamp_Key", "back": "Lamp_Back", "fill": "Lamp_Fill"}


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
    if type(d["idx"]) is not int or d["idx"] < 0:
        raise InputError(path, lineno, "idx", f"expected a line number 0, 1, ..., got "
                         f"{quote(d['idx'])}")  # fmt: skip
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
    kept = _tvr_fields(path, lineno, d)
    sample = Sample(
        id=kept.get("id", f"img_{idx:06d}"),
        objects=objects,
        steps=steps,
        cameras={k: list(cams[v]) for k, v in RELEASE_CAMERAS.items() if v in cams},
        lights={k: list(lamps[v]) for k, v in RELEASE_LAMPS.items() if v in lamps},
        seed=kept.get("seed"),
        shard=kept.get("shard"),
        index=kept.get("index", idx),
        order_sensitive=kept.get("order_sensitive"),
        final=final,
    )
    if d.get("view") in VIEWS:  # View samples carry their final view
        sample.extra["view"] = d["view"]
    return sample


#: what a release line keeps of a tvr sample beyond the release's own fields: line key -> (sample
#: field, the JSON types it may have); written by `sample_to_release`, read by `sample_from_release`
TVR_FIELDS: dict[str, tuple[str, tuple[type, ...]]] = {
    "tvr_id": ("id", (str,)),
    "tvr_seed": ("seed", (int,)),
    "tvr_shard": ("shard", (int,)),
    "tvr_index": ("index", (int,)),
    "tvr_order_sensitive": ("order_sensitive", (bool,)),
}


def _tvr_fields(path: Path, lineno: int, d: dict[str, Any]) -> dict[str, Any]:
    """The sample fields a line written by tvr keeps (`TVR_FIELDS`), checked."""
    out = {}
    for key, (name, types) in TVR_FIELDS.items():
        if d.get(key) is None:
            continue
        value = d[key]
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            kind = " or ".join(t.__name__ for t in types)
            raise InputError(path, lineno, key, f"expected {kind}, got {value!r}")
        out[name] = value
    return out


def read_release(path: str | Path) -> list[Sample]:
    """All samples of a release `data.jsonl`; a line written by tvr gets back its id, seed, shard,
    index and order-sensitive flag (`TVR_FIELDS`), other ids become `img_{idx:06d}` like their
    image names."""
    path = Path(path)
    samples, seen = [], {}
    for lineno, d in iter_jsonl(path):
        sample = sample_from_release(path, lineno, d)
        if sample.id in seen:
            raise InputError(path, lineno, "idx" if "id" not in d else "id",
                             f"sample {quote(sample.id)} again (first on line {seen[sample.id]})")  # fmt: skip
        seen[sample.id] = lineno
        samples.append(sample)
    if not samples:
        raise InputError(path, None, None, "no samples (the file is empty)")
    return samples


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
    line: dict[str, Any] = {
        "idx": idx,
        "states": [
            {
                "objects": objs(sample.objects),
                "images": {"Camera_Center": image_name(rid, "init", "C")},
            },
            {
                "objects": objs(sample.final),
                "images": {RELEASE_CAMERAS[v]: image_name(rid, "fin", v) for v in VIEWS},
            },
        ],
        "transformations": transformations,
        "cameras": {RELEASE_CAMERAS[k]: v for k, v in sample.cameras.items()},
        "lamps": {RELEASE_LAMPS[k]: v for k, v in sample.lights.items()},
    }
    for key, (name, _) in TVR_FIELDS.items():  # what the release has no field for
        if getattr(sample, name) is not None:
            line[key] = getattr(sample, name)
    if "view" in sample.extra:
        line["view"] = sample.extra["view"]
    return line
