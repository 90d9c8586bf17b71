"""Cycles `default` against `paper` on the same N scenes: time per image, speed-up and SSIM.

    PYTHONPATH=src python benchmarks/render_quality.py --images 50 --log /tmp/q50.jsonl [--save DIR]

Each scene is one view of a sample of the real sampler (`fixtures.random_samples`, views rotate
init.C, fin.L, fin.C, fin.R). Scenes are done one at a time, `default` then `paper`, and each
scene's figures are appended to `--log` as one JSON line, so a long run can be read part-way
(`--summary-only`) and resumed (scenes already in the log are skipped). Times are wall-clock
seconds and CPU seconds of the process (all its threads): on a shared machine the CPU seconds are
the steadier figure. SSIM is the usual one (Wang et al. 2004: Gaussian window sigma 1.5, K1 0.01,
K2 0.03) on each RGB channel of the 8-bit images, averaged.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from pathlib import Path

import numpy as np

from tvr.trance.render.fixtures import random_samples
from tvr.trance.render.presets import get_preset
from tvr.trance.render.scene import sample_views


def _gaussian_filter(x: np.ndarray, sigma: float = 1.5, radius: int = 5) -> np.ndarray:
    t = np.arange(-radius, radius + 1)
    k = np.exp(-(t**2) / (2 * sigma**2))
    k /= k.sum()
    pad = np.pad(x, radius, mode="reflect")
    rows = np.lib.stride_tricks.sliding_window_view(pad, 2 * radius + 1, axis=0) @ k
    return np.lib.stride_tricks.sliding_window_view(rows, 2 * radius + 1, axis=1) @ k


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    """Mean SSIM of two uint8 images (H, W, 3), averaged over the channels."""
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    values = []
    for ch in range(a.shape[2]):
        x, y = a[..., ch].astype(np.float64), b[..., ch].astype(np.float64)
        mx, my = _gaussian_filter(x), _gaussian_filter(y)
        sxx = _gaussian_filter(x * x) - mx * mx
        syy = _gaussian_filter(y * y) - my * my
        sxy = _gaussian_filter(x * y) - mx * my
        s = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2))
        values.append(s.mean())
    return float(np.mean(values))


def _summary(records: list[dict]) -> None:
    """Print the speed-up and SSIM over the scenes recorded so far."""
    if not records:
        print("no scenes recorded yet")
        return
    d = np.mean([r["default_wall"] for r in records])
    p = np.mean([r["paper_wall"] for r in records])
    dc = np.mean([r["default_cpu"] for r in records])
    pc = np.mean([r["paper_cpu"] for r in records])
    scores = [r["ssim"] for r in records]
    print(f"scenes: {len(records)} (320x240); load now {os.getloadavg()}")
    print(f"default: {d:.2f} s per image ({dc:.2f} CPU s); paper: {p:.2f} s ({pc:.2f} CPU s)")
    print(f"speed-up default vs paper: {p / d:.1f}x wall, {pc / dc:.1f}x CPU")
    print(
        f"SSIM default vs paper: mean {np.mean(scores):.4f}, min {np.min(scores):.4f}, "
        f"scenes below 0.97: {sum(s < 0.97 for s in scores)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=50, help="number of scenes")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--log", type=Path, required=True, help="JSON lines, one per scene (resumes)")
    ap.add_argument("--save", type=Path, default=None, help="also write the PNGs here")
    ap.add_argument("--summary-only", action="store_true", help="print the log's figures, exit")
    ap.add_argument("--default-samples", type=int, default=None, help="override default's spp")
    args = ap.parse_args()

    records = (
        [json.loads(x) for x in args.log.read_text().splitlines()] if args.log.exists() else []
    )
    if args.summary_only:
        _summary(records)
        return
    done = {r["scene"] for r in records}

    from tvr.trance.render.cycles import CyclesRenderer

    scenes = [sample_views(s)[i % 4] for i, s in enumerate(random_samples(args.images, args.seed))]
    renderer = CyclesRenderer("default")
    presets = {"default": get_preset("default"), "paper": get_preset("paper")}
    if args.default_samples:
        presets["default"] = dataclasses.replace(presets["default"], samples=args.default_samples)
    print(f"presets: {presets}; device {renderer.device}", flush=True)
    for name, desc in scenes:
        if name in done:
            continue
        renderer.set_scene(desc)
        rec: dict = {"scene": name}
        images = {}
        for preset, settings in presets.items():
            renderer.preset = settings
            t, c = time.perf_counter(), time.process_time()
            images[preset] = renderer.render_image(desc)
            rec[f"{preset}_wall"] = time.perf_counter() - t
            rec[f"{preset}_cpu"] = time.process_time() - c
            if args.save:
                from PIL import Image

                args.save.mkdir(parents=True, exist_ok=True)
                Image.fromarray(images[preset]).save(args.save / f"{preset}-{name}")
        rec["ssim"] = ssim(images["default"], images["paper"])
        rec["load"] = os.getloadavg()[0]
        with args.log.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        records.append(rec)
        print(json.dumps(rec), flush=True)
    _summary(records)


if __name__ == "__main__":
    main()
