"""Where a counterfactual rollout starts, and what it does to NS-DR's answers: a trained dynamics
predictor rolled out on a split's videos from their ground-truth observation, once with each of
`COUNTERFACTUAL_STARTS` (tvr's default: the run without object X is the factual one until X's first
predicted collision; "start": the paper's "erase the vertex and roll out" from the first frame),
then the executor on the split's own programs and `tvr clevrer evaluate`.

    python benchmarks/clevrer_counterfactual_start.py --data clevrer-1k \
        --dynamics runs/dynamics-propnet/checkpoints/last.ckpt --out /tmp/cf-start
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from tvr.clevrer.data.layout import find_questions
from tvr.clevrer.models.dynamics import (
    RolloutOptions,
    load_dynamics,
    observation_from_facts,
    write_predicted_dynamics,
)
from tvr.clevrer.models.dynamics.module import load_runs
from tvr.clevrer.models.dynamics.rollout import COUNTERFACTUAL_STARTS
from tvr.cli import main as tvr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="a generated CLEVRER set")
    ap.add_argument("--split", default="test")
    ap.add_argument("--dynamics", required=True, help="dynamics run folder or checkpoint")
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args()
    torch.set_num_threads(1)
    _, truth = load_runs(args.data, args.split, None, counterfactual=False)
    observations = {i: observation_from_facts(f) for i, f in truth.items()}
    predictor = load_dynamics(args.dynamics)
    questions = find_questions(args.data, args.split)
    for start in COUNTERFACTUAL_STARTS:
        folder = args.out / start
        write_predicted_dynamics(
            predictor, observations, folder / "dynamics", RolloutOptions(counterfactual_start=start)
        )
        answers = folder / "answers.json"
        tvr(["clevrer", "execute", "--data", str(questions), "--dynamics",
             str(folder / "dynamics"), "--out", str(answers)])  # fmt: skip
        print(f"== counterfactual_start={start!r} ({len(observations)} videos)")
        tvr(["clevrer", "evaluate", "--data", str(questions), "--predictions", str(answers),
             "--out", str(folder / "eval")])  # fmt: skip


if __name__ == "__main__":
    main()
