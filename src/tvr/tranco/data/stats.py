"""`tvr tranco stats`: a dataset's samples, clips and lengths per split, beside the paper's Table 2."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from tvr.tranco.data.dataset import TrancoDataset
from tvr.tranco.data.formats import ReferenceSample
from tvr.tranco.data.layout import SPLITS
from tvr.tranco.paper import PAPER, TABLE2

#: the lengths Table 2 lists (the paper keeps videos with 2 to 7 steps)
LENGTHS: tuple[int, ...] = (2, 3, 4, 5, 6, 7)


def dataset_stats(dataset: TrancoDataset) -> dict[str, Any]:
    """split -> {"samples", "clips", "by_length": {k: samples}}, with a "total" entry; lengths
    outside 2..7 (a testbed's) are counted under their own k."""
    out: dict[str, Any] = {}
    for split in SPLITS:
        samples = dataset.split(split)
        lengths = Counter(s.steps for s in samples)
        out[split] = {
            "samples": len(samples),
            "clips": sum(s.steps for s in samples),
            "by_length": {k: lengths.get(k, 0) for k in sorted(set(LENGTHS) | set(lengths))},
        }
    total_lengths: Counter[int] = Counter()
    for split in SPLITS:
        total_lengths.update(out[split]["by_length"])
    out["total"] = {
        "samples": sum(out[s]["samples"] for s in SPLITS),
        "clips": sum(out[s]["clips"] for s in SPLITS),
        "by_length": dict(sorted(total_lengths.items())),
    }
    return out


def samples_stats(samples: Sequence[ReferenceSample], split: str) -> dict[str, Any]:
    """`dataset_stats` of one samples file, its samples counted as `split` (the other splits
    empty): a file holds one split, and no clip or image files to check."""
    lengths = Counter(len(s.clips) for s in samples)
    by_length = {k: lengths.get(k, 0) for k in sorted(set(LENGTHS) | set(lengths))}
    empty = {"samples": 0, "clips": 0, "by_length": {k: 0 for k in by_length}}
    out: dict[str, Any] = {name: dict(empty) for name in SPLITS}
    out[split] = {"samples": len(samples), "clips": sum(lengths[k] * k for k in lengths),
                  "by_length": by_length}  # fmt: skip
    out["total"] = dict(out[split])
    return out


def paper_stats() -> dict[str, Any]:
    """Table 2 in the shape of `dataset_stats`."""
    return {
        split: {"samples": videos, "clips": clips, "by_length": dict(by_k)}
        for split, (videos, clips, by_k) in TABLE2.items()
    }


def stats_lines(stats: dict[str, Any], name: str = "ours") -> list[str]:
    """The table: per split, our row, Table 2's row, and each one's shares (of the total samples
    for the split sizes, of the split's samples for the lengths), so sets of any size compare."""
    paper = paper_stats()
    lengths = sorted(set(LENGTHS) | {k for s in stats.values() for k in s["by_length"]})
    head = ["split", "source", "samples", "clips", "clips/sample"] + [f"k={k}" for k in lengths]
    rows = [head]
    for split in (*SPLITS, "total"):
        for label, st in ((name, stats[split]), ("Table 2", paper[split])):
            n = st["samples"]
            row = [split, label, str(n), str(st["clips"]), _ratio(st["clips"], n)]
            row += [str(st["by_length"].get(k, 0)) for k in lengths]
            rows.append(row)
        for label, st, total in (
            (f"{name} %", stats[split], stats["total"]["samples"]),
            ("Table 2 %", paper[split], paper["total"]["samples"]),
        ):
            n = st["samples"]
            row = [split, label, _percent(n, total), "", ""]
            row += [_percent(st["by_length"].get(k, 0), n) for k in lengths]
            rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [
        f"TRANCO statistics: {name} against Table 2 of {PAPER}",
        "(samples % = share of all samples; k % = share of the split's samples)",
    ]
    for i, row in enumerate(rows):
        cells = [
            c.ljust(w) if j < 2 else c.rjust(w)
            for j, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "-"


def _percent(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}" if b else "-"
