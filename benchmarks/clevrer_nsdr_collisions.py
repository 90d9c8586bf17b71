"""The collisions NS-DR answered on, against the truth: for each NS-DR folder (`tvr clevrer nsdr
--out`), the factual collisions of its scenes (OUT/dynamics/sim_XXXXX.json) in the shown and the
unseen frames, matched to the set's true ones (same pair of objects named alike, frames within
`COLLISION_TOLERANCE`), as precision and recall.

A perceived object is named by its attributes (colour, material, shape: no two objects of a video
are alike), so scenes built from the frame parser's tracks compare with the truth without their
numbering. This is how docs/clevrer.md shows where learned perception and learned dynamics
together lose the explanatory questions.

    python benchmarks/clevrer_nsdr_collisions.py --data clevrer-1k nsdr/dynamics nsdr/perception-dynamics
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tvr.clevrer.models.dynamics.metrics import COLLISION_TOLERANCE, match_collisions
from tvr.clevrer.models.sets import split_files
from tvr.clevrer.programs.dynamics import read_dynamics
from tvr.clevrer.programs.facts import SceneFacts
from tvr.clevrer.vocab import SHOWN_FRAMES

Named = tuple[str, str, str]


def named_collisions(facts: SceneFacts) -> list[tuple[int, Named, Named]]:
    """The factual run's collisions as (frame, name, name), objects named by their attributes."""
    names = [(p.color, p.material, p.shape) for p in facts.objects]
    return [
        (e.frame, names[e.objects[0]], names[e.objects[1]])
        for e in facts.factual.events
        if e.kind == "collision"
    ]


def score_folder(nsdr: Path, truth_files: dict[int, Path]) -> dict[str, dict[str, float]]:
    """Precision and recall of the folder's factual collisions, shown and unseen frames apart."""
    counts = {part: [0, 0, 0] for part in ("shown", "unseen")}  # matched, predicted, true
    for path in sorted((nsdr / "dynamics").glob("sim_*.json")):
        index = int(path.stem.split("_")[1])
        ours, truth = read_dynamics(path), read_dynamics(truth_files[index])
        end = max(_frames(ours), default=0) + COLLISION_TOLERANCE
        for part, (first, last) in (
            ("shown", (0, SHOWN_FRAMES - 1)),
            ("unseen", (SHOWN_FRAMES, end)),
        ):
            predicted = [c for c in named_collisions(ours) if first <= c[0] <= last]
            true = [c for c in named_collisions(truth) if first <= c[0] <= last]
            counts[part][0] += match_collisions(predicted, true)  # type: ignore[arg-type]
            counts[part][1] += len(predicted)
            counts[part][2] += len(true)
    return {
        part: {
            "precision": m / p if p else 0.0,
            "recall": m / t if t else 0.0,
            "predicted": float(p),
            "true": float(t),
        }
        for part, (m, p, t) in counts.items()
    }


def _frames(facts: SceneFacts) -> list[int]:
    motion = facts.factual.motion
    return list(range(len(motion.visible))) if motion is not None else []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="the generated set the NS-DR folders answered")
    ap.add_argument("--split", default="test")
    ap.add_argument("nsdr", nargs="+", type=Path, help="NS-DR folders (tvr clevrer nsdr --out)")
    args = ap.parse_args()
    truth = split_files(args.data, args.split, "dynamics")
    out = {str(folder): score_folder(folder, truth) for folder in args.nsdr}
    for folder, parts in out.items():
        line = "; ".join(
            f"{part} P {s['precision']:.3f} R {s['recall']:.3f} ({s['predicted']:.0f} predicted, "
            f"{s['true']:.0f} true)"
            for part, s in parts.items()
        )
        print(f"{folder}: {line}")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
