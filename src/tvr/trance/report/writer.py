"""`write_report`: the `tvr report` folder of a sample set's balance statistics.

The statistics are `tvr.trance.sampling.stats.balance_stats` (every balanced factor of the journal
paper's appendix A, Fig. 11; the n-gram table of Table 8; the order-sensitive share). The folder
holds report.json and report.md for machines, one PNG per factor plus a combined figure
(`tvr.trance.report.plots`), and index.html with example samples (`tvr.trance.report.html`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tvr.core.extras import missing_extra
from tvr.core.jsonl import write_json
from tvr.trance.paper import PAPER_ORDER_SENSITIVE, PAPER_TABLE8, PAPER_TABLE8_SAMPLES
from tvr.trance.report import html as report_html
from tvr.trance.report.tables import (
    TABLE8_NOTE,
    order_sensitive_line,
    table8_header,
    table8_rows,
)
from tvr.trance.sampling.stats import count_factors, merge_counts, order_sensitive_flags, stats_of

FORMAT = "tvr.report/1"

# --- the report folder --------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReportConfig:
    """Options of one report (saved as config.json in the report folder)."""

    source: str
    out: str
    split: str | None = None  # None: all splits combined
    examples: int = 4  # example samples per split on the HTML page


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
        from tvr.trance.report import plots as report_plots
    except ImportError as err:
        raise missing_extra(err, "tvr report (its plots)") from None
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
