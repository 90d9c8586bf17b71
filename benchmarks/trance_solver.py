"""The TRANCE solver on fresh test sets: every metric of Table 3 and Table 5, Fig. 7 and Fig. 8,
with the ablation (ground-truth perception and matching), speed and search effort.

    python benchmarks/trance_solver.py --run RUN --data basic=DIR event=DIR view=DIR --out OUT

RUN: a `tvr trance parser train` run folder; each DIR: a `tvr generate` folder whose `test`
split is scored. Writes OUT/results.json, OUT/<setting>-<mode>.pred.jsonl and prints markdown
tables (docs/solver.md). Timing is wall time of this process on this machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path

from tvr.core.jsonl import write_jsonl
from tvr.trance import paper
from tvr.trance.data.files import read_samples, samples_file
from tvr.trance.eval.evaluate import evaluate_files
from tvr.trance.solver import solve_all
from tvr.trance.solver.perception import make_perception

MODES = {  # name -> (perception, matching)
    "learned": ("parser", "rules"),
    "gt-perception": ("gt", "rules"),
    "gt-perception+matching": ("gt", "gt"),
}


def run_mode(setting: str, data: Path, run: Path, mode: str, out: Path, limit: int | None):
    perception_name, matching = MODES[mode]
    path = samples_file(str(data), "test")
    samples = read_samples(path)[:limit] if limit else read_samples(path)
    perception = make_perception(perception_name, samples, str(run), str(data), "test")
    t0 = time.perf_counter()
    sols = list(solve_all(samples, perception, setting=setting, matching=matching))
    seconds = time.perf_counter() - t0
    pred = out / f"{setting}-{mode}.pred.jsonl"
    write_jsonl(pred, [s.prediction for s in sols])
    if limit:  # score the solved samples only
        path = out / f"{setting}-first-{limit}.samples.jsonl"
        write_jsonl(path, [s.to_dict() for s in samples])
    summary = evaluate_files(path, pred, setting)
    by_steps = defaultdict(list)
    for sample, sol in zip(
        [s for s in samples for _ in (range(1) if setting != "view" or s.extra.get("view") else range(3))],
        sols, strict=True,
    ):  # fmt: skip
        by_steps[len(sample.steps)].append(sol.notes.get("searched", 0))
    return {
        "setting": setting, "mode": mode, "samples": len(samples), "solutions": len(sols),
        "seconds": seconds, "samples_per_s": len(samples) / seconds,
        "ambiguous": sum(s.ambiguous for s in sols), "no_valid_order": sum(not s.valid for s in sols),
        "camera_right": (sum(s.view == s.prediction.get("view") for s in sols)
                         if setting == "view" else None),
        "searched_by_steps": {str(k): {"mean": statistics.mean(v), "max": max(v)}
                              for k, v in sorted(by_steps.items())},
        "evaluation": summary,
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path)
    ap.add_argument("--data", nargs="+", help="SETTING=DIR")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--limit", type=int)
    ap.add_argument("--tables", type=Path, help="only print the tables of this results.json")
    args = ap.parse_args()
    if args.tables:
        print(tables(json.loads(args.tables.read_text())))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    results = []
    for item in args.data:
        setting, folder = item.split("=", 1)
        for mode in args.modes.split(","):
            r = run_mode(setting, Path(folder), args.run, mode, args.out, args.limit)
            m = r["evaluation"]["metrics"]
            print(f"{setting:6} {mode:24} Acc {m['Acc']:.4f}  {r['samples_per_s']:.1f} samples/s  "
                  f"ambiguous {r['ambiguous']}  no valid order {r['no_valid_order']}", flush=True)  # fmt: skip
            results.append(r)
            (args.out / "results.json").write_text(json.dumps(results, indent=1))
    print(tables(results))


#: tvr's own TranceNet run on rendered Event data (docs/training-runs.md: ResNet⊕-G, 15,000
#: samples x 30 epochs, 2 cores, 110.5 min)
TVR_TRANCENET_EVENT = {"AD": 3.1850, "AND": 1.1763, "LAcc": 0.1490, "Acc": 0.1430}
#: and on Basic (docs/training-runs.md: CNN⊕-G fp32, 20,000 samples x 27 epochs, one core)
TVR_TRANCENET_BASIC = {"ObjAcc": 0.9460, "AttrAcc": 0.9600, "ValAcc": 0.7890, "Acc": 0.7480}
MODE_LABEL = {
    "learned": "tvr solver (parser + rules)",
    "gt-perception": "tvr solver, true scenes (+ rules)",
    "gt-perception+matching": "tvr solver, true scenes + true matching",
}


def _row(label: str, m: dict, cols: tuple[str, ...]) -> str:
    return (
        f"| {label} | "
        + " | ".join("-" if m.get(c) is None else f"{m[c]:.4f}" for c in cols)
        + " |"
    )


def tables(results: list[dict]) -> str:
    lines = []
    for setting in ("basic", "event", "view"):
        rows = [r for r in results if r["setting"] == setting]
        if not rows:
            continue
        cols = paper.BASIC_COLUMNS if setting == "basic" else paper.SEQUENCE_COLUMNS
        lines += [f"\n**{setting.capitalize()}** ({rows[0]['samples']} test samples; Table 3)\n",
                  "| model | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]  # fmt: skip
        for r in rows:
            lines.append(_row(MODE_LABEL[r["mode"]], r["evaluation"]["metrics"], cols))
        if setting == "event":
            lines.append(
                _row("tvr's TranceNet ResNet⊕-G (15k x 30 epochs)", TVR_TRANCENET_EVENT, cols)
            )
        if setting == "basic":
            lines.append(
                _row("tvr's TranceNet CNN⊕-G (20k x 27 epochs)", TVR_TRANCENET_BASIC, cols)
            )
        for name, label in (
            ("resnet+-g", "ResNet⊕-G"),
            ("resnet--t", "ResNet₋-T"),
            ("human", "human"),
        ):
            pm = paper.paper_metrics(name, setting)
            if pm:
                lines.append(_row(f"{label} (paper)", pm, cols))
    learned = {r["setting"]: r for r in results if r["mode"] == "learned"}
    if "event" in learned:
        os_ = learned["event"]["evaluation"]["order_sensitive"]
        lines += ["\n**Table 5** (order-sensitive Event samples)\n", "| model | count | LAcc | Acc | EO |",
                  "|---|---|---|---|---|",
                  f"| tvr solver (parser + rules) | {os_['count']} | {os_['LAcc']:.4f} | {os_['Acc']:.4f} | "
                  f"{'-' if os_.get('EO') is None else format(os_['EO'], '.4f')} |"]  # fmt: skip
        for name, m in paper.TABLE5.items():
            lines.append(f"| {name} (paper) | | {m['LAcc']:.4f} | {m['Acc']:.4f} | {m['EO']:.4f} |")
    for setting in ("event", "view"):
        if setting in learned:
            bs = learned[setting]["evaluation"]["by_steps"]
            lines += [f"\n**Fig. 7, {setting}** (Acc per number of steps)\n", "| model | " + " | ".join(bs) + " |",
                      "|---" * (len(bs) + 1) + "|",
                      "| tvr solver (parser + rules) | " + " | ".join(f"{v['Acc']:.4f}" for v in bs.values()) + " |"]  # fmt: skip
            if setting == "event":
                f7 = paper.FIG7_ACC_BY_STEPS["cnn--g"]
                lines.append(
                    "| CNN₋-G (paper's text) | "
                    + " | ".join(f"{f7.get(k, 0):.2f}" for k in bs)
                    + " |"
                )
    if "view" in learned:
        bv = learned["view"]["evaluation"]["by_view"]
        lines += ["\n**Fig. 8** (View: Acc per final view)\n", "| model | " + " | ".join(bv) + " |",
                  "|---" * (len(bv) + 1) + "|",
                  "| tvr solver (parser + rules) | " + " | ".join(f"{v['Acc']:.4f} ({v['count']})" for v in bv.values()) + " |"]  # fmt: skip
    lines += ["\n**Cost** (this machine)\n", "| setting | mode | samples/s | ambiguous | no valid order | sequences simulated per sample by steps (mean / max) |",
              "|---|---|---|---|---|---|"]  # fmt: skip
    for r in results:
        sb = "; ".join(
            f"{k}: {v['mean']:.1f} / {v['max']}" for k, v in r["searched_by_steps"].items()
        )
        lines.append(
            f"| {r['setting']} | {r['mode']} | {r['samples_per_s']:.1f} | {r['ambiguous']} | {r['no_valid_order']} | {sb} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
