"""TRANCE-clips testbed speed: samples and clips per second, and where a sample's time goes.

    HF_HUB_OFFLINE=1 python benchmarks/tranco_testbed_speed.py --num 200 [--workers 1] \
        [--size 160x120] [--preset default] [--threads 1]

Two figures:
1. the whole job (`generate_clips`, what `tvr tranco testbed --num N` runs): wall seconds,
   samples/s, clips/s and frames/s, and the workers' CPU seconds (all threads) per sample;
2. stage by stage over the first shard's samples, in this process: balanced sampling, rendering
   (state images and clip frames), JPEG encoding (CPU and wall seconds per sample).

`--threads` caps Mesa's llvmpipe threads (LP_NUM_THREADS) so figures compare across machines;
the load average before and after is printed, since the project machine is shared.
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num", type=int, default=200)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--size", default="160x120")
    parser.add_argument("--preset", default="default")
    parser.add_argument(
        "--threads", type=int, default=1, help="llvmpipe threads (0: Mesa's default)"
    )
    parser.add_argument("--stage-samples", type=int, default=20)
    args = parser.parse_args()
    if args.threads:
        os.environ["LP_NUM_THREADS"] = str(args.threads)

    from tvr.testbeds.clips import ClipsConfig, SampleRenderer, generate_clips, shard_samples
    from tvr.tranco.data.build import TABLE2_SPLIT, allocate
    from tvr.tranco.data.candidates import tiny_candidates

    width, height = (int(x) for x in args.size.split("x"))
    config = ClipsConfig(sizes=tuple(allocate(args.num, TABLE2_SPLIT)), width=width,
                         height=height, preset=args.preset)  # fmt: skip
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="tranco-testbed-") as tmp:
        t0 = time.perf_counter()
        report = generate_clips(config, Path(tmp) / "tc", tiny_candidates, args.workers, False)
        wall = time.perf_counter() - t0
    samples, clips = sum(report.samples.values()), sum(report.clips.values())
    print(f"job: {samples} samples, {clips} clips, {report.frames} images in {wall:.1f} s wall "
          f"with {args.workers} worker(s), llvmpipe threads {args.threads or 'default'}, "
          f"{width}x{height}, preset {args.preset}")  # fmt: skip
    print(f"  {samples / wall:.2f} samples/s, {clips / wall:.2f} clips/s, "
          f"{report.frames / wall:.1f} images/s (wall, whole job)")  # fmt: skip
    print(f"  workers: {report.render_seconds:.1f} s wall, {report.render_cpu_seconds:.1f} s CPU "
          f"= {report.render_cpu_seconds / samples:.3f} CPU s per sample")  # fmt: skip
    print(f"load average after: {os.getloadavg()}")

    from PIL import Image

    from tvr.trance.render import make_renderer

    renderer = make_renderer("raster", config.preset)
    images = SampleRenderer(config, renderer)
    n = args.stage_samples
    stages = {"sample": [0.0, 0.0], "render": [0.0, 0.0], "jpeg": [0.0, 0.0]}

    def timed(name, fn, *a):
        c, w = time.process_time(), time.perf_counter()
        out = fn(*a)
        stages[name][0] += time.process_time() - c
        stages[name][1] += time.perf_counter() - w
        return out

    picked = timed("sample", lambda: shard_samples(
        ClipsConfig(**{**config.to_dict(), "sizes": (n, 0, 0), "shard_size": n}), "train", 0))  # fmt: skip
    renders = 0
    for sample in picked:
        initial, final, frames = timed("render", images.render, sample)
        renders += 2 + sum(len(f) for f in frames)
        for image in [initial, final, *(f for clip in frames for f in clip)]:
            timed("jpeg", lambda im: Image.fromarray(im).save(io.BytesIO(), "JPEG", quality=95),
                  image)  # fmt: skip
    renderer.close()
    print(f"stages over {n} samples ({renders} images), per sample: " + ", ".join(
        f"{k} {v[0] / n * 1000:.1f} ms CPU / {v[1] / n * 1000:.1f} ms wall" for k, v in stages.items()))  # fmt: skip


if __name__ == "__main__":
    main()
