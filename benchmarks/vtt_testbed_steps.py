"""What a model's descriptions tell on the TRANCE text testbed: the kind of step and the new value.

Every testbed description comes from a template (`tvr.testbeds.text`), so it can be read
back (`read_step_text`) into the kind of step (colour, material, shape, size, a move within view,
out of view, into view) and its new value ("color.green", "position.front-left.1"; a move out or
in: its direction). A prediction is read the same way and compared with its reference, step by
step: the share of steps whose kind is right, whose kind and value are right, and whose
description fits no template. This says what caption metrics cannot: whether a model saw what
changed, or writes fluent descriptions of something else.

    python benchmarks/vtt_testbed_steps.py --data DATA/meta/vtt.jsonl --split test \\
        --predictions ttnet=runs/ttnet/predictions.jsonl nn=nn.jsonl [--out steps.json]

The first model is then compared with each other one on the same steps (right kind; right kind
and value): exact McNemar p and the steps right in one model only (`tvr.core.stats`).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

from tvr.core.errors import UserError
from tvr.core.jsonl import iter_jsonl, write_json
from tvr.core.stats import compare_paired
from tvr.testbeds.text import TEMPLATES, read_step_text


def references(records: Path, split: str) -> dict[tuple[str, int], tuple[str, str]]:
    """(id, step) -> (kind, value) of every reference description of `split`."""
    out = {}
    for lineno, rec in iter_jsonl(records):
        if rec.get("split") != split:
            continue
        for i, step in enumerate(rec["annotation"]):
            told = read_step_text(step["label"])
            if told is None:
                raise UserError(f"{records}, line {lineno}: {step['label']!r} is not a testbed "
                                "description (a record of `tvr vtt testbed`?)")  # fmt: skip
            out[(rec["id"], i)] = (told.kind, told.value)
    return out


def score(refs: dict[tuple[str, int], tuple[str, str]], predictions: Path) -> dict:
    """Per kind of the reference step: steps, right kind, right kind and value, unread."""
    told = {}
    for _, row in iter_jsonl(predictions):
        for i, text in enumerate(row.get("transformations") or []):
            told[(row["id"], i)] = read_step_text(text) if isinstance(text, str) else None
    per: dict[str, Counter] = defaultdict(Counter)
    predicted_kinds: Counter = Counter()
    steps: dict[str, dict[str, bool]] = {"kind": {}, "value": {}}
    for key, (kind, value) in refs.items():
        got = told.get(key)
        c = per[kind]
        c["steps"] += 1
        name = f"{key[0]}/{key[1]}"
        steps["kind"][name] = got is not None and got.kind == kind
        steps["value"][name] = got is not None and got.kind == kind and got.value == value
        if got is None:
            c["unread"] += 1
            continue
        predicted_kinds[got.kind] += 1
        c["kind"] += got.kind == kind
        c["value"] += got.kind == kind and got.value == value
    total = sum(per.values(), Counter())
    rows = {k: _rates(per[k]) for k in TEMPLATES if k in per}
    return {
        "all": _rates(total),
        "by_kind": rows,
        "predicted_kinds": dict(predicted_kinds),
        "steps": steps,
    }


def _rates(c: Counter) -> dict:
    n = c["steps"]
    return {"steps": n, "kind": c["kind"] / n, "value": c["value"] / n, "unread": c["unread"] / n}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--split", default="test")
    p.add_argument("--predictions", nargs="+", required=True, metavar="LABEL=FILE")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    try:
        refs = references(args.records, args.split)
        results = {}
        for item in args.predictions:
            label, _, path = item.rpartition("=")
            results[label or path] = score(refs, Path(path))
    except UserError as err:
        print(f"vtt_testbed_steps: error: {err}", file=sys.stderr)
        return 2
    kinds = list(next(iter(results.values()))["by_kind"])
    print(f"{len(refs)} reference steps ({args.split}); per model: right kind / right kind and "
          "value, in % of steps")  # fmt: skip
    print(f"{'model':<18}{'all':>13}" + "".join(f"{k:>13}" for k in kinds) + f"{'unread':>8}")
    for label, r in results.items():
        cells = [r["all"], *(r["by_kind"][k] for k in kinds)]
        line = "".join(f"{100 * c['kind']:>6.1f} /{100 * c['value']:>5.1f}" for c in cells)
        print(f"{label:<18}{line}{100 * r['all']['unread']:>7.1f}")
    counts = Counter(kind for kind, _ in refs.values())
    print("steps per kind: " + ", ".join(f"{k} {counts[k]}" for k in kinds))
    labels = list(results)
    for other in labels[1:]:
        cells = []
        for what in ("kind", "value"):
            c = compare_paired(results[labels[0]]["steps"][what], results[other]["steps"][what])
            cells.append(f"{what}: {c.only_a} / {c.only_b}, p {c.p_value:.2g}")
        print(
            f"{labels[0]} against {other} (right in A only / B only, McNemar): " + "; ".join(cells)
        )
    if args.out:
        write_json(args.out, {"records": str(args.records), "split": args.split, "models": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
