"""The tvr sample format (JSON, versioned): objects, reference steps, final state, jitter, ids.

One sample is one JSON object (one line of a `samples.jsonl` file):

    {"format": "tvr.trance.sample/1", "id": "trance-s0-000007", "seed": 0, "shard": 0,
     "index": 7, "num_visible": 4,
     "objects": [{"shape": "cube", "size": "large", "color": "red", "material": "metal",
                  "position": [12, -3], "rotation": 231.5}, ... 10 objects],
     "steps": [{"obj": 3, "value": "position.front.1", "attr": "position", "type": "inner",
                "options": ["position.front.1"]}, ...],
     "final": [... 10 objects after the last step ...],
     "cameras": {"L": [x, y, z], "C": [...], "R": [...]},
     "lights": {"key": [...], "back": [...], "fill": [...]},
     "order_sensitive": false}

`docs/formats.md` documents every field. Positions are integer grid points; rotation is in
degrees and never transformed. For an "out" move, `options` lists every position value that lands
the object on a valid invisible spot: each one is an accepted answer in Basic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from tvr.trance.world import vocab
from tvr.trance.world.simulator import objects_to_array
from tvr.trance.world.vocab import VIEWS

FORMAT = "tvr.trance.sample/1"


def image_name(sample_id: str, stage: str, view: str) -> str:
    """File name of one image of a sample, as in the public release: `{id}-init.C.png`,
    `{id}-fin.L.png`; stage is "init" or "fin", view is "L", "C" or "R". Samples imported from
    the release have ids like `img_000123`, so their names are exactly the release's."""
    if stage not in ("init", "fin") or view not in VIEWS:
        raise ValueError(f"bad image stage/view {stage!r}/{view!r}")
    return f"{sample_id}-{stage}.{view}.png"


@dataclass(frozen=True)
class Step:
    """One atomic transformation (object index, value index) of a reference transformation."""

    obj: int
    value: int
    move_type: str | None = None  # "inner", "out" or "in" for position values
    options: tuple[int, ...] = ()  # accepted values (Basic); empty means just `value`

    @property
    def attr(self) -> str:
        return vocab.value_attribute(self.value)

    @property
    def accepted(self) -> tuple[int, ...]:
        return self.options or (self.value,)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"obj": self.obj, "value": vocab.VALUES[self.value], "attr": self.attr}
        if self.move_type is not None:
            d["type"] = self.move_type
            d["options"] = [vocab.VALUES[v] for v in self.accepted]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Step:
        value = vocab.parse_value(d["value"])
        options = tuple(vocab.parse_value(v) for v in d.get("options", ()))
        return cls(int(d["obj"]), value, d.get("type"), options)


@dataclass
class Sample:
    """One TRANCE sample: an initial scene, its reference steps, and the per-sample jitter."""

    id: str
    objects: list[dict[str, Any]]
    steps: list[Step]
    cameras: dict[str, list[float]]
    lights: dict[str, list[float]]
    seed: int | None = None
    shard: int | None = None
    index: int | None = None
    order_sensitive: bool | None = None
    final: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def initial_array(self) -> np.ndarray:
        """The initial state (10, 6); computed once (do not edit `objects` after reading it)."""
        return objects_to_array(self.objects)

    @cached_property
    def final_array(self) -> np.ndarray:
        """The final state (10, 6); computed once (do not edit `final` after reading it)."""
        return objects_to_array(self.final)

    @property
    def num_visible(self) -> int:
        return sum(
            vocab.VISIBLE_MIN <= o["position"][0] <= vocab.VISIBLE_MAX
            and vocab.VISIBLE_MIN <= o["position"][1] <= vocab.VISIBLE_MAX
            for o in self.objects
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"format": FORMAT, "id": self.id}
        for key in ("seed", "shard", "index"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        d["num_visible"] = self.num_visible
        d["objects"] = self.objects
        d["steps"] = [s.to_dict() for s in self.steps]
        d["final"] = self.final
        d["cameras"] = self.cameras
        d["lights"] = self.lights
        if self.order_sensitive is not None:
            d["order_sensitive"] = self.order_sensitive
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Sample:
        known = {
            "format", "id", "seed", "shard", "index", "num_visible", "objects", "steps",
            "final", "cameras", "lights", "order_sensitive",
        }  # fmt: skip
        return cls(
            id=str(d["id"]),
            objects=d["objects"],
            steps=[Step.from_dict(s) for s in d["steps"]],
            cameras=d.get("cameras", {}),
            lights=d.get("lights", {}),
            seed=d.get("seed"),
            shard=d.get("shard"),
            index=d.get("index"),
            order_sensitive=d.get("order_sensitive"),
            final=d["final"],
            extra={k: v for k, v in d.items() if k not in known},
        )
