"""Agreement of a fast occlusion check with the object-index masks of real Cycles renders.

    PYTHONPATH=src python benchmarks/occlusion_agreement.py --samples 200 \
        [--counts tvr.trance.render.raster:visible_pixel_counts] [--jsonl samples.jsonl]

`--counts` names any callable `visible_pixel_counts(objects, camera_location) -> (10,) array`
(default: the raster backend's mask). For every sample and each of its four images (init.C,
fin.L, fin.C, fin.R) it compares the callable's visible/occluded decision (>= 150 pixels, rules
B1 and B3) with the one from Cycles' mask (preview preset: the mask pass is one sample per pixel
at the pixel centre), for every object in the visible area. It prints the agreement, the
disagreements, and how many checks per CPU second the callable makes.
"""

from __future__ import annotations

import argparse
import importlib
import json
import time

import numpy as np

from tvr.trance.render.fixtures import random_samples
from tvr.trance.render.scene import SAMPLE_IMAGES, is_visible_position, sample_views

THRESHOLD = 150


def load_callable(spec: str):
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name or "visible_pixel_counts")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--counts", default="tvr.trance.render.raster:visible_pixel_counts")
    ap.add_argument("--jsonl", default=None, help="real samples instead of hand-made random ones")
    args = ap.parse_args()

    from tvr.trance.render.cycles import CyclesRenderer

    counts_fn = load_callable(args.counts)
    if args.jsonl:
        with open(args.jsonl, encoding="utf-8") as f:
            samples = [json.loads(line) for line in f if line.strip()][: args.samples]
    else:
        samples = random_samples(args.samples, seed=args.seed)
    cycles = CyclesRenderer("preview")
    pairs = agree = occluded = near = 0
    disagreements = []
    check_cpu = 0.0
    checks = 0
    cycles_wall = 0.0
    for s in samples:
        views = sample_views(s)
        for (stage, _view), (name, desc) in zip(SAMPLE_IMAGES, views, strict=True):
            objects = s["objects"] if stage == "init" else s["final"]
            t = time.perf_counter()
            _, mask = cycles.render(desc, image=False)
            cycles_wall += time.perf_counter() - t
            truth = np.bincount(mask[mask >= 0].ravel(), minlength=10)[:10]
            c = time.process_time()
            got = np.asarray(counts_fn(objects, desc.camera))
            check_cpu += time.process_time() - c
            checks += 1
            for i, o in enumerate(objects):
                if not is_visible_position(o["position"]):
                    continue
                pairs += 1
                a, b = truth[i] >= THRESHOLD, got[i] >= THRESHOLD
                agree += int(a == b)
                occluded += int(not a)
                near += int(abs(int(truth[i]) - THRESHOLD) < 50)
                if a != b:
                    disagreements.append((name, i, int(truth[i]), int(got[i])))
    print(
        f"samples: {len(samples)}; images: {checks}; (object, view) pairs in the visible area: {pairs}"
    )
    print(
        f"occluded (< {THRESHOLD} px) in Cycles: {occluded}; within 50 px of the threshold: {near}"
    )
    print(f"agreement with Cycles masks: {agree}/{pairs} = {100.0 * agree / max(pairs, 1):.2f}%")
    for name, i, t, g in disagreements[:20]:
        print(f"  disagree: {name} object {i}: Cycles {t} px, check {g} px")
    print(f"check speed: {checks / max(check_cpu, 1e-9):.0f} checks per CPU second ({args.counts})")
    print(f"Cycles mask pass: {cycles_wall / max(checks, 1):.3f} s per image (wall)")


if __name__ == "__main__":
    main()
