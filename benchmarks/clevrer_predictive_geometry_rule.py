"""How much of a predictive question the last shown frame gives away: a rule with no learning and
no simulation picks, of the two options, the pair of objects that comes closest within a horizon
if each keeps its velocity at the last annotated frame (constant velocity, no collisions).

    python benchmarks/clevrer_predictive_geometry_rule.py --data clevrer-1k --split test
"""

from __future__ import annotations

import argparse

import numpy as np

from tvr.clevrer.data.annotations import read_annotation
from tvr.clevrer.data.layout import find_annotation, find_questions
from tvr.clevrer.data.questions import Choice, read_questions

FILTERS = {"filter_color": "color", "filter_material": "material", "filter_shape": "shape"}


def choice_objects(choice: Choice, properties: list[dict]) -> tuple[int, int] | None:
    """The two objects a collision option names (by the filters of its program), or None when
    its filters do not name exactly one object each."""
    found: list[int] = []
    wanted: dict[str, str] = {}
    program = list(choice.program or ())
    for i, token in enumerate(program):
        if token == "objects":
            wanted = {}
        elif token in FILTERS and i > 0:
            wanted[FILTERS[token]] = program[i - 1]
        elif token == "unique" and i > 0 and program[i - 1] in FILTERS:
            hits = [p["object_id"] for p in properties if all(p[k] == v for k, v in wanted.items())]
            if len(hits) != 1:
                return None
            found.append(hits[0])
    return (found[0], found[1]) if len(found) == 2 else None


def closest_approach(a: dict, b: dict, horizon: float) -> float:
    """The least distance of two objects over [0, horizon] s at constant velocity (x, y only)."""
    dp = np.subtract(b["location"][:2], a["location"][:2])
    dv = np.subtract(b["velocity"][:2], a["velocity"][:2])
    speed2 = float(dv @ dv)
    t = 0.0 if speed2 == 0 else float(np.clip(-(dp @ dv) / speed2, 0.0, horizon))
    return float(np.linalg.norm(dp + dv * t))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="a generated CLEVRER set")
    ap.add_argument("--split", default="test")
    ap.add_argument("--horizons", type=float, nargs="+", default=[0.0, 1.0, 2.0, 4.0])
    args = ap.parse_args()
    right = {h: 0 for h in args.horizons}
    asked = skipped = 0
    for video in read_questions(find_questions(args.data, args.split)):
        annotation = read_annotation(find_annotation(args.data, video.scene_index)).to_json()
        properties = annotation["object_property"]
        last = {o["object_id"]: o for o in annotation["motion_trajectory"][-1]["objects"]}
        for q in video.questions:
            if q.question_type != "predictive" or not q.choices or len(q.choices) != 2:
                continue
            pairs = [choice_objects(c, properties) for c in q.choices]
            if any(p is None or p[0] not in last or p[1] not in last for p in pairs):
                skipped += 1
                continue
            asked += 1
            negated = "not" in q.question.split()
            happens = [(c.answer == "correct") != negated for c in q.choices]
            for h in args.horizons:
                gaps = [closest_approach(last[p[0]], last[p[1]], h) for p in pairs if p]
                right[h] += happens[int(np.argmin(gaps))]
    print(f"{asked} predictive questions of {args.data} {args.split} ({skipped} skipped)")
    for h in args.horizons:
        print(
            f"  closest pair within {h:.0f} s at constant velocity: {100 * right[h] / asked:.1f}%"
        )


if __name__ == "__main__":
    main()
