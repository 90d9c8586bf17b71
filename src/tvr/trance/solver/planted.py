"""The oracle parse with misreadings planted in it: a perception that doubts like a parser.

`PlantedPerception` reads the final scene as `GroundTruthPerception` does, but reports each
attribute as a distribution (the true value at `sure`, the rest shared by the others), and, for
the samples named in `plants`, one attribute of one object misread: the wrong value at
`p_wrong`, the true one at `p_true`. It serves the render check's tests and its measurement
(benchmarks/trance_render_check.py) where no trained parser is at hand; its images are the
dataset's (`final_image`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from tvr.trance.solver.perception import GroundTruthPerception
from tvr.trance.solver.scene import ParsedObject, ParsedScene
from tvr.trance.world import vocab

ATTRIBUTE_VALUES = {
    "size": vocab.SIZES,
    "color": vocab.COLORS,
    "material": vocab.MATERIALS,
    "shape": vocab.SHAPES,
}


def _distribution(values: tuple[str, ...], top: str, p_top: float, second: str | None = None,
                  p_second: float = 0.0) -> tuple[float, ...]:  # fmt: skip
    rest = [v for v in values if v not in (top, second)]
    left = max(1.0 - p_top - p_second, 1e-6) / max(len(rest), 1)
    return tuple(p_top if v == top else p_second if v == second else left for v in values)


class PlantedPerception:
    """Oracle scenes with probabilities, one attribute misread per planted sample.

    finals: sample id -> its final objects; images: (sample id, view) -> the final image
    (uint8, 160x120 or 320x240); plants: sample id -> (object index, attribute, value read)."""

    def __init__(
        self,
        finals: Mapping[str, list[dict[str, Any]]],
        images: Callable[[str, str], np.ndarray],
        plants: Mapping[str, tuple[int, str, str]] | None = None,
        sure: float = 0.999,
        p_wrong: float = 0.97,
        p_true: float = 0.02,
    ) -> None:
        self._gt = GroundTruthPerception(finals)
        self._images = images
        self.plants = dict(plants or {})
        self.sure, self.p_wrong, self.p_true = sure, p_wrong, p_true

    def parse_final(self, sample_id: str, view: str) -> ParsedScene:
        scene = self._gt.parse_final(sample_id, view)
        plant = self.plants.get(sample_id)
        objects = []
        for o in scene.objects:
            probs = {a: _distribution(vals, getattr(o, a), self.sure)
                     for a, vals in ATTRIBUTE_VALUES.items()}  # fmt: skip
            read = {}
            if plant is not None and plant[0] == o.index:
                _, attr, wrong = plant
                probs[attr] = _distribution(ATTRIBUTE_VALUES[attr], wrong, self.p_wrong,
                                            getattr(o, attr), self.p_true)  # fmt: skip
                read[attr] = wrong
            # no identities: the rule matching must find the pairs itself
            objects.append(replace(o, index=None, probabilities=probs, confidence=0.99,
                                   score=0.99, **read))  # fmt: skip
        return ParsedScene(tuple(objects), view=view)

    def final_image(self, sample_id: str, view: str) -> np.ndarray:
        return np.asarray(self._images(sample_id, view))


def plant_misreadings(
    samples: list[Mapping[str, Any]], every: int = 1, seed: int = 0
) -> dict[str, tuple[int, str, str]]:
    """For every `every`-th sample, one visible final object and one of its attributes misread
    as another value (seeded)."""
    rng = np.random.default_rng(seed)
    out = {}
    for k, s in enumerate(samples):
        if k % every:
            continue
        visible = [i for i, o in enumerate(s["final"])
                   if vocab.VISIBLE_MIN <= o["position"][0] <= vocab.VISIBLE_MAX
                   and vocab.VISIBLE_MIN <= o["position"][1] <= vocab.VISIBLE_MAX]  # fmt: skip
        if not visible:
            continue
        i = int(rng.choice(visible))
        attr = str(rng.choice(list(ATTRIBUTE_VALUES)))
        true = s["final"][i][attr]
        wrong = str(rng.choice([v for v in ATTRIBUTE_VALUES[attr] if v != true]))
        out[str(s["id"])] = (i, attr, wrong)
    return out


__all__ = ["ParsedObject", "PlantedPerception", "plant_misreadings"]
