"""Perception: the pluggable parser of the final image.

A perception object has `parse_final(sample_id, view) -> ParsedScene`: the objects seen in the
final image taken by camera `view` (`{id}-fin.{view}.png`). The initial scene needs no parser:
the paper gives a model the initial objects' attributes with their indices (the sample's
`objects`).

`tvr.trance.solver.images.ImagePerception` (`--perception parser`) parses the final images
with a trained scene parser. `GroundTruthPerception` is the oracle ablation
(`tvr solve --perception gt`): it reads the
sample's final scene, keeps the objects in the visible area (the only ones an image shows), and
reports their positions in the camera's frame, with confidence 1 and their true index. It is
the only reader of the final scene in the solver.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from tvr.trance.choices import PERCEPTIONS
from tvr.trance.solver.scene import ParsedObject, ParsedScene, from_world
from tvr.trance.world import vocab


class Perception(Protocol):
    def parse_final(self, sample_id: str, view: str) -> ParsedScene: ...


class GroundTruthPerception:
    """The oracle parse of the final images, from the final scenes (id -> 10 object dicts)."""

    def __init__(self, finals: Mapping[str, list[dict[str, Any]]]) -> None:
        self._finals = dict(finals)

    @classmethod
    def from_samples(cls, samples: Iterable[Any]) -> GroundTruthPerception:
        """From `Sample` objects or sample dicts (their `final`)."""
        finals = {}
        for s in samples:
            if isinstance(s, Mapping):
                finals[str(s["id"])] = s["final"]
            else:
                finals[s.id] = s.final
        return cls(finals)

    def parse_final(self, sample_id: str, view: str) -> ParsedScene:
        objects = []
        for i, o in enumerate(self._finals[sample_id]):
            x, y = o["position"]
            if not (
                vocab.VISIBLE_MIN <= x <= vocab.VISIBLE_MAX
                and vocab.VISIBLE_MIN <= y <= vocab.VISIBLE_MAX
            ):
                continue  # outside the visible area: not in the image
            objects.append(
                ParsedObject(
                    shape=o["shape"],
                    size=o["size"],
                    color=o["color"],
                    material=o["material"],
                    position=from_world(float(x), float(y), view),
                    confidence=1.0,
                    index=i,
                )
            )
        return ParsedScene(tuple(objects), view=view, notes={"exact": True})


def make_perception(
    name: str,
    samples: Iterable[Any],
    parser: str | None = None,
    data: str | None = None,
    split: str = "test",
    images: str | None = None,
) -> Perception:
    """The oracle ("gt", from the samples' final scenes) or a trained scene parser ("parser":
    `parser` a run folder or checkpoint, reading the images of `data`'s `split`, or the PNGs of
    the folder `images`)."""
    if name == "gt":
        return GroundTruthPerception.from_samples(samples)
    if name == "parser":
        from tvr.trance.perception.predict import SceneParser
        from tvr.trance.solver.images import ImagePerception

        if parser is None or (data is None and images is None):
            raise ValueError("the parser perception needs a parser run and the images")
        return ImagePerception(SceneParser.load(parser), data, split, images=images)
    raise ValueError(f"unknown perception {name!r}; known: {', '.join(PERCEPTIONS)}")
