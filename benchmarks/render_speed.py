"""Time per image of each backend and preset, and the raster backend's images per core-second.

    PYTHONPATH=src python benchmarks/render_speed.py --backend raster --samples 10 [--threads 1]
    PYTHONPATH=src python benchmarks/render_speed.py --backend cycles --presets preview default

Each sample (from the real sampler) gives four images (init.C, fin.L, fin.C, fin.R). For
every image the colour image and the object-index mask are rendered; the figures are wall-clock
seconds and CPU seconds of the process (all threads), per image. `--threads 1` pins Mesa's
llvmpipe to one thread, so raster images per CPU second are images per second per core.
The mask alone (the occlusion check's cost) is timed too.
"""

from __future__ import annotations

import argparse
import os
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("raster", "cycles"), default="raster")
    ap.add_argument("--presets", nargs="+", default=None)
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument(
        "--threads", type=int, default=0, help="llvmpipe threads (raster), Cycles threads"
    )
    args = ap.parse_args()
    if args.backend == "raster" and args.threads:
        os.environ["LP_NUM_THREADS"] = str(args.threads)

    from tvr.trance.render import make_renderer
    from tvr.trance.render.fixtures import random_samples
    from tvr.trance.render.scene import sample_views

    presets = args.presets or (
        ["preview", "default", "paper"] if args.backend == "raster" else ["preview", "default"]
    )
    scenes = [d for s in random_samples(args.samples, seed=args.seed) for _, d in sample_views(s)]
    options = {"threads": args.threads} if args.backend == "cycles" and args.threads else {}
    for preset in presets:
        r = make_renderer(args.backend, preset, **options)
        r.render(scenes[0])  # warm up (shader compilation, kernel loading)
        t, c = time.perf_counter(), time.process_time()
        for d in scenes:
            r.render(d)
        wall = (time.perf_counter() - t) / len(scenes)
        cpu = (time.process_time() - c) / len(scenes)
        t, c = time.perf_counter(), time.process_time()
        for d in scenes:
            r.render(d, image=False)
        mwall = (time.perf_counter() - t) / len(scenes)
        mcpu = (time.process_time() - c) / len(scenes)
        print(
            f"{args.backend}/{preset}: {wall * 1000:.1f} ms per image+mask wall, {cpu * 1000:.1f} ms CPU "
            f"({1 / cpu:.1f} images per CPU second); mask only {mwall * 1000:.1f} ms wall, "
            f"{mcpu * 1000:.1f} ms CPU ({1 / mcpu:.0f} per CPU second); {len(scenes)} images; "
            f"device {r.device}; load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        r.close()


if __name__ == "__main__":
    main()
