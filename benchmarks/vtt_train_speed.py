"""Throughput of the VTT models: encoding state images, training steps, greedy and beam decoding.

On a data folder in VTT's layout (the testbed of `tvr vtt testbed`, or the release), for one
encoder and size: the frozen encoder's images/s (the feature cache's one-off cost, not cached
here), then per model the training samples/s (what a `tvr vtt train` step does: the loss on
cached features, backward, AdamW; the first `--warmup` steps not timed) and the decoding
samples/s of the val split (greedy, beam 3). Writes the figures as JSON.

    python benchmarks/vtt_train_speed.py --data /tmp/testbed --size tiny --threads 2 \
        --out runs/vtt-train-speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import torch

from tvr.vtt.models import build_model
from tvr.vtt.models.config import PRESETS, ModelConfig, part_defaults
from tvr.vtt.models.decoding import DecodeOptions
from tvr.vtt.train.data import VttSamples, collate
from tvr.vtt.train.losses import model_loss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--model-size", choices=sorted(PRESETS), default="tiny")
    parser.add_argument("--encoder", help="default: the size's")
    parser.add_argument("--vocab", choices=("clip", "train"), default="clip")
    parser.add_argument("--models", nargs="+", default=["ttnet", "ttnet-base", "glacnet"])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=20, help="timed training steps")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    preset = dict(PRESETS[args.model_size])
    if args.encoder:
        preset["encoder"] = args.encoder
    preset["vocab"] = args.vocab
    results: dict = {"data": str(args.data), "size": args.model_size, "encoder": preset["encoder"],
                     "vocab": args.vocab,
                     "threads": args.threads, "device": args.device,
                     "machine": platform.processor() or platform.machine(),
                     "load_before": os.getloadavg(), "models": {}}  # fmt: skip

    base = ModelConfig(model="ttnet-base", **preset, **part_defaults("ttnet-base"))
    start = time.perf_counter()
    samples = VttSamples(args.data, base, ["train", "val"], None, device=args.device)
    seconds = time.perf_counter() - start
    images = sum(len(r.state_names()) for s in samples.sets.values() for r in s.records)
    results["encode"] = {"images": images, "seconds": round(seconds, 2),
                         "images_per_s": round(images / seconds, 2)}  # fmt: skip
    print(f"encoded {images} images in {seconds:.1f} s ({images / seconds:.1f}/s)")
    train, val = samples.sets["train"], samples.sets["val"]
    for name in args.models:
        config = ModelConfig(model=name, **preset, **part_defaults(name))
        torch.manual_seed(0)
        model = build_model(config, samples.encoder_dim, len(samples.labels.topics),
                            len(samples.labels.categories),
                            samples.labels.token_ids).to(args.device)  # fmt: skip
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-3)
        order = torch.randperm(len(train)).tolist()
        batches = [
            collate([train[order[(s * args.batch_size + i) % len(train)]]
                     for i in range(args.batch_size)])
            for s in range(args.warmup + args.steps)
        ]  # fmt: skip
        model.train()
        timed = 0.0
        for s, batch in enumerate(batches):
            batch = _to(batch, args.device)
            t = time.perf_counter()
            loss = model_loss(model, batch)["loss"]
            opt.zero_grad()
            loss.backward()
            opt.step()
            if args.device != "cpu":
                torch.cuda.synchronize()
            if s >= args.warmup:
                timed += time.perf_counter() - t
        train_rate = args.steps * args.batch_size / timed
        entry = {"params": sum(p.numel() for p in model.parameters()),
                 "train_samples_per_s": round(train_rate, 2)}  # fmt: skip
        model.eval()
        for strategy in ("greedy", "beam"):
            t = time.perf_counter()
            with torch.no_grad():
                for i in range(0, len(val), args.batch_size):
                    batch = collate([val[j] for j in range(i, min(i + args.batch_size, len(val)))])
                    model.generate(_to(batch, args.device), DecodeOptions(strategy))
            entry[f"{strategy}_samples_per_s"] = round(len(val) / (time.perf_counter() - t), 2)
        results["models"][name] = entry
        print(name, entry)
    results["load_after"] = os.getloadavg()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")


def _to(batch: dict, device: str) -> dict:
    return {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}


if __name__ == "__main__":
    main()
