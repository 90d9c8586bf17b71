"""Does the official CLEVRER executor give tvr's answers? It is run on a generated set's
ground-truth dynamics and its questions' programs, and every answer is compared with the stored one.

The official executor (executor/executor.py and simulation.py of github.com/chuangg/CLEVRER) is
never part of tvr: fetch the repository, copy those two files into a scratch folder and pass it
with `--official`. This script imports them from there. Their `from IPython.core import ultratb`
(which only installs a debugger hook) is answered by a stand-in module, so IPython is not needed.

The ground truth goes in as the official simulation reads a predicted-dynamics file, with two
adaptations to its conventions: every frame is listed (the official predictor lists every 5th
and `Simulation` divides each displacement by FRAME_DIFF = 5), so positions are multiplied by 5
to keep its velocities in grid units per frame; and nothing else changes (attributes, collisions,
every what-if run).

Each disagreement is classified by re-running tvr's executor under the released executor's
conventions (`tvr.clevrer.programs.executor.Reading`): its end frame 125, its listed order of
same-frame events; what neither explains is listed with its program for a look by hand.

    python benchmarks/clevrer_official_agreement.py --official /tmp/official --data clevrer-300 --limit 300
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
import types
from collections import Counter, defaultdict
from pathlib import Path

from tvr.clevrer.data.layout import dynamics_path, find_questions
from tvr.clevrer.data.questions import read_questions
from tvr.clevrer.programs.dynamics import read_dynamics
from tvr.clevrer.programs.executor import (
    ALIASES,
    OFFICIAL_END_FRAME,
    ExecutionError,
    Executor,
    Reading,
)

SPLITS = ("train", "validation", "test")
FRAME_DIFF = 5  # simulation.py's displacement divisor
MC_MAP = {"yes": "correct", "no": "wrong"}
READINGS = {
    "tvr's executor today agrees (the file was answered by an older tvr)": Reading(),
    "end frame 125 (hard-coded, executor.py line 67)": Reading(end_frame=OFFICIAL_END_FRAME),
    "same-frame events taken in listed order (executor.py lines 122-124)": Reading(ties="listed"),
    "both": Reading(end_frame=OFFICIAL_END_FRAME, ties="listed"),
}


def load_official(folder: Path) -> tuple[type, type]:
    """(Executor, Simulation) of the official files in `folder`."""
    ultratb = types.ModuleType("IPython.core.ultratb")
    ultratb.FormattedTB = lambda **_: sys.__excepthook__  # type: ignore[attr-defined]
    core = types.ModuleType("IPython.core")
    core.ultratb = ultratb  # type: ignore[attr-defined]
    ipython = types.ModuleType("IPython")
    ipython.core = core  # type: ignore[attr-defined]
    sys.modules.update({"IPython": ipython, "IPython.core": core, "IPython.core.ultratb": ultratb})
    sys.path.insert(0, str(folder))
    executor = importlib.import_module("executor")
    simulation = importlib.import_module("simulation")
    sys.excepthook = sys.__excepthook__
    return executor.Executor, simulation.Simulation


def official_input(dynamics: dict) -> dict:
    """tvr's ground-truth dynamics in the form the official Simulation reads them (see above)."""
    out = {"objects": dynamics["objects"], "predictions": []}
    for run in dynamics["predictions"]:
        trajectory = [
            {"frame_index": t["frame_index"],
             "objects": [{**o, "x": o["x"] * FRAME_DIFF, "y": o["y"] * FRAME_DIFF}
                         for o in t["objects"]]}
            for t in run["trajectory"]
        ]  # fmt: skip
        out["predictions"].append({**run, "trajectory": trajectory})
    return out


def official_answer(executor, program: list[str]) -> str:
    try:
        return str(executor.run([ALIASES.get(t, t) for t in program]))
    except Exception as err:  # the official code raises on some inputs (NameError, ValueError)
        return f"raised {type(err).__name__}"


def tvr_answer(executor: Executor, program: list[str], choice: list[str] | None) -> str:
    try:
        if choice is None:
            return executor.execute(program)
        return executor.answer_choice(choice, program)
    except ExecutionError:
        return "error"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--official", type=Path, required=True,
                    help="a scratch folder holding the official executor.py and simulation.py")
    ap.add_argument("--data", type=Path, required=True, help="a generated set with dynamics/")
    ap.add_argument("--limit", type=int, default=300, help="videos (in index order)")
    ap.add_argument("--show", type=int, default=3, help="examples printed per class")
    ap.add_argument("--out", type=Path, help="write every disagreement as JSON lines")
    args = ap.parse_args()
    OfficialExecutor, Simulation = load_official(args.official)
    videos = sorted((v for s in SPLITS for v in read_questions(find_questions(args.data, s))),
                    key=lambda v: v.scene_index)[: args.limit]
    questions = defaultdict(Counter)  # type -> agree / total (questions)
    options = defaultdict(Counter)  # type -> agree / total (options)
    classes: dict[str, list[dict]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        for video in videos:
            raw = json.loads(dynamics_path(args.data, video.scene_index).read_text())
            path = Path(tmp) / "sim.json"
            path.write_text(json.dumps(official_input(raw)))
            official = OfficialExecutor(Simulation(str(path)))
            facts = read_dynamics(dynamics_path(args.data, video.scene_index))
            readings = {name: Executor(facts, r) for name, r in READINGS.items()}
            for q in video.questions:
                qtype = q.question_type
                program = list(q.program or ())
                items = [(None, q.answer)] if q.choices is None else [
                    (list(c.program or ()), c.answer) for c in q.choices]
                all_agree = True
                for choice, stored in items:
                    full = program if choice is None else [*choice, *program]
                    got = official_answer(official, full)
                    if choice is not None:
                        got = MC_MAP.get(got, got)
                    agree = got == stored
                    all_agree &= agree
                    if choice is not None:
                        options[qtype]["total"] += 1
                        options[qtype]["agree"] += agree
                    if agree:
                        continue
                    cause = "unexplained"
                    for name, ex in readings.items():
                        if tvr_answer(ex, program, choice) == got:
                            cause = name
                            break
                    classes[cause].append({
                        "scene_index": video.scene_index, "question_id": q.question_id,
                        "type": qtype, "question": q.question,
                        "choice": None if choice is None else q.choices[items.index(
                            (choice, stored))].choice,
                        "tvr": stored, "official": got, "program": full})
                questions[qtype]["total"] += 1
                questions[qtype]["agree"] += all_agree
    print(f"{len(videos)} videos of {args.data}: the official executor's answers against tvr's\n")
    print("| type | questions agreeing | options agreeing |")
    print("|---|---:|---:|")
    for qtype in ("descriptive", "explanatory", "predictive", "counterfactual"):
        q, o = questions[qtype], options[qtype]
        opt = f"{o['agree']} / {o['total']}" if o["total"] else "-"
        print(f"| {qtype} | {q['agree']} / {q['total']} | {opt} |")
    print("\ndisagreements by cause (tvr's executor under the official convention gives the "
          "official answer):")
    for cause, items in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        by_type = Counter(i["type"] for i in items)
        print(f"- {cause}: {len(items)} ({', '.join(f'{k} {v}' for k, v in by_type.items())})")
        for item in items[: args.show]:
            print(f"    video {item['scene_index']} q{item['question_id']}: {item['question']}"
                  f"{' / ' + item['choice'] if item['choice'] else ''}: tvr {item['tvr']}, "
                  f"official {item['official']}; program {' '.join(item['program'])}")
    if args.out:
        with args.out.open("w") as f:
            for cause, items in classes.items():
                for item in items:
                    f.write(json.dumps({"cause": cause, **item}) + "\n")


if __name__ == "__main__":
    main()
