"""Train TranceNet models on generated TRANCE datasets on this machine and time them.

Each (setting, model) pair is one `tvr train` run (`tvr.trance.train.run.train`) on the `trance`
source: the dataset folder of its setting, made by `tvr generate`. The script records for each
run the training size, epochs, wall time and training throughput in OUT/bench.json and prints a
Markdown table; `tvr results OUT/*` then gives the papers' tables and learning curves.

    python benchmarks/train_trance.py --basic data/basic --event data/event \
        --models cnn+-g resnet+-g --epochs basic=30,event=30 --threads 1 --out runs/cpu

REINFORCE (Table 4): `--reinforce-from RUN/checkpoints/best.ckpt --event DIR --epochs event=2`
fine-tunes that model once per reward (corr, dist, both) into OUT/event-MODEL-rl-REWARD.

Pin a process to cores with `taskset` to share a machine between two runs; `--threads` sets
torch's intra-op threads. A killed run resumes from its last checkpoint when started again.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from tvr.trance.data.store import open_dataset
from tvr.trance.train.config import TrainConfig
from tvr.trance.train.run import train


def parse_epochs(text: str) -> dict[str, int]:
    out = {}
    for part in text.split(","):
        setting, _, n = part.partition("=")
        out[setting.strip()] = int(n)
    return out


def runs_of(args: argparse.Namespace, setting: str) -> list[tuple[str, str | None]]:
    """(model, reward) pairs to run: supervised runs (reward None), or the REINFORCE fine-tunes
    of the checkpoint of --reinforce-from (its model name is read from the run's config.json)."""
    if not args.reinforce_from:
        return [(m, None) for m in args.models]
    if setting == "basic":
        return []
    run_config = Path(args.reinforce_from).resolve().parents[1] / "config.json"
    model = json.loads(run_config.read_text())["model"]
    return [(model, reward) for reward in args.rewards]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--basic", help="dataset folder of the Basic setting")
    p.add_argument("--event", help="dataset folder of the Event setting")
    p.add_argument("--view", help="dataset folder of the View setting")
    p.add_argument("--models", nargs="+", default=["cnn+-g", "resnet+-g"])
    p.add_argument("--epochs", default="basic=10,event=10,view=10", help="per setting")
    p.add_argument(
        "--max-minutes",
        type=float,
        help="wall-time limit of each run's fitting (the lr drop stays at half of --epochs)",
    )
    p.add_argument(
        "--train-size", type=int, help="train on a seeded random subset of N training samples"
    )
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3, help="Adam's lr (divided by 10 at half)")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument(
        "--precision",
        default="auto",
        help="Lightning precision; bf16-mixed is 2-3x faster on CPUs with avx512_bf16 or AMX",
    )
    p.add_argument("--channels-last", action="store_true", help="NHWC convolutions")
    p.add_argument(
        "--precise-bn-batches", type=int, default=0, help="BatchNorm statistics recomputed (0: off)"
    )
    p.add_argument("--out", default="runs/train-bench")
    p.add_argument(
        "--reinforce-from",
        metavar="CKPT",
        help="instead of supervised runs: fine-tune this Event checkpoint (a -T model, Table 4) "
        "with REINFORCE, once per --rewards, for --epochs event=N epochs",
    )
    p.add_argument("--rewards", nargs="+", default=["corr", "dist", "both"])
    p.add_argument("--rl-variant", default="reinforce", choices=("reinforce", "paper"))
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    epochs = parse_epochs(args.epochs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    bench_path = out / "bench.json"
    bench = json.loads(bench_path.read_text()) if bench_path.exists() else {}
    for setting in ("basic", "event", "view"):
        root = getattr(args, setting)
        if not root:
            continue
        ds = open_dataset(root)
        sizes = {s: len(ds.split(s)) for s in ds.splits}
        for model, reward in runs_of(args, setting):
            name = f"{setting}-{model}" + (f"-rl-{reward}" if reward else "")
            config = TrainConfig(
                model=model,
                setting=setting,
                data="trance",
                data_root=str(root),
                train_size=args.train_size,
                epochs=epochs[setting],
                max_minutes=args.max_minutes,
                batch_size=args.batch_size,
                lr=args.lr,
                num_workers=args.workers,
                accelerator="cpu",
                precision=args.precision,
                channels_last=args.channels_last,
                precise_bn_batches=args.precise_bn_batches,
                output_dir=str(out),
                run_name=name,
                reinforce=bool(reward),
                reward=reward or "both",
                rl_variant=args.rl_variant,
                init_checkpoint=args.reinforce_from if reward else None,
            )
            metrics = config.run_dir / "metrics.csv"
            before = len(metrics.read_text().splitlines()[1:]) if metrics.exists() else 0
            start = time.perf_counter()
            run_dir = train(config)
            wall = time.perf_counter() - start
            key = name
            rows = (run_dir / "metrics.csv").read_text().splitlines()[1:]
            n_train = args.train_size or sizes.get("train", 0)
            bench[key] = {
                "setting": setting,
                "model": model,
                "dataset": str(root),
                "split_sizes": sizes,
                "epochs": epochs[setting],
                "train_size": n_train,
                "epochs_done": len(rows),
                "epochs_this_call": len(rows) - before,
                "max_minutes": args.max_minutes,
                "wall_s": round(wall, 1),
                # epochs of this call only: a resumed run's earlier epochs took other wall time
                "train_samples_per_s": round(n_train * (len(rows) - before) / wall, 1),
                "lr": args.lr,
                "threads": torch.get_num_threads(),
                "precision": args.precision,
                "channels_last": args.channels_last,
                "run_dir": str(run_dir),
            }
            bench_path.write_text(json.dumps(bench, indent=2) + "\n")
            print(f"{key}: {wall / 60:.1f} min", flush=True)
    print("| run | train size | epochs done | wall (min) | train samples/s (incl. validation) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for key, b in bench.items():
        size = b.get("train_size", b["split_sizes"].get("train", 0))
        epochs_done = b.get("epochs_done", b["epochs"])
        print(
            f"| {key} | {size} | {epochs_done} | {b['wall_s'] / 60:.1f} | "
            f"{b['train_samples_per_s']} |"
        )


if __name__ == "__main__":
    main()
