"""What stale BatchNorm statistics cost a finished run: validation Acc of its checkpoints as saved
and after `recalibrate_batchnorm` over N training batches (tvr.training.precise_bn).

For each checkpoint (best.ckpt, last.ckpt) it prints validation loss and Acc (greedy decoding
scored through the simulator, as in training) before and after, and writes OUT/<ckpt>/ with the
run's config.json and predictions.jsonl of the recalibrated weights on the predicted split, a run
folder that `tvr results` reads like any other:

    python benchmarks/precise_bn.py --run runs/basic-cnn/basic-cnn+-g --batches 50 \
        --out runs/basic-cnn-precise-bn --threads 1
    tvr results saved=runs/basic-cnn/basic-cnn+-g recal=runs/basic-cnn-precise-bn/best \
        --out results/precise-bn
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import torch

from tvr.trance.data.batch import images_to_float
from tvr.trance.train.data import make_dataset
from tvr.trance.train.losses import supervised_loss
from tvr.trance.train.module import (
    image_layout,
    make_loader,
    model_layout,
    recalibrate_model_batchnorm,
    score_decoded,
)
from tvr.trance.train.predictions import inference_autocast, load_model, predict_records


@torch.no_grad()
def validate(model, config, batches) -> dict[str, float]:
    model.eval()
    loss = acc = n = 0.0
    for b in batches:
        init, final = image_layout(config, b["init_image"], b["final_image"])
        with inference_autocast(config, "cpu"):
            value = supervised_loss(model, b, init, final)["loss"]
            decoded = model.decode(init, final, b["objects"])
        k = b["objects"].shape[0]
        loss += float(value) * k
        acc += float(score_decoded(config, b, decoded.objs, decoded.values)["acc"].mean()) * k
        n += k
    return {"val_loss": round(loss / n, 4), "val_acc": round(acc / n, 4)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--run", type=Path, required=True, help="a training run folder")
    p.add_argument("--checkpoints", nargs="+", default=["best", "last"])
    p.add_argument("--batches", type=int, default=50, help="training batches to recompute with")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--threads", type=int, default=0)
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    summary = {}
    for name in args.checkpoints:
        model, config = load_model(args.run / "checkpoints" / f"{name}.ckpt")
        model = model_layout(config, model)
        val = [
            images_to_float(b)
            for b in make_loader(make_dataset(config, "val"), config, 250, shuffle=False)
        ]
        before = validate(model, config, val)
        train_loader = make_loader(make_dataset(config, "train"), config, config.batch_size, True)
        recalibrate_model_batchnorm(  # under the training autocast, on the CPU
            config, model, train_loader, args.batches, lambda c=config: inference_autocast(c, "cpu")
        )
        after = validate(model, config, val)
        summary[name] = {"saved": before, "recalibrated": after, "batches": args.batches}
        print(f"{name}: as saved {before}; recalibrated on {args.batches} batches {after}")
        out = args.out / name
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(args.run / "config.json", out / "config.json")
        split = make_dataset(config, config.predict_split) or make_dataset(config, "val")
        with (out / "predictions.jsonl").open("w") as f:
            for rec in predict_records(model, config, split, device="cpu"):
                f.write(json.dumps(rec) + "\n")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "precise_bn.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
