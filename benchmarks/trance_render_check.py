"""Cost and effect of the solver's render-and-compare check (issue 41, point 2).

On a `tvr generate --backend raster` split: the oracle parse with probabilities
(`PlantedPerception`), sure everywhere, then with one attribute misread per sample (wrong value
at --p-wrong, the true one at --p-true), each solved with `--render-check off` and `auto`.
Reports samples/s (one process; images read from the dataset's 160x120 copies), Acc by
`tvr evaluate`, and the samples the check changed right->wrong and wrong->right.

    python benchmarks/trance_render_check.py --data /tmp/tl-event --split test
    python benchmarks/trance_render_check.py --data /tmp/tl-event --cycles 4   # + 4 Cycles images

`--cycles N` also renders the final image of the first N samples with Cycles `default` (N
images: about 5 s each) and solves them, each with every planted misreading of
`plant_misreadings` over 8 seeds, against the Cycles image: does the raster render still find
the truth on the release's look?
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from tvr.core.jsonl import write_jsonl
from tvr.trance.data.files import read_samples
from tvr.trance.eval.evaluate import evaluate_files
from tvr.trance.perception.data import open_split
from tvr.trance.solver import solve
from tvr.trance.solver.planted import PlantedPerception, plant_misreadings
from tvr.trance.world.vocab import IMAGE_SLOTS


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--split", default="test")
    ap.add_argument("--setting", default="event")
    ap.add_argument("--p-wrong", type=float, default=0.97)
    ap.add_argument("--p-true", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cycles", type=int, default=0, help="also N samples on Cycles images")
    args = ap.parse_args()
    path = args.data / args.split / "samples.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    samples = read_samples(path)
    store = open_split(args.data, args.split)

    def image(sid: str, view: str):
        shard, j = store.locate(store.index_of(sid))
        return shard.small[j, IMAGE_SLOTS.index(("fin", view))]

    finals = {s["id"]: s["final"] for s in lines}
    plants = plant_misreadings(lines, seed=args.seed)
    out = {}
    for label, planted in (("sure", {}), ("planted", plants)):
        perception = PlantedPerception(finals, image, planted, p_wrong=args.p_wrong,
                                       p_true=args.p_true)  # fmt: skip
        for mode in ("off", "auto"):
            t = time.perf_counter()
            sols = [solve(s, perception, setting=args.setting, render_check=mode) for s in samples]
            dt = time.perf_counter() - t
            with tempfile.TemporaryDirectory() as tmp:
                pred = Path(tmp) / "p.jsonl"
                write_jsonl(pred, [s.prediction for s in sols])
                res = evaluate_files(path, pred, args.setting)
            out[(label, mode)] = (sols, res["metrics"]["Acc"], dt)
            checked = sum("render_check" in s.notes for s in sols)
            print(f"{label:8s} {mode:4s} Acc {res['metrics']['Acc']:.4f}  "
                  f"{len(sols) / dt:7.1f} samples/s  rendered {checked}")  # fmt: skip
        a, b = out[(label, "off")][0], out[(label, "auto")][0]
        changed = [
            k for k, (x, y) in enumerate(zip(a, b, strict=True)) if x.prediction != y.prediction
        ]
        print(f"{label}: {len(changed)} predictions changed by the check")
        _flips(path, args.setting, a, b, changed)
    if args.cycles:
        _on_cycles(path, lines[: args.cycles], samples[: args.cycles], args, image)


def _flips(path, setting, a, b, changed) -> None:
    """Right->wrong and wrong->right among the changed samples (scored one by one)."""
    rw = wr = 0
    with tempfile.TemporaryDirectory() as tmp:
        for k in changed:
            rows = []
            for sols in (a, b):
                pred = Path(tmp) / "p.jsonl"
                write_jsonl(pred, [sols[k].prediction])
                sub = Path(tmp) / "s.jsonl"
                sub.write_text(path.read_text().splitlines()[k] + "\n")
                rows.append(evaluate_files(sub, pred, setting)["metrics"]["Acc"] == 1.0)
            rw += rows[0] and not rows[1]
            wr += rows[1] and not rows[0]
    print(f"  right->wrong {rw}, wrong->right {wr}")


def _on_cycles(path, lines, samples, args, raster_image) -> None:
    """Planted misreadings against Cycles `default` final images (centre view), beside the same
    parses against the raster images of the dataset."""
    from tvr.trance.render.images import make_renderer
    from tvr.trance.render.scene import sample_views

    renderer = make_renderer("cycles", "default")
    counts = {(look, mode): 0.0 for look in ("raster", "cycles") for mode in ("off", "auto")}
    n = 0
    for line, sample in zip(lines, samples, strict=True):
        _, desc = next(v for v in sample_views(line) if v[0].endswith("fin.C.png"))
        looks = {"cycles": renderer.render(desc)[0], "raster": raster_image(line["id"], "C")}
        finals = {line["id"]: line["final"]}
        for seed in range(8):
            plant = plant_misreadings([line], seed=seed)
            n += 1
            for look, mode in counts:
                perception = PlantedPerception(finals, lambda sid, view, im=looks[look]: im,
                                               plant, p_wrong=args.p_wrong, p_true=args.p_true)  # fmt: skip
                sol = solve(sample, perception, setting=args.setting, render_check=mode)
                with tempfile.TemporaryDirectory() as tmp:
                    pred, sub = Path(tmp) / "p.jsonl", Path(tmp) / "s.jsonl"
                    write_jsonl(pred, [sol.prediction])
                    write_jsonl(sub, [line])
                    counts[(look, mode)] += evaluate_files(sub, pred, args.setting)["metrics"][
                        "Acc"
                    ]
    print(f"{len(lines)} samples x 8 planted parses ({n}), final image C:")
    for (look, mode), c in counts.items():
        print(f"  {look:6s} images, check {mode:4s}: Acc {c / n:.3f}")


if __name__ == "__main__":
    main()
