"""Cycles `default` against `paper` on the same scenes: time per image, speed-up and SSIM.

    PYTHONPATH=src python benchmarks/render_quality.py --images 6 [--save DIR]

Each scene is one view of a hand-made random sample (views rotate init.C, fin.L, fin.C, fin.R).
Times are wall-clock seconds and CPU seconds of the process (all its threads): on a shared machine
the CPU seconds are the steadier figure. SSIM is the usual one (Wang et al. 2004: Gaussian window sigma 1.5, K1 0.01, K2 0.03) on each RGB
channel of the 8-bit images, averaged.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--save", type=Path, default=None, help="write the PNGs (and paper times) here")
    ap.add_argument(
        "--paper-from",
        type=Path,
        default=None,
        help="reuse the paper images and times that an earlier run wrote with --save",
    )
    ap.add_argument("--default-samples", type=int, default=None, help="override default's spp")
    args = ap.parse_args()

    from tvr.trance.render.cycles import CyclesRenderer

    scenes = []
    for i, s in enumerate(random_samples(args.images, seed=args.seed)):
        scenes.append(sample_views(s)[i % 4])
    renderer = CyclesRenderer("default")
    images: dict[str, list[np.ndarray]] = {}
    times: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    if args.paper_from:
        from PIL import Image

        saved = json.loads((args.paper_from / "paper-times.json").read_text())
        for name, _ in scenes:
            images.setdefault("paper", []).append(
                np.asarray(Image.open(args.paper_from / f"paper-{name}").convert("RGB"))
            )
            times.setdefault("paper", []).append(saved[name]["wall"])
            cpu.setdefault("paper", []).append(saved[name]["cpu"])
    for preset in ("default",) if args.paper_from else ("default", "paper"):
        renderer.preset = get_preset(preset)
        if preset == "default" and args.default_samples:
            renderer.preset = dataclasses.replace(renderer.preset, samples=args.default_samples)
        for name, desc in scenes:
            renderer.set_scene(desc)
            t, c = time.perf_counter(), time.process_time()
            img = renderer.render_image(desc)
            times.setdefault(preset, []).append(time.perf_counter() - t)
            cpu.setdefault(preset, []).append(time.process_time() - c)
            images.setdefault(preset, []).append(img)
            if args.save:
                from PIL import Image

                args.save.mkdir(parents=True, exist_ok=True)
                Image.fromarray(img).save(args.save / f"{preset}-{name}")
            print(
                f"{preset:8s} {name}: {times[preset][-1]:.2f} s wall, {cpu[preset][-1]:.2f} s CPU",
                flush=True,
            )
    if args.save and not args.paper_from:
        record = {
            name: {"wall": w, "cpu": c}
            for (name, _), w, c in zip(scenes, times["paper"], cpu["paper"], strict=True)
        }
        (args.save / "paper-times.json").write_text(json.dumps(record, indent=1))
    print(f"default preset: {renderer.preset}")
    scores = [ssim(a, b) for a, b in zip(images["default"], images["paper"], strict=True)]
    d, p = np.mean(times["default"]), np.mean(times["paper"])
    dc, pc = np.mean(cpu["default"]), np.mean(cpu["paper"])
    print(f"device: {renderer.device}; images: {len(scenes)} (320x240); load {os.getloadavg()}")
    print(f"default: {d:.2f} s per image ({dc:.2f} CPU s); paper: {p:.2f} s ({pc:.2f} CPU s)")
    print(f"speed-up default vs paper: {p / d:.1f}x wall, {pc / dc:.1f}x CPU")
    print(
        f"SSIM default vs paper: mean {np.mean(scores):.4f}, min {np.min(scores):.4f} "
        f"({', '.join(f'{s:.3f}' for s in scores)})"
    )


if __name__ == "__main__":
    main()
