"""`tvr vtt build` speed: state extraction from H.264 videos of YouTube-like length and size.

    python benchmarks/vtt_build_speed.py [--videos 12] [--seconds 180] [--size 640x360]
                                         [--fps 30] [--steps 5] [--workers 1] [--keep DIR]

Writes one H.264 video (yuv420p, x264 preset veryfast, crf 23, a key frame every 250 frames as
x264's default; a moving pattern so that frames differ), links it under --videos YouTube ids,
writes a COIN.json whose videos have --steps steps at random times (seed 0, each step 5-20 s,
in order, not overlapping), and times `tvr.vtt.data.build.build` on it: samples and state images
per wall second and per CPU second of this process and its workers. The numbers depend on the
codec, size, key-frame interval and where the steps fall (a seek per state more than 5 s after
the previous one); real COIN videos vary in all four.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from tvr.vtt.data.build import BuildConfig, build


def write_video(path: Path, seconds: float, fps: int, width: int, height: int) -> None:
    import av

    yy, xx = np.mgrid[0:height, 0:width]
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"preset": "veryfast", "crf": "23"}
        for i in range(int(seconds * fps)):
            t = i / fps
            r = (128 + 100 * np.sin(xx / 37 + t)).astype(np.uint8)
            g = (128 + 100 * np.sin(yy / 23 - 0.7 * t)).astype(np.uint8)
            b = ((xx + yy + 8 * i) % 256).astype(np.uint8)
            frame = av.VideoFrame.from_ndarray(np.dstack([r, g, b]), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def coin_steps(rng: np.random.Generator, seconds: float, n: int) -> list[dict]:
    steps, t = [], float(rng.uniform(0, 10))
    for k in range(n):
        length = float(rng.uniform(5, 20))
        gap = float(rng.uniform(0, max(0.0, (seconds - t) / (n - k) - length)))
        start = min(t + gap, seconds - length)
        steps.append({"id": str(k), "segment": [round(start, 2), round(start + length, 2)],
                      "label": f"step {k}"})  # fmt: skip
        t = start + length
    return steps


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--videos", type=int, default=12)
    ap.add_argument("--seconds", type=float, default=180.0)
    ap.add_argument("--size", default="640x360")
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--keep", type=Path, help="make the files here and keep them")
    args = ap.parse_args()
    width, height = (int(x) for x in args.size.split("x"))
    root = args.keep or Path(tempfile.mkdtemp(prefix="vtt-build-speed-"))
    videos = root / "videos"
    videos.mkdir(parents=True, exist_ok=True)
    source = videos / "source.mp4"
    if not source.exists():
        t0 = time.perf_counter()
        write_video(source, args.seconds, args.fps, width, height)
        print(f"wrote {source} ({source.stat().st_size / 1e6:.1f} MB) in "
              f"{time.perf_counter() - t0:.1f} s")  # fmt: skip
    rng = np.random.default_rng(0)
    database = {}
    for i in range(args.videos):
        vid = f"video{i:04d}"
        link = videos / f"{vid}.mp4"
        if not link.exists():
            link.symlink_to(source.name)
        database[vid] = {"class": "MakeSandwich", "subset": "training", "recipe_type": 1,
                         "duration": args.seconds,
                         "annotation": coin_steps(rng, args.seconds, args.steps)}  # fmt: skip
    coin = root / "COIN.json"
    coin.write_text(json.dumps({"database": database}))
    out = root / "out"
    shutil.rmtree(out, ignore_errors=True)
    config = BuildConfig(coin=str(coin), shard_size=max(1, args.videos // (2 * args.workers)))
    c0, t0 = cpu_seconds(), time.perf_counter()
    result = build(config, [videos], out, workers=args.workers, progress=False)
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    states = result.records * (args.steps + 1)
    print(f"{result.records} samples, {states} state images ({width}x{height} -> 256 short side), "
          f"{args.workers} worker(s): {wall:.2f} s wall, {cpu:.2f} CPU s; "
          f"{result.records / wall:.2f} samples/s, {states / wall:.1f} states/s, "
          f"{result.records / cpu:.2f} samples per CPU s")  # fmt: skip
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
