"""Paired comparison of two TRANCE evaluations of the same samples (`tvr compare`).

A and B are the `detail.jsonl` files of two `tvr evaluate --out` runs (or their folders), scored
in the same setting on the same samples (and views). They are compared sample by sample (in the
View setting: sample and final view), with the paper's metrics (section 4.3):

- Basic: ObjAcc, AttrAcc, ValAcc, Acc; Event and View: LAcc, Acc (right or wrong per sample):
  the exact McNemar test and a seeded bootstrap interval of the difference;
- Event and View: AD, AND (a distance per sample, lower is better): the paired sign-flip
  randomisation test and a seeded percentile bootstrap interval of the mean difference.

Also Acc per number of reference steps (Event, View), per final view (View) and per attribute
of the reference step (Basic), each with the samples only A or only B gets right; and EO, the
paper's share of loosely right order-sensitive samples whose order breaks a rule, of each side
(a ratio, not tested). The setting is read from config.json beside detail.jsonl, else from the
lines' fields. What every comparison does alike (the detail files, a metric's row, the tables,
the files written) is `tvr.results.compare`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tvr.core.errors import InputError, UserError
from tvr.core.jsonl import read_json
from tvr.results import compare as shared
from tvr.trance.world.vocab import SETTINGS

#: the paper's metrics of each setting, in the order of its tables
METRICS: dict[str, tuple[str, ...]] = {
    "basic": ("ObjAcc", "AttrAcc", "ValAcc", "Acc"),
    "event": ("AD", "AND", "LAcc", "Acc"),
    "view": ("AD", "AND", "LAcc", "Acc"),
}

#: each metric's field on a detail line
FIELDS: dict[str, str] = {
    "ObjAcc": "obj_correct",
    "AttrAcc": "attr_correct",
    "ValAcc": "value_correct",
    "Acc": "correct",
    "LAcc": "loose_correct",
    "AD": "distance",
    "AND": "norm_distance",
}

#: the metrics with a number per sample (the others are right or wrong)
DISTANCES: tuple[str, ...] = ("AD", "AND")

#: metrics where lower is better
LOWER_IS_BETTER: tuple[str, ...] = DISTANCES

CONFIG = "config.json"


@dataclass(frozen=True)
class SampleDetail:
    """What the comparison reads of one scored row (a sample, or a sample's view)."""

    line: int
    steps: int
    group: str | None  # View: the final view; Basic: the reference step's attribute
    order_sensitive: bool | None  # Event, View
    right: dict[str, bool]  # the right-or-wrong metrics
    values: dict[str, float]  # AD, AND


@dataclass(frozen=True)
class Detail:
    """One evaluation's detail.jsonl, its setting and (if found) its config.json."""

    path: Path
    label: str
    setting: str
    samples: dict[str, SampleDetail]
    config: dict[str, Any]


def detail_file(path: str | Path) -> Path:
    """The detail.jsonl of an evaluation folder, or the file itself; UserError if there is none."""
    return shared.detail_file(path, "tvr evaluate --out")


def _config(file: Path) -> dict[str, Any]:
    """config.json beside the detail file (what `tvr evaluate --out` writes), or {}."""
    path = file.parent / CONFIG
    if not path.is_file():
        return {}
    config = read_json(path)
    return config if isinstance(config, dict) else {}


def _setting(row: dict[str, Any], config: dict[str, Any], file: Path) -> str:
    setting = config.get("setting")
    if setting is not None:
        if setting not in SETTINGS:
            raise UserError(f"{file.parent / CONFIG}: unknown setting {setting!r} (known: "
                            f"{', '.join(SETTINGS)})")  # fmt: skip
        return str(setting)
    if "obj_correct" in row:
        return "basic"
    return "view" if "view" in row else "event"


def _flag(row: dict[str, Any], field: str, file: Path, line: int) -> bool:
    value = row.get(field)
    if not isinstance(value, bool):
        raise InputError(file, line, field, "expected true or false")
    return value


def _attribute(row: dict[str, Any]) -> str | None:
    reference = row.get("reference")
    if isinstance(reference, list) and reference and isinstance(reference[0], dict):
        value = reference[0].get("value")
        if isinstance(value, str):
            return value.split(".")[0]
    return None


def _sample(row: dict[str, Any], setting: str, file: Path, line: int) -> SampleDetail:
    steps = row.get("num_steps")
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
        raise InputError(file, line, "num_steps", "expected the number of reference steps")
    right = {m: _flag(row, FIELDS[m], file, line) for m in METRICS[setting] if m not in DISTANCES}
    values: dict[str, float] = {}
    for m in METRICS[setting]:
        if m in DISTANCES:
            value = shared.number_or_none(row.get(FIELDS[m]), file, line, FIELDS[m])
            if value is None:
                raise InputError(file, line, FIELDS[m], "expected a number")
            values[m] = value
    if setting == "basic":
        return SampleDetail(line, steps, _attribute(row), None, right, values)
    view = row.get("view")
    if setting == "view" and not isinstance(view, str):
        raise InputError(file, line, "view", "expected the final view (a View evaluation)")
    if setting == "event" and view is not None:
        raise InputError(file, line, "view", "a view in an Event evaluation")
    order = _flag(row, "order_sensitive", file, line)
    return SampleDetail(line, steps, view, order, right, values)


def read_detail(path: str | Path, label: str | None = None) -> Detail:
    """Read an evaluation's detail lines (errors name the file, line and field) and its setting."""
    file = detail_file(path)
    config = _config(file)
    setting: str | None = None
    samples: dict[str, SampleDetail] = {}
    for lineno, row in shared.detail_rows(file):
        if setting is None:
            setting = _setting(row, config, file)
        key = row["id"] if setting != "view" else f"{row['id']}/{row.get('view')}"
        if key in samples:
            raise InputError(file, lineno, "id", f"{_name(key, setting)} is scored twice")
        samples[key] = _sample(row, setting, file, lineno)
    if setting is None:
        raise UserError(f"{file}: no samples")
    return Detail(file, label if label is not None else shared.default_label(path), setting,
                  samples, config)  # fmt: skip


def _name(key: str, setting: str) -> str:
    if setting == "view":
        sample, _, view = key.rpartition("/")
        return f"sample {sample!r} (view {view})"
    return f"sample {key!r}"


def check_comparable(a: Detail, b: Detail) -> None:
    """UserError unless both are of one setting and score the same samples with the same number
    of reference steps (the error names the file and line of the first difference)."""
    if a.setting != b.setting:
        raise UserError(f"{a.path} scores the {a.setting} setting and {b.path} the "
                        f"{b.setting} setting: compare evaluations of one setting")  # fmt: skip
    shared.check_same_keys((a.path, a.samples), (b.path, b.samples),
                           lambda key: _name(key, a.setting), "samples")  # fmt: skip
    for key, sample in b.samples.items():
        steps = a.samples[key].steps
        if sample.steps != steps:
            raise InputError(b.path, sample.line, "num_steps",
                             f"{_name(key, a.setting)} has {sample.steps} steps here and {steps} "
                             f"in {a.path}: not the same samples")  # fmt: skip


def compare_evaluations(
    a: Detail, b: Detail, resamples: int = 10000, seed: int = 0
) -> dict[str, Any]:
    """The compare.json document: A against B, metric by metric, then Acc per group."""
    check_comparable(a, b)
    setting = a.setting
    rows = []
    for metric in METRICS[setting]:
        if metric in DISTANCES:
            rows.append(shared.score_row(metric, _values(a, metric), _values(b, metric),
                                         resamples, seed))  # fmt: skip
        else:
            rows.append(shared.accuracy_row(metric, _right(a, metric), _right(b, metric),
                                            resamples, seed))  # fmt: skip
    acc_a, acc_b = _right(a, "Acc"), _right(b, "Acc")
    document: dict[str, Any] = {
        "benchmark": "trance",
        **shared.sides(a, b),
        "setting": setting,
        "samples": len(a.samples),
        "resamples": resamples,
        "seed": seed,
        "metrics": rows,
    }
    if setting == "basic":
        attributes = {k: s.group or "?" for k, s in a.samples.items()}
        document["acc_by_attribute"] = shared.accuracy_by("attribute", attributes, acc_a, acc_b)
    else:
        steps = {k: s.steps for k, s in a.samples.items()}
        document["acc_by_steps"] = shared.accuracy_by("steps", steps, acc_a, acc_b)
        if setting == "view":
            views = {k: s.group for k, s in a.samples.items()}
            document["acc_by_view"] = shared.accuracy_by("view", views, acc_a, acc_b)
        document["order_sensitive"] = _order_sensitive(a, b)
    document["lower_is_better"] = [m for m in LOWER_IS_BETTER if m in METRICS[setting]]
    document["notes"] = _notes(a, b)
    return document


def _right(detail: Detail, metric: str) -> dict[str, bool]:
    return {k: s.right[metric] for k, s in detail.samples.items()}


def _values(detail: Detail, metric: str) -> dict[str, float | None]:
    return {k: s.values[metric] for k, s in detail.samples.items()}


def _eo(detail: Detail, keys: list[str]) -> dict[str, Any]:
    """LAcc, Acc and EO = (LAcc - Acc) / LAcc of one side on the order-sensitive samples."""
    if not keys:
        return {"LAcc": None, "Acc": None, "EO": None}
    lacc = sum(detail.samples[k].right["LAcc"] for k in keys) / len(keys)
    acc = sum(detail.samples[k].right["Acc"] for k in keys) / len(keys)
    return {"LAcc": lacc, "Acc": acc, "EO": (lacc - acc) / lacc if lacc else None}


def _order_sensitive(a: Detail, b: Detail) -> dict[str, Any]:
    keys = [k for k, s in a.samples.items() if s.order_sensitive]
    out: dict[str, Any] = {"samples": len(keys), "a": _eo(a, keys), "b": _eo(b, keys)}
    if keys:
        out["acc"] = shared.accuracy_by(
            "order_sensitive", dict.fromkeys(keys, True),
            {k: a.samples[k].right["Acc"] for k in keys},
            {k: b.samples[k].right["Acc"] for k in keys},
        )[0]  # fmt: skip
        del out["acc"]["order_sensitive"]
    return out


def _notes(a: Detail, b: Detail) -> list[str]:
    notes = []
    for option in ("max_steps_policy", "lenient"):
        va, vb = a.config.get(option), b.config.get(option)
        if va is not None and vb is not None and va != vb:
            notes.append(f"A was scored with {option} {va} and B with {vb}")
    return notes


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def markdown_lines(document: dict[str, Any]) -> list[str]:
    """compare.md: the heading, the metric table, the notes, Acc per group, EO."""
    setting = document["setting"]
    unit = "sample and view" if setting == "view" else "sample"
    rows = "rows (a sample and a final view each)" if setting == "view" else "samples"
    how = (
        f"{document['samples']} {rows}, setting {setting}. Paired on each {unit}: the "
        "accuracies by the exact McNemar test"
    )
    if document["lower_is_better"]:
        how += (
            f", AD and AND by {shared.sign_flip_text(document, 'sample')}. Lower is better "
            f"for {', '.join(document['lower_is_better'])}."
        )
    else:
        how += (f"; 95%: bootstrap of A-B ({document['resamples']} resamples, seed "
                f"{document['seed']}).")  # fmt: skip
    lines = [*shared.heading_lines("TRANCE", document, how),
             *shared.metric_table(document["metrics"])]  # fmt: skip
    acc = next(r for r in document["metrics"] if r["metric"] == "Acc")
    lines += ["", f"Acc: {acc['only_a']} samples right in A only, {acc['only_b']} in B only."]
    lines += [f"Note: {note}." for note in document["notes"]]
    for key, name, title in (("acc_by_steps", "steps", "Acc by number of reference steps"),
                             ("acc_by_view", "view", "Acc by final view"),
                             ("acc_by_attribute", "attribute", "Acc by attribute")):  # fmt: skip
        if key in document:
            lines += ["", f"## {title}", "", *shared.accuracy_by_table(document[key], name, name)]
    if "order_sensitive" in document:
        o = document["order_sensitive"]
        lines += ["", "## Order-sensitive samples", "",
                  f"{o['samples']} samples where some order of the reference steps breaks a rule. "
                  f"EO = (LAcc - Acc) / LAcc on them (lower is better): A {_pct(o['a']['EO'])}, "
                  f"B {_pct(o['b']['EO'])}; Acc: A {_pct(o['a']['Acc'])}, "
                  f"B {_pct(o['b']['Acc'])}"]  # fmt: skip
        if "acc" in o:
            c = o["acc"]
            lines[-1] += (f" ({c['a_only']} right in A only, {c['b_only']} in B only, McNemar "
                          f"p {shared.p_text(c['p'])}).")  # fmt: skip
        else:
            lines[-1] += "."
    return lines
