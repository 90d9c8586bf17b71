"""Training-step throughput of the TranceNet models per precision and memory layout.

One training step is what `TranceModule.training_step` does to a batch of 160x120 images: the
shared random translation and the model's layout (`training_images`), Eq. 7 by teacher forcing,
backward and Adam. It runs on synthetic batches (no data set needed), in four modes:

- `fp32`: the default on a CPU (`precision="32-true"`);
- `bf16`: `precision="bf16-mixed"`, i.e. `torch.autocast("cpu", dtype=torch.bfloat16)`;
- `nhwc`: `channels_last=True` in float32;
- `bf16+nhwc`: both, the fast CPU setting.

It prints samples per second per (model, mode) and the speed-up over fp32, and writes them as
JSON. Pin it to one core to compare with the one-core training runs:

    taskset -c 0 python benchmarks/train_step_speed.py --threads 1 --models cnn+-g resnet+-g \
        --setting basic --out runs/train-step-speed.json

bf16 is fast only where the CPU computes it natively (avx512_bf16 or AMX in /proc/cpuinfo);
elsewhere it is emulated and slower than fp32, so the script prints those flags too.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from tvr.trance.data.batch import collate, images_to_float
from tvr.trance.models import build_model
from tvr.trance.train.config import TrainConfig
from tvr.trance.train.losses import supervised_loss
from tvr.trance.train.module import model_layout, training_images
from tvr.trance.train.synthetic import make_synthetic_examples

MODES = {
    "fp32": ("32-true", False),
    "bf16": ("bf16-mixed", False),
    "nhwc": ("32-true", True),
    "bf16+nhwc": ("bf16-mixed", True),
}


def cpu_bf16_flags() -> list[str]:
    try:
        flags = Path("/proc/cpuinfo").read_text().split("flags", 2)[1].splitlines()[0].split()
    except (OSError, IndexError):
        return []
    return sorted(f for f in flags if "bf16" in f or f.startswith("amx"))


def step_speed(model_name: str, setting: str, mode: str, batch, steps: int) -> float:
    """Samples per second of `steps` training steps after one warm-up step."""
    precision, channels_last = MODES[mode]
    config = TrainConfig(
        model=model_name, setting=setting, precision=precision, channels_last=channels_last
    )
    torch.manual_seed(0)
    model = model_layout(config, build_model(model_name, setting, config.image_size))
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    model.train()

    def one_step() -> None:
        init, final = training_images(config, batch)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16-mixed"):
            loss = supervised_loss(model, batch, init, final)["loss"]
        opt.zero_grad()
        loss.backward()
        opt.step()

    one_step()
    start = time.perf_counter()
    for _ in range(steps):
        one_step()
    return steps * batch["objects"].shape[0] / (time.perf_counter() - start)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", nargs="+", default=["cnn+-g", "resnet+-g"])
    p.add_argument("--setting", default="basic", choices=("basic", "event", "view"))
    p.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--steps", type=int, default=4, help="timed steps per (model, mode)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--out", type=Path, help="JSON file for the figures")
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    batch = images_to_float(
        collate(make_synthetic_examples(args.batch_size, args.setting, (120, 160), seed=0))
    )
    flags = cpu_bf16_flags()
    print(f"threads {torch.get_num_threads()}, CPU bf16 flags: {' '.join(flags) or 'none'}")
    rows = []
    for name in args.models:
        base = None
        for mode in args.modes:
            speed = step_speed(name, args.setting, mode, batch, args.steps)
            base = speed if mode == "fp32" else base
            rows.append(
                {"model": name, "setting": args.setting, "mode": mode, "samples_per_s": speed}
            )
            gain = f"{speed / base:.2f}x" if base else ""
            print(f"{name:10s} {mode:10s} {speed:8.1f} samples/s {gain}", flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        result = {
            "threads": torch.get_num_threads(),
            "batch_size": args.batch_size,
            "cpu_bf16_flags": flags,
            "rows": rows,
        }
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
