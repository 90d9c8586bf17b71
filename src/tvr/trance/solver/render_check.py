"""Render-and-compare where the parse is unsure (issue 41, point 2).

Where the parse is doubtful, the solver's candidate explanations are checked against the image:
the final scene each one implies (the initial objects after its steps, in the order the search
found) is drawn with the raster renderer from the base camera of the view it supposes, with the
base lights (the sample's own camera and light jitter are not given to a model, so they are not
read), and compared with the observed final image.

- **Doubt**: another reading of the image lies within one step's energy (`WIDE` = `STEP`) of the
  least: a second pairing (`match_rules` asked for that margin), or the same pairing with one
  of its steps undone whose evidence is under `WIDE` (`alternatives`: a change the parse is
  barely surer of than of no change, an object read as gone that could be hidden). The wider
  pairing search runs only where the usual one shows a doubt already (two readings within
  `MARGIN`, or a step of evidence under `WIDE`); a sure parse costs nothing more and renders
  nothing.
- **Distance**: both images at 160x120 (the observed one as the parser reads it), halved to 80x60
  and blurred (Gaussian, sigma 1 pixel), per-pixel L1 over the three channels, summed over the
  pixels where the candidates' renders differ from one another (`REGION` levels). What is common
  to all candidates (the camera jitter's offset, the look of another renderer) then weighs on none.
- **Re-ranking**: among the candidates of the best kind (an order that breaks no rule; in Basic,
  one step), the one of least distance wins if it is nearer the image than the least-energy one by
  at least `MIN_GAIN` of that one's distance; otherwise (renders alike: an object hidden or gone,
  the same pixels) the least energy stays.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from tvr.trance.solver.matching import STEP

#: alternative explanations within this energy (nats) of the least make the parse doubtful
WIDE = STEP
#: candidates rendered at most per sample (least energy first)
MAX_CANDIDATES = 6
#: a pixel belongs to the compared region when the candidates' renders differ there by more than
#: this (8-bit levels, summed over the channels, after the blur)
REGION = 12.0
#: the nearest render must beat the least-energy one's distance by this fraction to win
MIN_GAIN = 0.15
#: the size the images are compared at (the parser's input, 160x120)
SIZE = (160, 120)

_RENDERER: Any = None


def alternatives(initial: np.ndarray, e: Any, wide: float = WIDE) -> list[Any]:
    """The readings next to explanation `e` that the pairing search does not list (it scores
    one reading per pairing): each step of `e` whose evidence (what its absence would cost the
    parse more, `Explanation.evidence`) is under `wide`, undone: an attribute change kept as it
    was, an object read as gone read as hidden where it stood."""
    from tvr.trance.solver.matching import OUT, Explanation

    out = []
    for (i, col), margin in e.evidence.items():
        if not margin < wide:
            continue
        evidence = {k: v for k, v in e.evidence.items() if k != (i, col)}
        if col == OUT:
            out.append(Explanation(e.target, e.out - {i}, e.cost + margin, e.confidence,
                                   e.steps - 1, e.hidden | {i}, evidence))  # fmt: skip
            continue
        target = e.target.copy()
        target[i, col] = initial[i, col]
        out.append(Explanation(target, e.out, e.cost + margin, e.confidence, e.steps - 1,
                               e.hidden, evidence))  # fmt: skip
    return out


def _renderer() -> Any:
    """One raster renderer per process (made on first use)."""
    global _RENDERER
    if _RENDERER is None:
        from tvr.trance.render.images import make_renderer

        _RENDERER = make_renderer("raster", "default")
    return _RENDERER


def render_state(state: np.ndarray, rotations: list[float], view: str) -> np.ndarray:
    """The (120, 160, 3) uint8 raster image of a state (10, 6) from the base camera of `view`,
    under the base lights."""
    from tvr.trance.render.scene import build_scene
    from tvr.trance.world.camera import CAMERA_BASE
    from tvr.trance.world.simulator import array_to_objects

    desc = build_scene(array_to_objects(state, rotations), CAMERA_BASE[view])
    desc = dataclasses.replace(desc, width=SIZE[0], height=SIZE[1])
    image, _ = _renderer().render(desc)
    return np.asarray(image)


def _prepare(image: np.ndarray) -> np.ndarray:
    """The image (160x120 or 320x240) brought to 80x60 by means of 2x2 blocks, and blurred."""
    from scipy.ndimage import gaussian_filter

    a = np.asarray(image, dtype=np.float32)[..., :3]
    while a.shape[0] > SIZE[1] // 2:  # 320x240 -> 160x120 (as the parser reads it) -> 80x60
        h, w = a.shape[0] // 2 * 2, a.shape[1] // 2 * 2
        a = a[:h, :w].reshape(h // 2, 2, w // 2, 2, 3).mean(axis=(1, 3))
    return gaussian_filter(a, sigma=(1.0, 1.0, 0.0))


def distances(observed: np.ndarray, renders: list[np.ndarray]) -> np.ndarray:
    """Per render, its L1 distance to the observed image over the pixels where the renders differ
    from one another (all zeros when they are alike everywhere)."""
    obs = _prepare(observed)
    rs = np.stack([_prepare(r) for r in renders])
    spread = np.abs(rs - rs[:1]).sum(axis=-1).max(axis=0)
    region = spread > REGION
    if not region.any():
        return np.zeros(len(renders))
    return np.array([float(np.abs(r - obs).sum(axis=-1)[region].sum()) for r in rs])


def pick(observed: np.ndarray, renders: list[np.ndarray]) -> tuple[int, np.ndarray]:
    """The index of the render the image chooses (0, the least-energy one, unless another is
    nearer by MIN_GAIN of its distance), and the distances."""
    d = distances(observed, renders)
    k = int(np.argmin(d))
    if k != 0 and d[k] < (1.0 - MIN_GAIN) * d[0]:
        return k, d
    return 0, d
