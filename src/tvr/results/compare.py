"""The shared part of a paired comparison of two evaluations (`tvr <benchmark> compare`).

A benchmark reads its two `detail.jsonl` files and says which metrics it compares; this module
holds what every comparison does alike: finding and naming the detail files, the checks on
their lines, a metric's row (n, A, B, A-B, the 95% bootstrap interval, the sign-flip p; for a
right-or-wrong metric the McNemar p), accuracy per group of items, the notes on items left out,
the Markdown tables, and writing compare.json and compare.md. Each benchmark registers its
comparison here (`register_comparer`, from its plugin.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any, Protocol

from tvr.core.errors import InputError, UserError
from tvr.core.jsonl import iter_jsonl, prepare_output_folder, write_json, write_text
from tvr.core.plugins import load_benchmarks
from tvr.core.verbs import Option

DETAIL = "detail.jsonl"
COMPARE_JSON = "compare.json"
COMPARE_MD = "compare.md"

#: the columns of the metric table
COLUMNS = ("metric", "n", "A", "B", "A-B", "95% low", "95% high", "p", "test")


class Located(Protocol):
    """An item read from a detail file, which knows its line."""

    line: int


def detail_file(path: str | Path, command: str) -> Path:
    """The detail.jsonl of an evaluation folder, or the file itself; UserError if there is none.

    Args:
        path: an evaluation folder or a detail file.
        command: the command that writes the folder, named in the error
            (`tvr vtt evaluate --out`).
    """
    path = Path(path)
    if path.is_dir():
        if not (path / DETAIL).is_file():
            raise UserError(f"{path}: no {DETAIL} in this folder (write it with `{command}`)")
        return path / DETAIL
    if not path.is_file():
        raise UserError(f"{path}: no such file or folder")
    return path


def default_label(path: str | Path) -> str:
    """A folder's name; for a file its folder's name if it is called detail.jsonl, else its stem."""
    path = Path(path)
    if path.is_dir():
        return path.resolve().name
    return path.resolve().parent.name if path.name == DETAIL else path.stem


def detail_rows(file: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The lines of a detail file, each a JSON object with the sample id as a string (errors name
    the file, line and field)."""
    for lineno, row in iter_jsonl(file):
        if not isinstance(row, dict):
            raise InputError(file, lineno, None, "expected a JSON object")
        if not isinstance(row.get("id"), str):
            raise InputError(file, lineno, "id", "expected the sample id as a string")
        yield lineno, row


def number_or_none(value: Any, file: Path, line: int, field: str) -> float | None:
    """A metric's value on a detail line as a float, or None for null; InputError otherwise."""
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise InputError(file, line, field, "expected a number or null")
    return float(value)


def check_same_keys(
    a: tuple[Path, Mapping[str, Located]],
    b: tuple[Path, Mapping[str, Located]],
    name: Callable[[str], str],
    scope: str,
) -> None:
    """InputError at the first item that only one side scores (B's items first, then A's).

    Args:
        a, b: each side's detail file and its items by key.
        name: names an item in the message, from its key ("sample 's5'").
        scope: what the two must score alike, in the message ("samples", "split").
    """
    for (path, items), (other_path, other) in ((b, a), (a, b)):
        for key, item in items.items():
            if key not in other:
                raise InputError(path, item.line, "id",
                                 f"{name(key)} is not in {other_path} (the two evaluations "
                                 f"must score the same {scope})")  # fmt: skip


def score_row(
    metric: str,
    a: Mapping[str, float | None],
    b: Mapping[str, float | None],
    resamples: int,
    seed: int,
    **extra: Any,
) -> dict[str, Any]:
    """One metric's row: the paired sign-flip test and a seeded bootstrap interval of A-B over the
    items where both have a value (`left_out` counts the others; n is 0 where none has).

    Args:
        metric: the metric's key in the row.
        a, b: each item's value in A and in B (None: no value); the same keys.
        extra: more fields, placed after `metric` (e.g. the metric's printed name).
    """
    from tvr.core.stats import compare_paired_scores

    both = [k for k, value in a.items() if value is not None and b[k] is not None]
    left_out = len(a) - len(both)
    if not both:
        return {"metric": metric, **extra, "n": 0, "left_out": left_out}
    c = compare_paired_scores({k: a[k] for k in both}, {k: b[k] for k in both}, resamples, seed)
    return {"metric": metric, **extra, "n": c.n, "a": c.mean_a, "b": c.mean_b,
            "difference": c.difference, "low": c.interval[0], "high": c.interval[1],
            "p": c.p_value, "test": "sign-flip, exact" if c.exact else "sign-flip, random",
            "left_out": left_out}  # fmt: skip


def accuracy_row(
    metric: str,
    a: Mapping[str, bool],
    b: Mapping[str, bool],
    resamples: int,
    seed: int,
    **extra: Any,
) -> dict[str, Any]:
    """One right-or-wrong metric's row (an accuracy): the exact McNemar test of the items right
    in one side only, and a seeded bootstrap interval of A-B (`tvr.core.stats.compare_paired`).

    Args:
        metric: the metric's key in the row.
        a, b: whether each item is right in A and in B; the same keys, at least one.
        extra: more fields, placed after `metric` (e.g. the metric's printed name).
    """
    from tvr.core.stats import compare_paired

    c = compare_paired(dict(a), dict(b), resamples, seed)
    return {"metric": metric, **extra, "n": c.samples, "a": c.acc_a, "b": c.acc_b,
            "difference": c.difference, "low": c.interval[0], "high": c.interval[1],
            "p": c.p_value, "test": "McNemar exact", "only_a": c.only_a, "only_b": c.only_b,
            "left_out": 0}  # fmt: skip


def accuracy_by(
    name: str, groups: Mapping[str, Any], a: Mapping[str, bool], b: Mapping[str, bool]
) -> list[dict[str, Any]]:
    """Accuracy per group of items: for each group (in sorted order) its items, each side's
    accuracy, the items right in A only and in B only, and the exact McNemar p of the group.

    Args:
        name: the key of the group's value in each row ("length", "steps", "view").
        groups: each item's group, by the keys of `a` and `b` (the same keys).
    """
    from tvr.core.stats import mcnemar_exact

    counts: dict[Any, list[int]] = {}
    for key, right_a in a.items():
        right_b = b[key]
        c = counts.setdefault(groups[key], [0, 0, 0, 0, 0])
        c[0] += 1
        c[1] += right_a
        c[2] += right_b
        c[3] += right_a and not right_b
        c[4] += right_b and not right_a
    return [
        {name: group, "samples": n, "a": ra / n, "b": rb / n, "a_only": oa, "b_only": ob,
         "p": mcnemar_exact(oa, ob)}
        for group, (n, ra, rb, oa, ob) in sorted(counts.items())
    ]  # fmt: skip


def accuracy_by_table(rows: list[dict[str, Any]], name: str, header: str) -> list[str]:
    """The Markdown table of `accuracy_by`'s rows (`header` names the group's column)."""
    lines = [table_row((header, "n", "A", "B", "A only", "B only", "p")),
             table_row(["---"] + ["---:"] * 6)]  # fmt: skip
    for r in rows:
        lines.append(table_row([str(r[name]), str(r["samples"]), f"{r['a']:.4f}", f"{r['b']:.4f}",
                                str(r["a_only"]), str(r["b_only"]), p_text(r["p"])]))  # fmt: skip
    return lines


def coverage_note(name: str, row: dict[str, Any], total: int, item: str) -> str | None:
    """The note on a row of `score_row` that leaves items out, or None where it leaves none.

    Args:
        name: the metric as the note names it.
        total: the items of the comparison.
        item: what one is ("sample", "description"; the plural adds an s).
    """
    if not row["n"]:
        return f"{name}: left out, no {item} has a value in both A and B"
    if row["left_out"]:
        return (f"{name}: compared on {row['n']} of {total} {item}s ({row['left_out']} without "
                "a value in A or B)")  # fmt: skip
    return None


def sides(a: Any, b: Any) -> dict[str, dict[str, str]]:
    """The document's "a" and "b": each side's label and detail file (`.label`, `.path`)."""
    return {side: {"label": d.label, "detail": str(d.path)} for side, d in (("a", a), ("b", b))}


def heading_lines(title: str, document: dict[str, Any], text: str) -> list[str]:
    """compare.md's heading and first paragraph: which detail files A and B are, then `text`
    (what was compared, and how)."""
    a, b = document["a"], document["b"]
    return [f"# {title}: {a['label']} (A) against {b['label']} (B)", "",
            f"A: `{a['detail']}`; B: `{b['detail']}`; {text}", ""]  # fmt: skip


def sign_flip_text(document: dict[str, Any], item: str) -> str:
    """How compare.md says the rows of `score_row` were computed (`item`: "sample", ...)."""
    from tvr.core.stats import EXACT_FLIPS

    return (f"the sign-flip randomisation test (exact over every sign pattern when at most "
            f"{EXACT_FLIPS} {item}s differ, else seeded random patterns); 95%: percentile "
            f"bootstrap of A-B ({document['resamples']} resamples, seed {document['seed']})")  # fmt: skip


def p_text(p: float) -> str:
    """A p-value as the tables print it."""
    return f"{p:.4f}" if p >= 0.0001 else f"{p:.1e}"


def table_row(cells: Any) -> str:
    """One Markdown table row."""
    return "| " + " | ".join(cells) + " |"


def metric_table(rows: list[dict[str, Any]], name: str = "metric", digits: int = 4) -> list[str]:
    """The Markdown table of the metric rows: the header, then one line a row.

    Args:
        rows: the rows (as `score_row` writes them).
        name: the row field that names the metric.
        digits: decimals of the values.
    """
    lines = [table_row(COLUMNS), table_row(["---"] + ["---:"] * (len(COLUMNS) - 2) + ["---"])]
    for r in rows:
        values = [f"{r['a']:.{digits}f}", f"{r['b']:.{digits}f}"]
        values += [f"{round(r[k], digits) + 0.0:+.{digits}f}" for k in ("difference", "low", "high")]  # no "-0"
        lines.append(table_row([r[name], str(r["n"]), *values, p_text(r["p"]), r["test"]]))
    return lines


def write_comparison(out: str | Path, document: dict[str, Any], lines: list[str]) -> Path:
    """Write compare.json (the document) and compare.md (its lines) into the folder `out`."""
    folder = prepare_output_folder(out)
    write_json(folder / COMPARE_JSON, document)
    write_text(folder / COMPARE_MD, "\n".join(lines) + "\n")
    return folder


# --- the registry: each benchmark's comparison (`tvr compare --benchmark NAME`, `tvr BENCH compare`)
@dataclass(frozen=True)
class Comparer:
    """How one benchmark compares two of its evaluations. `module` names a module (imported only
    when comparing) with `read_detail(path, label=None, **options)`,
    `compare_evaluations(a, b, resamples=..., seed=..., **options)` and
    `markdown_lines(document)`; `options` are the benchmark's own (TRANCO's --convention)."""

    module: str
    help: str
    description: str
    options: tuple[Option, ...] = ()

    def compare(self, a: tuple[str | None, Path], b: tuple[str | None, Path], resamples: int,
                seed: int, **options: Any) -> tuple[dict[str, Any], list[str]]:  # fmt: skip
        """compare.json's document and compare.md's lines of A and B, each (label, path)."""
        module = import_module(self.module)
        (la, pa), (lb, pb) = a, b
        document = module.compare_evaluations(
            module.read_detail(pa, label=la, **options), module.read_detail(pb, label=lb, **options),
            resamples=resamples, seed=seed, **options,
        )  # fmt: skip
        return document, module.markdown_lines(document)


_COMPARERS: dict[str, Comparer] = {}


def register_comparer(benchmark: str, comparer: Comparer) -> None:
    """Called by a benchmark's plugin.py: `tvr compare --benchmark NAME` and `tvr NAME compare`
    compare its evaluations with `comparer`."""
    _COMPARERS[benchmark] = comparer


def comparers() -> dict[str, Comparer]:
    """Every registered comparison, by benchmark (the plugins loaded first)."""
    load_benchmarks()
    return dict(_COMPARERS)
