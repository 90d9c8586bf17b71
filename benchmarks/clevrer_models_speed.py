"""Throughput of NS-DR's learned perception and dynamics on this machine (CLEVRER).

- Frame parser, per detector: training steps (detector losses + attribute loss, backward, AdamW)
  on frames of a set's train split, in frames per second; inference (`FrameParser.parse`: the
  detector, masks back to 480x320, attribute crops) in frames per second.
- Tracking: `track` on the set's ground-truth mask files, milliseconds per video.
- Dynamics predictor: training steps (the rollout loss of `DynamicsConfig`'s defaults) in
  windows ("trajectories": one history window and its rollout) per second, and rollouts of whole
  videos (factual future and one run per removed object) in milliseconds per video.

Each figure is given per wall second and per CPU second of the process (on a shared machine the
CPU figure is the steadier one); the load average is printed with them. Weights are random:
speed does not depend on them.

    python benchmarks/clevrer_models_speed.py --data /tmp/clevrer-set --threads 1 \
        --detectors unet maskrcnn-r18 maskrcnn-r50 --out runs/clevrer-models-speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch

from tvr.clevrer.data.masks import read_masks
from tvr.clevrer.models.dynamics.config import DynamicsConfig
from tvr.clevrer.models.dynamics.module import build_propnet, load_runs, rollout_losses
from tvr.clevrer.models.dynamics.observation import observation_from_facts
from tvr.clevrer.models.dynamics.rollout import predict_video
from tvr.clevrer.models.dynamics.windows import WindowDataset, collate_windows
from tvr.clevrer.models.perception.attributes import attribute_loss
from tvr.clevrer.models.perception.config import DEFAULT_IMAGE_SIZE
from tvr.clevrer.models.perception.frame_parser import FrameParser
from tvr.clevrer.models.perception.frames import collate, load_frames
from tvr.clevrer.models.perception.tracking import track
from tvr.clevrer.models.sets import split_files, take


class Clock:
    """Wall and process CPU seconds since `start`."""

    def start(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def stop(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def rate(count: float, seconds: tuple[float, float]) -> dict[str, float]:
    return {"per_wall_s": count / seconds[0], "per_cpu_s": count / seconds[1], "wall_s": seconds[0]}


def parser_speed(data: str, name: str, width: int, steps: int, batch: int) -> dict:
    size = DEFAULT_IMAGE_SIZE[name]
    frames = load_frames(data, "train", 4, batch, size, 32, 0)
    val = load_frames(data, "validation", 2, 8, size, 32, 0, keep_full=True)
    parser = FrameParser(name, size, width)
    opt = torch.optim.AdamW(parser.parameters(), lr=1e-3)
    batches = [collate(frames[k : k + batch]) for k in range(0, len(frames), batch)]
    parser.train()

    def step(b) -> None:
        losses = parser.detector.losses(b.images, b.ids)
        loss = sum(losses.values()) + attribute_loss(parser.attributes(b.crops), b.labels)
        opt.zero_grad()
        loss.backward()
        opt.step()

    step(batches[0])  # warm up
    clock = Clock().start()
    for k in range(steps):
        step(batches[k % len(batches)])
    train = rate(steps * batch, clock.stop())
    import numpy as np

    full = np.stack([s.full for s in val])
    parser.parse(full[:2])
    clock = Clock().start()
    parser.parse(full)
    infer = rate(len(full), clock.stop())
    params = sum(p.numel() for p in parser.detector.parameters())
    return {
        "input": list(size),
        "detector_params": params,
        "train_frames": train,
        "parse_frames": infer,
    }


def tracking_speed(data: str, videos: int) -> dict:
    files = take(split_files(data, "train", "masks"), videos)
    masks = [read_masks(p) for p in files.values()]
    clock = Clock().start()
    for m in masks:
        track(m)
    return rate(len(masks), clock.stop())


def dynamics_speed(data: str, videos: int, steps: int) -> dict:
    c = DynamicsConfig(data_root=data)
    runs, _ = load_runs(data, "train", videos, True)
    ds = WindowDataset(runs, c.stride, c.history, c.rollout, c.window_step)
    model = build_propnet(c)
    opt = torch.optim.Adam(model.parameters(), lr=c.lr)
    loader = torch.utils.data.DataLoader(
        ds, batch_size=c.batch_size, shuffle=True, collate_fn=collate_windows
    )
    it = iter(loader)
    clock = None
    n = 0
    for k in range(steps + 1):
        try:
            batch = next(it)
        except StopIteration:
            it = iter(loader)
            batch = next(it)
        out = rollout_losses(model, batch, c.history, c.collision_pos_weight)
        loss = out["position"] + c.collision_weight * out["collision"]
        opt.zero_grad()
        loss.backward()
        opt.step()
        if k == 0:
            clock = Clock().start()  # after one warm-up step
        else:
            n += int(batch["active"].shape[0])
    assert clock is not None
    train = rate(n, clock.stop())
    _, facts = load_runs(data, "validation", videos, True)
    model.eval()
    clock = Clock().start()
    for f in facts.values():
        predict_video(model, observation_from_facts(f), c.stride)
    roll = rate(len(facts), clock.stop())
    return {
        "windows_per_epoch_per_video": len(ds) / max(1, videos),
        "train_windows": train,
        "rollout_videos": roll,
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--data", required=True, help="a rendered CLEVRER set (videos, masks, dynamics)"
    )
    ap.add_argument("--detectors", nargs="*", default=["unet", "maskrcnn-r18", "maskrcnn-r50"])
    ap.add_argument("--width", type=int, default=16, help="the U-Net's width (default 16)")
    ap.add_argument("--steps", type=int, default=10, help="training steps per detector")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--dynamics-steps", type=int, default=100)
    ap.add_argument("--videos", type=int, default=20, help="videos for tracking and dynamics")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    result: dict = {"threads": args.threads, "load_before": os.getloadavg()}
    for name in args.detectors:
        result[name] = parser_speed(args.data, name, args.width, args.steps, args.batch_size)
        print(name, json.dumps(result[name]), flush=True)
    result["tracking_videos"] = tracking_speed(args.data, args.videos)
    print("tracking", json.dumps(result["tracking_videos"]), flush=True)
    result["dynamics"] = dynamics_speed(args.data, args.videos, args.dynamics_steps)
    print("dynamics", json.dumps(result["dynamics"]), flush=True)
    result["load_after"] = os.getloadavg()
    print("load average before/after:", result["load_before"], result["load_after"])
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
