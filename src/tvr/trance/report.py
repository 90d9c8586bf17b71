"""The balance statistics of a sample set and the `tvr report` folder that shows them.

`balance_stats` counts every balanced factor of the journal paper's appendix A (Fig. 11: visible
objects, attribute values, transformation length, object index, move type), the n-gram table of
its Table 8, and the share of order-sensitive samples. `tvr stats` prints the same statistics as
text (`stats_tables`). `write_report` makes a report folder: report.json and report.md for
machines, one PNG per factor plus a combined figure (`tvr.trance.report_plots`), and index.html
with example samples (`tvr.trance.report_html`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.table import Table

from tvr.errors import UserError
from tvr.trance import vocab
from tvr.trance.balance import BalanceCounts, sample_factors
from tvr.trance.sample import Sample
from tvr.trance.samples_io import write_json

FORMAT = "tvr.report/1"

#: Table 8 of the journal paper (the 500,000 Event/View training samples of TRANCE)
PAPER_TABLE8: dict[str, dict[str, float]] = {
    "1-gram": {"options": 33, "min": 38635, "max": 38638, "median": 38636, "mean": 38636, "std": 0.7714},
    "2-gram": {"options": 1089, "min": 697, "max": 708, "median": 703, "mean": 702.5, "std": 2.2854},
    "3-gram": {"options": 35937, "min": 7, "max": 15, "median": 11, "mean": 10.64, "std": 0.7880},
    "4-gram": {"options": 1185921, "min": 0, "max": 3, "median": 0, "mean": 0.1075, "std": 0.3150},
}  # fmt: skip
PAPER_TABLE8_SAMPLES = 500_000

#: shares of order-sensitive samples the papers report (Event test sets)
PAPER_ORDER_SENSITIVE: dict[str, float] = {
    "journal paper (Tab. 5, Event test set)": 0.062,
    "CVPR paper (Tab. 4, Event test set)": 0.078,
}

#: the factors of Fig. 11, in the paper's order (top row, then bottom row)
FACTORS: tuple[str, ...] = (
    "attribute_values",
    "visible_objects",
    "steps",
    "object_index",
    "move_type",
)
TABLE8_ROWS: tuple[str, ...] = ("options", "min", "max", "median", "mean", "std")
TABLE8_NOTE = (
    "min, max, median and mean grow with the number of samples; the std shows how evenly the "
    "options are drawn: strict balancing keeps it near 1 at any size (the paper's: 0.3 to 2.3), "
    "while independent draws give about the square root of the mean."
)


# --- statistics --------------------------------------------------------------------------------------
def order_sensitive_flags(samples: Sequence[Sample]) -> tuple[list[bool], int]:
    """Each sample's stored `order_sensitive` flag; flags that are missing are computed with the
    simulator (`tvr.trance.metrics.order_sensitive_batch`). Returns (flags, number computed)."""
    flags = [s.order_sensitive for s in samples]
    missing = [i for i, f in enumerate(flags) if f is None]
    if missing:
        from tvr.trance import metrics

        init = np.stack([samples[i].initial_array for i in missing])
        objs = np.full((len(missing), vocab.MAX_STEPS), -1, dtype=np.int64)
        values = np.full((len(missing), vocab.MAX_STEPS), metrics.PAD, dtype=np.int64)
        for r, i in enumerate(missing):
            for k, st in enumerate(samples[i].steps):
                objs[r, k], values[r, k] = st.obj, st.value
        computed = metrics.order_sensitive_batch(init, objs, values)
        for r, i in enumerate(missing):
            flags[i] = bool(computed[r])
    return [bool(f) for f in flags], len(missing)


def count_factors(samples: Sequence[Sample]) -> BalanceCounts:
    """The balance counts of a sample set."""
    counts = BalanceCounts()
    for s in samples:
        counts.record(sample_factors(s))
    return counts


def merge_counts(parts: Sequence[BalanceCounts]) -> BalanceCounts:
    """The counts of the union of disjoint sample sets, from their counts."""
    total = BalanceCounts()
    for c in parts:
        total.visible += c.visible
        for attr in total.attr_values:
            total.attr_values[attr] += c.attr_values[attr]
        total.steps += c.steps
        total.objects += c.objects
        total.move_types += c.move_types
        for mine, theirs in zip(total.grams, c.grams, strict=True):
            mine.update(theirs)
        total.samples += c.samples
    return total


def stats_of(counts: BalanceCounts, flags: Sequence[bool], computed: int = 0) -> dict[str, Any]:
    """The statistics dict (see `balance_stats`) of counts and order-sensitive flags."""
    stats = counts.to_dict()
    stats["order_sensitive"] = sum(flags)
    stats["order_sensitive_share"] = sum(flags) / len(flags) if flags else 0.0
    stats["order_sensitive_computed"] = computed
    return stats


def balance_stats(samples: Sequence[Sample]) -> dict[str, Any]:
    """Counts of every balanced factor, the Table 8 n-gram rows and the order-sensitive count.

    Keys: samples, visible_objects, attribute_values, steps, object_index, move_type, values,
    ngrams (as `BalanceCounts.to_dict`), order_sensitive (count), order_sensitive_share and
    order_sensitive_computed (flags missing from the samples and computed here).
    """
    flags, computed = order_sensitive_flags(samples)
    return stats_of(count_factors(samples), flags, computed)


def _fmt(x: float) -> str:
    if float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.4g}"


def table8_rows(stats: dict[str, Any], paper: bool = True) -> list[list[str]]:
    """Rows of Table 8 as text: [row name, ours 1-gram, (paper 1-gram), ours 2-gram, ...]."""
    rows = []
    for key in TABLE8_ROWS:
        row = [key]
        for n, ours in stats["ngrams"].items():
            row.append(_fmt(ours[key]))
            if paper:
                theirs = PAPER_TABLE8.get(n)
                row.append(_fmt(theirs[key]) if theirs else "-")
        rows.append(row)
    return rows


def table8_header(stats: dict[str, Any], paper: bool = True) -> list[str]:
    header = [""]
    for n in stats["ngrams"]:
        header.append(n)
        if paper:
            header.append(f"{n} (paper)")
    return header


def stats_tables(stats: dict[str, Any], paper: bool = True) -> list[Table]:
    """The statistics as rich tables (one per factor, one per attribute, and Table 8)."""
    tables = []
    for factor in ("visible_objects", "steps", "object_index", "move_type"):
        row = stats[factor]
        t = Table(title=factor.replace("_", " "))
        for k in row:
            t.add_column(k, justify="right")
        t.add_row(*(str(v) for v in row.values()))
        tables.append(t)
    for attr, row in stats["attribute_values"].items():
        t = Table(title=f"object {attr}")
        for k in row:
            t.add_column(k, justify="right")
        t.add_row(*(str(v) for v in row.values()))
        tables.append(t)
    title = "n-gram atomic transformations (Table 8"
    title += f"; dim: the paper's {PAPER_TABLE8_SAMPLES:,} samples)" if paper else ")"
    t = Table(title=title)
    t.add_column("")
    for n in stats["ngrams"]:
        t.add_column(n, justify="right")
    for row in table8_rows(stats, paper):
        if paper:  # ours above the paper's number in each cell, to fit 80 columns
            cells = [f"{a}\n[dim]{b}[/dim]" for a, b in zip(row[1::2], row[2::2], strict=True)]
        else:
            cells = row[1:]
        t.add_row(row[0], *cells)
    tables.append(t)
    return tables


def order_sensitive_line(stats: dict[str, Any]) -> str:
    papers = ", ".join(f"{v:.1%} in the {k}" for k, v in PAPER_ORDER_SENSITIVE.items())
    return (
        f"{stats['order_sensitive']} of {stats['samples']} samples are order-sensitive "
        f"({stats['order_sensitive_share']:.1%}); the papers saw {papers}"
    )


# --- the report folder --------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReportConfig:
    """Options of one report (saved as config.json in the report folder)."""

    source: str
    out: str
    split: str | None = None  # None: all splits combined
    examples: int = 4  # example samples per split on the HTML page


def choose_examples(n_samples: int, n: int) -> list[int]:
    """`n` positions spread evenly over a split (first and last included), in order."""
    if n <= 0 or n_samples == 0:
        return []
    if n >= n_samples:
        return list(range(n_samples))
    return sorted({round(float(x)) for x in np.linspace(0, n_samples - 1, n)})


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def report_markdown(report: dict[str, Any]) -> str:
    """report.md: the same numbers as report.json, as Markdown tables."""
    stats = report["stats"]
    out = [
        f"# Dataset report: {report['source']}",
        "",
        f"- kind: {report['kind']}; setting: {report['setting'] or 'unknown'}",
        f"- statistics over: {report['scope']} ({stats['samples']:,} samples)",
        "- splits: "
        + ", ".join(
            f"{k} {v['samples']:,} ({v['order_sensitive']:,} order-sensitive)"
            for k, v in report["splits"].items()
        ),
        f"- order-sensitive: {order_sensitive_line(stats)}",
    ]
    if stats["order_sensitive_computed"]:
        out.append(
            f"  ({stats['order_sensitive_computed']} flags were missing from the samples and "
            "were computed by the simulator)"
        )
    out += ["", "## Balanced factors (Fig. 11)", ""]
    for factor in ("visible_objects", "steps", "object_index", "move_type"):
        row = stats[factor]
        out += [f"### {factor.replace('_', ' ')}", ""]
        out += [_markdown_table(list(row), [[f"{v:,}" for v in row.values()]]), ""]
    for attr, row in stats["attribute_values"].items():
        out += [f"### object {attr}", ""]
        out += [_markdown_table(list(row), [[f"{v:,}" for v in row.values()]]), ""]
    out += [
        "## n-gram atomic transformations (Table 8)",
        "",
        f"The paper's columns are for its {PAPER_TABLE8_SAMPLES:,} samples. {TABLE8_NOTE}",
        "",
        _markdown_table(table8_header(stats), table8_rows(stats)),
        "",
        "## Plots",
        "",
    ]
    out += [f"- {k}: [{v}]({v})" for k, v in report["plots"].items()]
    out += ["", "## Examples", ""]
    out += [
        f"- {e['split']} {e['id']}: {e['steps']} step(s)"
        + (", order-sensitive" if e["order_sensitive"] else "")
        for e in report["examples"]
    ]
    return "\n".join(out) + "\n"


def _replace_dir(tmp: Path, out: Path) -> None:
    """Move the finished folder `tmp` to `out`, replacing an older report there."""
    old = None
    if out.exists():
        if not out.is_dir():
            raise OSError(f"{out} exists and is not a folder")
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        os.replace(out, old)
    os.replace(tmp, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_report(source: Any, config: ReportConfig) -> dict[str, Any]:
    """Write the report folder `config.out` for a `report_sources.ReportSource`; returns the
    content of report.json. The folder is built beside its place and moved in when complete."""
    try:
        from tvr.trance import report_plots
    except ImportError as err:
        raise UserError(
            f"tvr report draws its plots with matplotlib ({err}); pip install 'tvr[report]'"
        ) from None
    from tvr.trance import report_html

    splits = source.select(config.split)
    scope = config.split or ("all splits" if len(source.splits) > 1 else splits[0].name)
    counts = {sp.name: count_factors(sp.samples) for sp in source.splits}
    flags = {sp.name: order_sensitive_flags(sp.samples) for sp in source.splits}
    per_split = {name: stats_of(counts[name], *flags[name]) for name in counts}
    chosen = [sp.name for sp in splits]
    stats = stats_of(
        merge_counts([counts[n] for n in chosen]),
        [f for n in chosen for f in flags[n][0]],
        sum(flags[n][1] for n in chosen),
    )
    samples = [s for sp in splits for s in sp.samples]
    out = Path(config.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        title = f"{source.name}: {scope} ({len(samples):,} samples)"
        plots = report_plots.plot_balance(stats, tmp / "plots", title)
        examples = report_html.copy_examples(splits, config.examples, tmp)
        report = {
            "format": FORMAT,
            "source": str(source.root),
            "kind": source.kind,
            "setting": source.setting,
            "scope": scope,
            "splits": {
                name: {
                    "samples": st["samples"],
                    "order_sensitive": st["order_sensitive"],
                    "order_sensitive_share": st["order_sensitive_share"],
                }
                for name, st in per_split.items()
            },
            "stats": stats,
            "per_split": per_split,
            "paper": {
                "table8": PAPER_TABLE8,
                "table8_samples": PAPER_TABLE8_SAMPLES,
                "order_sensitive_share": PAPER_ORDER_SENSITIVE,
            },
            "plots": {k: p.relative_to(tmp).as_posix() for k, p in plots.items()},
            "examples": [e.summary() for e in examples],
        }
        write_json(tmp / "config.json", config.__dict__)
        write_json(tmp / "report.json", report)
        (tmp / "report.md").write_text(report_markdown(report), encoding="utf-8")
        (tmp / "index.html").write_text(
            report_html.index_html(report, examples, source.setting), encoding="utf-8"
        )
        _replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return report
