"""Hand-made random TRANCE samples for render tests and benchmarks (a stand-in for the sampler).

They follow the format of `tvr.trance.sample` and the no-overlap rule (centre distance at least
r1 + r2 + 1 grid units), but none of the balancing or visibility rules of the real sampler.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tvr.trance import vocab
from tvr.trance.camera import sample_jitter
from tvr.trance.sample import FORMAT


def _free(pos: tuple[int, int], radius: int, placed: list[tuple[int, int, int]]) -> bool:
    return all(
        (pos[0] - x) ** 2 + (pos[1] - y) ** 2 >= (radius + r + vocab.MIN_GAP) ** 2
        for x, y, r in placed
    )


def random_objects(rng: np.random.Generator, num_visible: int) -> list[dict[str, Any]]:
    """Ten non-overlapping objects, the first `num_visible` of them in the visible area."""
    placed: list[tuple[int, int, int]] = []
    objects = []
    for i in range(vocab.NUM_OBJECTS):
        size = vocab.SIZES[rng.integers(3)]
        radius = vocab.RADIUS_GRID[vocab.SIZES.index(size)]
        for _ in range(10_000):
            if i < num_visible:
                pos = tuple(int(v) for v in rng.integers(-20, 21, size=2))
            else:
                pos = tuple(int(v) for v in rng.integers(-40, 41, size=2))
                if max(abs(pos[0]), abs(pos[1])) <= 20:
                    continue
            if _free(pos, radius, placed):  # type: ignore[arg-type]
                break
        else:  # pragma: no cover - ten objects always fit
            raise RuntimeError("could not place the objects")
        placed.append((pos[0], pos[1], radius))
        objects.append(
            {
                "shape": vocab.SHAPES[rng.integers(3)],
                "size": size,
                "color": vocab.COLORS[rng.integers(8)],
                "material": vocab.MATERIALS[rng.integers(3)],
                "position": [pos[0], pos[1]],
                "rotation": round(float(rng.uniform(0.0, 360.0)), 3),
            }
        )
    return objects


def random_sample(
    rng: np.random.Generator, sample_id: str = "s0", num_visible: int | None = None
) -> dict[str, Any]:
    """A sample dict: random objects, one or two colour/material/shape changes, jitter."""
    if num_visible is None:
        num_visible = int(rng.integers(3, 11))
    objects = random_objects(rng, num_visible)
    final = [dict(o, position=list(o["position"])) for o in objects]
    steps = []
    for _ in range(int(rng.integers(1, 3))):
        obj = int(rng.integers(num_visible))
        attr = ("color", "material", "shape")[rng.integers(3)]
        choices = [v for v in vocab.CATEGORIES[attr] if v != final[obj][attr]]
        value = choices[rng.integers(len(choices))]
        final[obj][attr] = value
        steps.append({"obj": obj, "value": f"{attr}.{value}", "attr": attr})
    cameras, lights = sample_jitter(rng)
    return {
        "format": FORMAT,
        "id": sample_id,
        "num_visible": num_visible,
        "objects": objects,
        "steps": steps,
        "final": final,
        "cameras": cameras,
        "lights": lights,
    }


def random_samples(n: int, seed: int = 0, prefix: str = "s") -> list[dict[str, Any]]:
    """`n` random samples with ids `{prefix}000000`, ... from one seed."""
    rng = np.random.default_rng(seed)
    return [random_sample(rng, f"{prefix}{i:06d}") for i in range(n)]
