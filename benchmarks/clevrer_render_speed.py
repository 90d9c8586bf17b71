"""Rendered CLEVRER videos per second per core (raster), and Cycles seconds per frame.

    HF_HUB_OFFLINE=1 PYTHONPATH=src taskset -c 0 python benchmarks/clevrer_render_speed.py \
        --videos 5 [--preset default] [--frames 128]
    PYTHONPATH=src python benchmarks/clevrer_render_speed.py --backend cycles --preset default \
        --cycles-frames 2 [--threads 2]

Videos come from the world's simulator (`simulate_video(seed, i)`, not timed). Raster: llvmpipe
is pinned to one thread (`LP_NUM_THREADS=1`; run under `taskset -c 0` so everything shares one
core), then each video is rendered three times: once through `render_video` (the end-to-end
figure: frames, H.264 mp4, masks file), once stage by stage to say where the time goes (scene
building, rendering the frame: colour and id mask in one pass, H.264 encoding, RLE encoding,
writing the mask file), and once more with the GL work finished after each step of the frame
(shadow map, objects, the floor's shadows, the rest: clears, copies, read-back), which splits
the frame's time (llvmpipe defers its work, so without this a step's cost lands in a later
call; the extra flushes make the sum exceed the frame's time). Figures are CPU seconds of the
process (all threads) and wall seconds. Cycles: renders `--cycles-frames` frames of the first
video (colour + mask) and extrapolates to 128 frames.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path


class Clock:
    """Accumulates CPU and wall seconds per named stage."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self.wall: dict[str, float] = {}

    def add(self, name: str, cpu: float, wall: float) -> None:
        self.cpu[name] = self.cpu.get(name, 0.0) + cpu
        self.wall[name] = self.wall.get(name, 0.0) + wall

    def time(self, name: str, fn, *args, **kwargs):
        c, w = time.process_time(), time.perf_counter()
        out = fn(*args, **kwargs)
        self.add(name, time.process_time() - c, time.perf_counter() - w)
        return out


def stages(video, renderer, out: Path, n_frames: int, clock: Clock) -> None:
    """One video stage by stage (the same work as render_video, each stage timed)."""
    from tvr.clevrer.data.masks import write_masks
    from tvr.clevrer.render import masks as m
    from tvr.clevrer.render.mp4 import Mp4Writer
    from tvr.clevrer.render.video import frame_scenes

    scenes = frame_scenes(video.spec.objects, video.factual)
    inner = getattr(renderer, "_r", renderer)
    frames = []
    w = Mp4Writer(out / "stages.mp4", scenes.camera.width, scenes.camera.height)
    with w:
        for t in range(n_frames):
            desc = clock.time("scene", scenes.frame, t)
            img, ids = clock.time("render frame", inner.render_frame, desc)
            clock.time("h264 encode", w.write, img)
            frames.append(clock.time("rle encode", m.encode_frame, ids, scenes.props, "v", t))
        c, wl = time.process_time(), time.perf_counter()
    clock.add("h264 encode", time.process_time() - c, time.perf_counter() - wl)  # flush + close
    props = m.proposals("v", frames)
    clock.time("mask file", write_masks, out / "stages.json", props)


def gl_steps(video, renderer, n_frames: int, clock: Clock) -> None:
    """One video's frames with the GL work finished after each step of the frame."""
    from tvr.clevrer.render.video import frame_scenes

    scenes = frame_scenes(video.spec.objects, video.factual)
    inner = getattr(renderer, "_r", renderer)
    ctx = inner.ctx
    saved = {}

    def timed(name: str, owner, attr: str) -> None:
        fn = getattr(owner, attr)
        saved[(owner, attr)] = fn

        def run(*a, **k):
            ctx.finish()
            out = clock.time(name, fn, *a, **k)
            c, w = time.process_time(), time.perf_counter()
            ctx.finish()
            clock.add(name, time.process_time() - c, time.perf_counter() - w)
            return out

        setattr(owner, attr, run)

    timed("shadow map", inner, "_shadow_pass")
    timed("objects", inner, "_draw_objects")
    timed("floor shadows", inner, "_shadow_regions")
    timed("floor shadows", inner._region_vao, "render")
    try:
        for t in range(n_frames):
            desc = scenes.frame(t)
            before = sum(clock.cpu.values()), sum(clock.wall.values())
            c, w = time.process_time(), time.perf_counter()
            with ctx:
                inner.render_frame(desc)
                ctx.finish()
            cpu, wall = time.process_time() - c, time.perf_counter() - w
            steps = sum(clock.cpu.values()) - before[0], sum(clock.wall.values()) - before[1]
            clock.add("rest of the frame", cpu - steps[0], wall - steps[1])
    finally:
        for (owner, attr), fn in saved.items():
            if owner is inner:
                delattr(owner, attr)  # the class's method again
            else:
                setattr(owner, attr, fn)


def report(clock: Clock, n_frames: int, title: str) -> None:
    total = sum(clock.cpu.values())
    print(title)
    for name, c in sorted(clock.cpu.items(), key=lambda kv: -kv[1]):
        per = c / n_frames * 1000
        per_wall = clock.wall[name] / n_frames * 1000
        print(f"  {name:18s} {per:6.2f} ms CPU ({per_wall:6.2f} wall)  {100 * c / total:4.1f}%")


def raster(args) -> None:
    os.environ["LP_NUM_THREADS"] = str(args.threads or 1)
    from tvr.clevrer.render import make_frame_renderer, render_video
    from tvr.clevrer.world.video import simulate_video

    videos = [simulate_video(args.seed, i) for i in range(args.videos)]
    r = make_frame_renderer("raster", args.preset)
    print(f"device {r.device}; preset {args.preset}; {args.frames} frames per video", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        # warm up: shader compilation, the floor cache
        render_video(videos[0].spec.objects, videos[0].factual, out, n_frames=2, renderer=r)
        cpu, wall = [], []
        for i, v in enumerate(videos):
            c, w = time.process_time(), time.perf_counter()
            render_video(v.spec.objects, v.factual, out, index=i, n_frames=args.frames, renderer=r)
            cpu.append(time.process_time() - c)
            wall.append(time.perf_counter() - w)
            n_obj = int(v.factual.present.sum())
            size = (out / f"video_{i:05d}.mp4").stat().st_size // 1024
            print(
                f"video {i}: {n_obj} objects, {cpu[-1]:.3f} s CPU, {wall[-1]:.3f} s wall, "
                f"mp4 {size} KiB",
                flush=True,
            )
        clock, steps = Clock(), Clock()
        for v in videos:
            stages(v, r, out, args.frames, clock)
            gl_steps(v, r, args.frames, steps)
    n = len(videos)
    mean_cpu, mean_wall = sum(cpu) / n, sum(wall) / n
    median = sorted(cpu)[n // 2]
    print(
        f"render_video: {mean_cpu:.3f} s CPU per video ({args.frames / mean_cpu:.0f} frames per "
        f"CPU second, {1 / mean_cpu:.2f} videos per CPU second), {mean_wall:.3f} s wall; "
        f"median {median:.3f}, min {min(cpu):.3f}, max {max(cpu):.3f} s CPU; "
        f"load {os.getloadavg()[0]:.2f}"
    )
    report(clock, n * args.frames, "where the time goes (stage by stage, per frame):")
    report(steps, n * args.frames, "the frame's steps (GL finished after each, per frame):")
    r.close()


def cycles(args) -> None:
    from tvr.clevrer.render import make_frame_renderer
    from tvr.clevrer.render.video import frame_scenes
    from tvr.clevrer.world.video import simulate_video

    v = simulate_video(args.seed, 0)
    scenes = frame_scenes(v.spec.objects, v.factual)
    options = {"threads": args.threads} if args.threads else {}
    c, w = time.process_time(), time.perf_counter()
    r = make_frame_renderer("cycles", args.preset, **options)
    r.render(scenes.frame(0))  # scene build, kernel load
    print(f"cycles startup + first frame: {time.perf_counter() - w:.1f} s wall", flush=True)
    steps = max(1, 128 // args.cycles_frames)
    c, w = time.process_time(), time.perf_counter()
    for k in range(args.cycles_frames):
        r.render(scenes.frame(min(127, k * steps)))
    cpu = (time.process_time() - c) / args.cycles_frames
    wall = (time.perf_counter() - w) / args.cycles_frames
    print(
        f"cycles/{args.preset} on {r.device}: {wall:.2f} s wall, {cpu:.2f} s CPU per frame "
        f"(colour + mask, {args.cycles_frames} frames); extrapolated 128 frames: "
        f"{128 * wall / 60:.1f} min wall, {128 * cpu / 60:.1f} CPU min; load "
        f"{os.getloadavg()[0]:.2f}"
    )
    r.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("raster", "cycles"), default="raster")
    ap.add_argument("--preset", default="default")
    ap.add_argument("--videos", type=int, default=5)
    ap.add_argument("--frames", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cycles-frames", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0, help="llvmpipe (1) or Cycles threads")
    args = ap.parse_args()
    (raster if args.backend == "raster" else cycles)(args)


if __name__ == "__main__":
    main()
