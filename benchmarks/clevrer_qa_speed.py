"""Training throughput of CLEVRER's question parser and the Table 2 baselines on this machine.

- Question parser (the paper's sizes: 300-d embeddings, 2 x 256 LSTMs, batch 64): training steps
  on a set's training texts (role batches as `tvr clevrer train parser` makes them), in texts per
  second; greedy parsing, in texts per second.
- LSTM and CNN+LSTM (`BaselineConfig` defaults, `--frames` frames of `--frame-size`): training
  steps on the set's training videos with all their questions and options, in videos per
  second. The frames are random uint8 arrays of the cached frames' shape (speed does not depend
  on their content), so the set needs no rendered videos.

Each figure is per wall second and per CPU second of the process (on a shared machine the CPU
figure is the steadier one); the load average is printed with them. Weights are random.

    HF_HUB_OFFLINE=1 python benchmarks/clevrer_qa_speed.py --data /tmp/clv300 --threads 1 \
        [--steps 30] [--cnns small resnet18] [--out runs/clevrer-qa-speed.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch

from tvr.clevrer.data.questions import read_questions
from tvr.clevrer.models.baselines.config import BaselineConfig
from tvr.clevrer.models.baselines.data import VideoQA, build_words, collate
from tvr.clevrer.models.baselines.model import QAModel
from tvr.clevrer.models.baselines.module import qa_loss
from tvr.clevrer.models.parser.config import ParserConfig
from tvr.clevrer.models.parser.data import parser_samples
from tvr.clevrer.models.parser.module import (
    EncodedSamples,
    ParserModule,
    RoleBatches,
    make_collate,
)
from tvr.clevrer.models.parser.tokens import Vocab


def _timed(fn, repeat: int) -> tuple[float, float]:
    """(wall, CPU) seconds of `repeat` calls of fn."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeat):
        fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def parser_speed(data: Path, steps: int) -> dict[str, float]:
    samples = parser_samples(read_questions(data / "questions" / "train.json"), with_programs=True)
    words = Vocab.build(s.words for s in samples)
    tokens = Vocab.build(s.program or () for s in samples)
    config = ParserConfig(data=str(data))
    module = ParserModule(config.to_dict(), words.to_json(), tokens.to_json())
    optimizer = module.configure_optimizers()
    loader = torch.utils.data.DataLoader(
        EncodedSamples(samples, words, tokens),
        batch_sampler=RoleBatches([s.role for s in samples], config.batch_size, True, 0),
        collate_fn=make_collate(samples),
    )
    batches = [b for b, _ in zip(loader, range(steps), strict=False)]
    texts = sum(b["words"].shape[0] for b in batches)

    def train() -> None:
        for b in batches:
            optimizer.zero_grad()
            module._loss(b).backward()
            optimizer.step()

    train()  # warm-up
    wall, cpu = _timed(train, 1)
    module.eval()

    def parse() -> None:
        for b in batches:
            module.networks[b["role"]].greedy(b["words"], b["lengths"], config.max_length + 1)

    p_wall, p_cpu = _timed(parse, 1)
    return {
        "train_texts_per_wall_s": texts / wall,
        "train_texts_per_cpu_s": texts / cpu,
        "parse_texts_per_wall_s": texts / p_wall,
        "parse_texts_per_cpu_s": texts / p_cpu,
        "texts": texts,
        "steps": len(batches),
    }


def baseline_speed(
    data: Path, model: str, cnn: str, steps: int, frames: int, size: tuple[int, int]
) -> dict[str, float]:
    videos = read_questions(data / "questions" / "train.json")
    config = BaselineConfig(model=model, cnn=cnn, data=str(data), frames=frames,
                            frame_width=size[0], frame_height=size[1])  # fmt: skip
    dataset = VideoQA(videos, build_words(videos))
    net = QAModel(config, len(dataset.encoded) + 1000)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr)
    batches = []
    for k in range(0, min(len(dataset), steps * config.batch_videos), config.batch_videos):
        batch = collate([dataset[i] for i in range(k, min(k + config.batch_videos, len(dataset)))])
        if config.uses_video:
            n = batch["video"].shape[0]
            batch["frames"] = torch.randint(
                0, 256, (n, frames, 3, size[1], size[0]), dtype=torch.uint8
            )
        batches.append(batch)
    n_videos = sum(int(b["video"].shape[0]) for b in batches)

    def train() -> None:
        for b in batches:
            optimizer.zero_grad()
            answer, option = net(b["words"], b["lengths"], b["item_video"], b.get("frames"))
            qa_loss(answer, option, b).backward()
            optimizer.step()

    train()
    wall, cpu = _timed(train, 1)
    return {"train_videos_per_wall_s": n_videos / wall, "train_videos_per_cpu_s": n_videos / cpu,
            "videos": n_videos}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, type=Path, help="a generated set (symbolic is enough)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=30, help="training batches timed per model")
    ap.add_argument("--frames", type=int, default=8)
    ap.add_argument("--frame-size", default="96x64", help="WIDTHxHEIGHT")
    ap.add_argument("--cnns", nargs="+", default=["small", "resnet18"])
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    size = tuple(int(x) for x in args.frame_size.lower().split("x"))
    result: dict[str, object] = {"threads": args.threads, "load_before": os.getloadavg()}
    result["parser"] = parser_speed(args.data, args.steps)
    print("parser", json.dumps(result["parser"]), flush=True)
    result["lstm"] = baseline_speed(args.data, "lstm", "small", args.steps, args.frames, size)
    print("lstm", json.dumps(result["lstm"]), flush=True)
    for cnn in args.cnns:
        key = f"cnn-lstm-{cnn}"
        result[key] = baseline_speed(
            args.data, "cnn-lstm", cnn, max(3, args.steps // 5), args.frames, size
        )
        print(key, json.dumps(result[key]), flush=True)
    result["load_after"] = os.getloadavg()
    print("load average before", result["load_before"], "after", result["load_after"])
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
