"""Balance statistics as tables: Table 8 beside the paper's, rich tables for `tvr stats`."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from tvr.trance.paper import PAPER_ORDER_SENSITIVE, PAPER_TABLE8, PAPER_TABLE8_SAMPLES

TABLE8_ROWS: tuple[str, ...] = ("options", "min", "max", "median", "mean", "std")
TABLE8_NOTE = (
    "min, max, median and mean grow with the number of samples; the std shows how evenly the "
    "options are drawn: strict balancing keeps it near 1 at any size (the paper's: 0.3 to 2.3), "
    "while independent draws give about the square root of the mean."
)


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
    title += f"; each row's second line: the paper's {PAPER_TABLE8_SAMPLES:,} samples)" if paper else ")"
    t = Table(title=title)
    t.add_column("")
    for n in stats["ngrams"]:
        t.add_column(n, justify="right")
    for row in table8_rows(stats, paper):
        if paper:  # ours above the paper's number in each cell, to fit 80 columns
            cells = [f"{a}\n[dim]{b}[/dim]" for a, b in zip(row[1::2], row[2::2], strict=True)]
        else:
            cells = row[1:]
        label = f"{row[0]}\n[dim]{row[0]} (paper)[/dim]" if paper else row[0]
        t.add_row(label, *cells)
    tables.append(t)
    return tables


def order_sensitive_line(stats: dict[str, Any]) -> str:
    papers = ", ".join(f"{v:.1%} in the {k}" for k, v in PAPER_ORDER_SENSITIVE.items())
    return (
        f"{stats['order_sensitive']} of {stats['samples']} samples are order-sensitive "
        f"({stats['order_sensitive_share']:.1%}); the papers saw {papers}"
    )
