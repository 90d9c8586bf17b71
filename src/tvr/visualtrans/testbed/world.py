"""Rendered manipulation episodes with known truth, written as EgoDex does (TASK/N.mp4 + N.hdf5).

Four scenes of the release, drawn with the raster renderer of `tvr.render` (CLEVR's colours,
cubes, spheres and cylinders on a grey table; a camera in front, looking down at the table):

* build_unstack_lego: 3-4 blocks spread in a row are stacked one by one (even episodes), or a
  stack is taken apart (odd episodes: the same motion played backwards);
* insert_remove_bookshelf: three books in a row; two swap places, or one is lifted and put back;
* pick_place_food: items moved between a plate (left) and a basket (right);
* sort_beads: scattered beads, some colours gathered into groups.

Every transition is a lift, a move and a lowering of one object over `FRAMES_PER_MOVE` frames.
Episode 0 of insert_remove_bookshelf ends with a grey slab (a "hand") over the row: its truth
says it is unusable (occlusion), so the filter has something to reject.

truth.jsonl (one line per episode): episode, scene, usable, reason, metadata (the scene
family's schema, `tvr.visualtrans.build.schemas`, as the pipeline's annotator must
write it). The HDF5 file holds the attribute `llm_description` (EgoDex's language annotation)
and, like EgoDex, a `transforms/camera` dataset (4 x 4 poses per frame; here fixed).
"""

from __future__ import annotations

import itertools
import math
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from tvr.core.jsonl import write_json, write_jsonl

SCENES = ("build_unstack_lego", "insert_remove_bookshelf", "pick_place_food", "sort_beads")
COLORS = ("red", "blue", "green", "yellow", "purple", "cyan", "brown", "gray")
RGB = {"gray": (87, 87, 87), "red": (173, 35, 35), "blue": (42, 75, 215), "green": (29, 105, 20),
       "brown": (129, 74, 25), "purple": (129, 38, 192), "cyan": (41, 208, 208),
       "yellow": (255, 238, 51), "white": (230, 230, 230), "dark": (60, 40, 20)}  # fmt: skip
FRAMES_PER_MOVE = 8
FPS = 10
WIDTH, HEIGHT = 320, 240
CAMERA = (0.0, -7.5, 6.5)
LIFT = 1.8


@dataclass(frozen=True)
class Body:
    name: str
    shape: str
    color: str
    half: tuple[float, float, float]
    pos: tuple[float, float, float]


def _state(bodies: list[Body]) -> dict[str, Body]:
    return {b.name: b for b in bodies}


def _moved(state: dict[str, Body], name: str, pos: tuple[float, float, float]) -> dict[str, Body]:
    out = dict(state)
    out[name] = replace(state[name], pos=pos)
    return out


def _frames_between(a: dict[str, Body], b: dict[str, Body]) -> list[dict[str, Body]]:
    """Lift, carry, lower each object that moved (one at a time)."""
    frames = []
    moving = [n for n in a if a[n].pos != b[n].pos]
    for name in moving:
        p0, p1 = np.array(a[name].pos), np.array(b[name].pos)
        for i in range(1, FRAMES_PER_MOVE + 1):
            t = i / FRAMES_PER_MOVE
            xy = p0[:2] + (p1[:2] - p0[:2]) * t
            z = p0[2] + (p1[2] - p0[2]) * t + LIFT * math.sin(math.pi * t)
            frames.append(_moved(a, name, (float(xy[0]), float(xy[1]), float(z))))
        a = _moved(a, name, tuple(float(v) for v in p1))  # type: ignore[arg-type]
    return frames


def block(name: str, color: str, x: float, y: float, level: int = 0) -> Body:
    return Body(name, "cube", color, (0.3, 0.3, 0.3), (x, y, 0.3 + 0.6 * level))


def stack_episode(i: int, rng: np.random.Generator) -> tuple[list[dict], dict[str, Any]]:
    k = 3 + int(rng.integers(2))
    colors = list(rng.choice(COLORS[:6], size=k, replace=False))
    names = [f"{c} block" for c in colors]
    xs = np.linspace(-2.0, 2.0, k)
    ys = rng.permutation(np.linspace(-0.6, 0.3, k))
    bodies = [block(n, c, float(x), float(y)) for n, c, x, y in zip(names, colors, xs, ys, strict=False)]
    order = [names[j] for j in rng.permutation(k)]  # bottom to top
    states = [_state(bodies)]
    for level, n in enumerate(order):
        states.append(_moved(states[-1], n, (0.0, 1.6, 0.3 + 0.6 * level)))
    direction = "stack" if i % 2 == 0 else "unstack"
    steps = [{"object": order[0], "onto": "surface"}]
    steps += [{"object": order[j], "onto": order[j - 1]} for j in range(1, k)]
    meta = {"direction": direction, "objects": names, "spread_order": names,
            "closest": names[int(np.argmin(ys))], "stack": order, "steps": steps}  # fmt: skip
    frames = _timeline(states)
    if direction == "unstack":
        frames = frames[::-1]
    return frames, meta


def _timeline(states: list[dict[str, Body]]) -> list[dict[str, Body]]:
    frames = [states[0]] * 3
    for a, b in itertools.pairwise(states):
        frames += _frames_between(a, b) + [b] * 2
    return frames + [states[-1]] * 2


def row_episode(i: int, rng: np.random.Generator) -> tuple[list[dict], dict[str, Any]]:
    colors = list(rng.choice(COLORS[:6], size=3, replace=False))
    names = [f"{c} book" for c in colors]
    xs = (-1.0, 0.0, 1.0)
    bodies = [Body(n, "cube", c, (0.18, 0.4, 0.6), (x, 0.5, 0.6)) for n, c, x in zip(names, colors, xs, strict=False)]
    states = [_state(bodies)]
    if i % 3 == 2:  # one book out and back: the order does not change
        j = int(rng.integers(3))
        out = _moved(states[0], names[j], (xs[j], -1.2, 0.6))
        states += [out, states[0]]
        final = list(names)
    else:
        a, b = sorted(rng.choice(3, size=2, replace=False))
        park = _moved(states[0], names[a], (xs[a], -1.2, 0.6))
        swap = _moved(park, names[b], (xs[a], 0.5, 0.6))
        states += [park, swap, _moved(swap, names[a], (xs[b], 0.5, 0.6))]
        final = list(names)
        final[a], final[b] = final[b], final[a]
    meta = {"objects": names, "initial_order": names, "final_order": final}
    return _timeline(states), meta


PLATE = (-1.6, 0.3)
BASKET = (1.6, 0.3)


def food_episode(i: int, rng: np.random.Generator) -> tuple[list[dict], dict[str, Any]]:
    kinds = [("red", "sphere", "apple"), ("yellow", "sphere", "lemon"), ("green", "cube", "cake"),
             ("brown", "cube", "bread"), ("purple", "sphere", "plum")]  # fmt: skip
    picked = [kinds[j] for j in sorted(rng.choice(len(kinds), size=4, replace=False))]
    names = [f"{c} {n}" for c, _, n in picked]
    on_plate = [bool(b) for b in rng.integers(2, size=4)]
    offsets = [(-0.4, -0.3), (0.4, -0.3), (-0.4, 0.4), (0.4, 0.4)]

    def spot(j: int, plate: bool) -> tuple[float, float, float]:
        cx, cy = PLATE if plate else BASKET
        return (cx + offsets[j][0], cy + offsets[j][1], 0.3)

    bodies = [Body(n, s, c, (0.25, 0.25, 0.25), spot(j, p))
              for j, ((c, s, _), n, p) in enumerate(zip(picked, names, on_plate, strict=False))]  # fmt: skip
    fixtures = [Body("plate", "cylinder", "white", (1.0, 1.0, 0.04), (*PLATE, 0.04)),
                Body("basket", "cube", "dark", (0.95, 0.95, 0.04), (*BASKET, 0.04))]  # fmt: skip
    to_plate = i % 2 == 0
    movers = [j for j in range(4) if on_plate[j] != to_plate]
    if not movers:
        j = int(rng.integers(4))
        on_plate[j] = not to_plate
        bodies[j] = replace(bodies[j], pos=spot(j, on_plate[j]))
        movers = [j]
    n_move = 1 + int(rng.integers(len(movers)))
    states = [_state(fixtures + bodies)]
    after = list(on_plate)
    for j in movers[:n_move]:
        after[j] = to_plate
        states.append(_moved(states[-1], names[j], spot(j, to_plate)))
    meta = {"plate_before": [n for n, p in zip(names, on_plate, strict=False) if p],
            "plate_after": [n for n, p in zip(names, after, strict=False) if p],
            "basket_before": [n for n, p in zip(names, on_plate, strict=False) if not p],
            "basket_after": [n for n, p in zip(names, after, strict=False) if not p]}  # fmt: skip
    return _timeline(states), meta


def beads_episode(i: int, rng: np.random.Generator) -> tuple[list[dict], dict[str, Any]]:
    k = 2 + int(rng.integers(2))
    colors = list(rng.choice(COLORS[:6], size=k, replace=False))
    beads = [(c, j) for c in colors for j in range(2)]
    grid = [(x, y) for x in np.linspace(-2.2, 2.2, 5) for y in (-0.8, 0.9)]
    cells = rng.permutation(len(grid))
    bodies = []
    for (c, j), cell in zip(beads, cells, strict=False):
        x, y = grid[cell]
        bodies.append(Body(f"{c} bead {j + 1}", "sphere", c, (0.2, 0.2, 0.2), (float(x), float(y), 0.2)))
    # scattered start: no two beads of one colour side by side (the grid keeps them 1.1 apart)
    grouped = 1 + int(rng.integers(k))
    states = [_state(bodies)]
    for _g, c in enumerate(colors[:grouped]):
        first = states[-1][f"{c} bead 1"].pos
        states.append(_moved(states[-1], f"{c} bead 2", (first[0] + 0.42, first[1], 0.2)))
    meta = {"colors": colors, "groups_before": 0, "groups_after": grouped}
    return _timeline(states), meta


MAKERS = {"build_unstack_lego": stack_episode, "insert_remove_bookshelf": row_episode,
          "pick_place_food": food_episode, "sort_beads": beads_episode}  # fmt: skip
LANGUAGE = {"build_unstack_lego": "Stack the blocks into a tower, or take the tower apart.",
            "insert_remove_bookshelf": "Take books out of the row and put them back.",
            "pick_place_food": "Move food items between the plate and the basket.",
            "sort_beads": "Gather the beads of one colour together."}  # fmt: skip


def _scene_objects(state: dict[str, Body]):
    from tvr.render.scene import SceneObject

    out = []
    for idx, b in enumerate(state.values()):
        rgb = tuple(v / 255.0 for v in RGB[b.color])
        out.append(SceneObject(idx, b.shape, "rubber", b.color, rgb, b.pos, b.half, 0.0,
                               max(b.half[:2])))  # fmt: skip
    return tuple(out)


def _lights():
    from tvr.render.scene import SUN_DIRECTION, Light

    return (Light("key", "area", (6.4, -3.0, 5.4), 400.0, 0.5),
            Light("fill", "area", (-4.7, -4.5, 3.4), 80.0, 1.0),
            Light("back", "area", (-1.1, 6.0, 6.3), 120.0, 1.0),
            Light("sun", "sun", SUN_DIRECTION, 0.3))  # fmt: skip


HAND = Body("hand", "cube", "gray", (1.8, 0.9, 0.25), (0.0, -0.2, 1.9))


def write_video(path: Path, images: list[np.ndarray], fps: int = FPS) -> None:
    """H.264 (libx264, yuv420p) through PyAV, written beside `path` and renamed into place."""
    import av

    tmp = path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")
    with av.open(str(tmp), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height = images[0].shape[1], images[0].shape[0]
        stream.pix_fmt = "yuv420p"
        stream.options = {"crf": "18", "preset": "veryfast"}
        for image in images:
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    os.replace(tmp, path)


def write_hdf5(path: Path, language: str, n_frames: int) -> bool:
    """EgoDex's per-episode HDF5 (the language annotation, the camera poses); False without
    h5py (the video alone is a valid episode)."""
    try:
        import h5py
    except ImportError:
        return False
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with h5py.File(tmp, "w") as f:
        f.attrs["llm_description"] = language
        f.create_dataset("transforms/camera", data=np.repeat(np.eye(4)[None], n_frames, axis=0))
    os.replace(tmp, path)
    return True


def make_testbed(out: str | Path, episodes_per_scene: int = 6, seed: int = 0,
                 scenes: tuple[str, ...] = SCENES, size: tuple[int, int] = (WIDTH, HEIGHT)
                 ) -> dict[str, Any]:  # fmt: skip
    """Render the episodes into OUT/episodes/TASK/N.mp4 (+ N.hdf5) and OUT/truth.jsonl."""
    from tvr.render.presets import Preset
    from tvr.render.raster import RasterRenderer
    from tvr.render.scene import SceneDescription

    out = Path(out)
    renderer = RasterRenderer(Preset("testbed", 2, 4, 8, False, 2.0, 0))
    lights = _lights()
    truth = []
    try:
        for scene in scenes:
            folder = out / "episodes" / scene
            folder.mkdir(parents=True, exist_ok=True)
            for i in range(episodes_per_scene):
                rng = np.random.default_rng([seed, SCENES.index(scene), i])
                frames, meta = MAKERS[scene](i, rng)
                occluded = scene == "insert_remove_bookshelf" and i == 0
                if occluded:
                    frames = frames[:-6] + [{**frames[-1], "hand": HAND}] * 6
                images = [renderer.render_image(SceneDescription(_scene_objects(s), CAMERA, lights,
                                                                 *size))
                          for s in frames]  # fmt: skip
                write_video(folder / f"{i}.mp4", images)
                write_hdf5(folder / f"{i}.hdf5", LANGUAGE[scene], len(images))
                episode = f"{scene}_{i}"
                truth.append({"episode": episode, "scene": scene, "usable": not occluded,
                              "reason": "a hand hides the objects in the end frame" if occluded
                              else "the objects and their change are visible",
                              "metadata": {"scene": scene, "episode": episode, **meta}})  # fmt: skip
    finally:
        renderer.close()
    write_jsonl(out / "truth.jsonl", truth)
    summary = {"episodes": len(truth), "scenes": list(scenes), "size": list(size),
               "episodes_per_scene": episodes_per_scene, "seed": seed,
               "unusable": sum(not t["usable"] for t in truth)}  # fmt: skip
    write_json(out / "testbed.json", summary)
    return summary
