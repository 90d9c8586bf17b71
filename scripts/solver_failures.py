"""Look at the solver's failures: sort them into causes and draw them (docs/solver.md).

    python scripts/solver_failures.py --run RUN --data DIR --setting event \
        --predictions PRED.jsonl --count 20 --out docs/img/solver-failures-event.png

For each wrong prediction (first `count` in file order) it compares the parse of the final image
with the true final scene (labels from the scene JSON and the raster masks) and names a cause:
`occlusion` (a true object showing under 150 pixels was missed), `out of view` (a reference step
moves an object out of, or into, the visible area and the parse or the matching read it
otherwise), `attribute confusion` (a found object with a wrong attribute), `position error` (a
found object more than 5 grid units from its place: the lattice reading goes wrong),
`missed object` (a visible object not found), `extra object`, or `order search / ambiguity`
(the parse is right and the steps are still wrong). Prints the counts and a line per failure;
draws initial and final image with the detections (green: right, red: wrong attribute, orange:
extra) and the steps.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from tvr.trance.eval.evaluate import evaluate_files
from tvr.trance.perception.data import open_split
from tvr.trance.perception.geometry import centre_height, pixel_to_grid
from tvr.trance.perception.labels import COL, image_labels
from tvr.trance.perception.metrics import MATCH_RADIUS, VISIBLE_PIXELS
from tvr.trance.perception.model import HEADS
from tvr.trance.perception.predict import SceneParser
from tvr.trance.solver.images import SOLVER_THRESHOLD
from tvr.trance.world.camera import CAMERA_BASE
from tvr.trance.world.vocab import IMAGE_SLOTS, VALUES


def cause(sample, dets, labels, view) -> tuple[str, list[str]]:
    notes = []
    present = labels[:, COL["present"]] > 0.5
    pixels = labels[:, COL["pixels"]]
    matched = {}
    for k, d in enumerate(dets):
        best = None
        for i in np.nonzero(present & (pixels > 0))[0]:
            dist = float(np.hypot(d.u - labels[i, COL["u"]], d.v - labels[i, COL["v"]]))
            if dist <= MATCH_RADIUS and (best is None or dist < best[0]) and i not in matched.values():
                best = (dist, int(i))
        if best:
            matched[k] = best[1]
    causes = []
    for i in np.nonzero(present)[0]:
        if i in matched.values():
            continue
        if 0 < pixels[i] < VISIBLE_PIXELS or pixels[i] == 0:
            causes.append("occlusion")
            notes.append(f"object {i} hidden ({int(pixels[i])} px) and not found")
        else:
            causes.append("missed object")
            notes.append(f"object {i} ({int(pixels[i])} px) not found")
    for k, d in enumerate(dets):
        if k not in matched:
            causes.append("extra object")
            notes.append(f"extra detection {d.attributes} score {d.score:.2f}")
            continue
        i = matched[k]
        wrong = [n for n, values in HEADS if values.index(d.attributes[n]) != int(labels[i, COL[n]])]
        if wrong:
            causes.append("attribute confusion")
            notes.append(f"object {i}: {', '.join(f'{n} {d.attributes[n]} (p {d.probabilities[n]:.2f}) for {HEADS[[h for h, _ in HEADS].index(n)][1][int(labels[i, COL[n]])]}' for n in wrong)}")
        h = centre_height(d.attributes["size"], d.attributes["shape"])
        x, y = pixel_to_grid(d.u, d.v, h, CAMERA_BASE[view])
        err = float(np.hypot(x - labels[i, COL["x"]], y - labels[i, COL["y"]]))
        if err > 5:
            causes.append("position error")
            notes.append(f"object {i}: position off by {err:.1f} grid units")
    steps = sample.steps
    if any(s.attr == "position" for s in steps):
        final_vis = {i for i in range(10) if present[i]}
        init = [o["position"] for o in sample.objects]
        moved_out = [s.obj for s in steps if s.obj not in final_vis and abs(init[s.obj][0]) <= 20 and abs(init[s.obj][1]) <= 20]
        if moved_out and not causes:
            causes.append("out of view")
            notes.append(f"objects {moved_out} left the view")
    if not causes:
        causes.append("order search / ambiguity")
    return causes[0], notes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, required=True)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--setting", required=True)
    ap.add_argument("--predictions", type=Path, required=True)
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    store = open_split(args.data, "test")
    with tempfile.TemporaryDirectory() as tmp:
        evaluate_files(store.samples_path, args.predictions, args.setting, out=tmp)
        rows = [json.loads(x) for x in (Path(tmp) / "detail.jsonl").read_text().splitlines()]
    preds = {(p["id"], p.get("view")): p for p in map(json.loads, args.predictions.read_text().splitlines())}
    parser = SceneParser.load(args.run)
    fails = [r for r in rows if not r["correct"] and r.get("prediction") is not None][: args.count]
    counts: Counter = Counter()
    panels = []
    for r in fails:
        i = store.index_of(r["id"])
        sample = store.sample(i)
        view = r.get("view") or "C"
        slot = IMAGE_SLOTS.index(("fin", view))
        shard, j = store.locate(i)
        images = np.asarray(shard.small[j])
        dets = parser.parse(images, threshold=SOLVER_THRESHOLD)[slot]  # what the solver saw
        labels = image_labels(sample)[slot]
        c, notes = cause(sample, dets, labels, view)
        counts[c] += 1
        pred = preds.get((r["id"], r.get("view"))) or preds.get((r["id"], None)) or {}
        truth = ", ".join(f"{s.obj}:{VALUES[s.value]}" for s in sample.steps)
        guess = ", ".join(f"{s['obj']}:{s['value']}" for s in pred.get("steps", []))
        print(f"{r['id']} {view}: {c}; truth [{truth}] predicted [{guess}]; " + "; ".join(notes))
        panel = Image.new("RGB", (320, 160), "white")
        panel.paste(Image.fromarray(images[0]), (0, 0))
        fin = Image.fromarray(images[slot]).copy()
        draw = ImageDraw.Draw(fin)
        for d in dets:
            u, v = d.u / 2, d.v / 2
            draw.ellipse((u - 3, v - 3, u + 3, v + 3), outline=(0, 200, 0), width=1)
        panel.paste(fin, (160, 0))
        t = ImageDraw.Draw(panel)
        t.text((2, 121), f"{r['id']} {view}: {c}", fill=(0, 0, 0))
        t.text((2, 133), f"truth: {truth}"[:60], fill=(0, 0, 0))
        t.text((2, 145), f"pred:  {guess}"[:60], fill=(160, 0, 0))
        panels.append(panel)
    print(dict(counts))
    if args.out and panels:
        cols = 4
        grid = Image.new("RGB", (320 * cols, 160 * ((len(panels) + cols - 1) // cols)), "white")
        for k, p in enumerate(panels):
            grid.paste(p, (320 * (k % cols), 160 * (k // cols)))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        grid.save(args.out)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
