"""The tables of `tvr results`: Table 3, 4, 5 and the numbers of Fig. 7, 8, ours and the paper's.

Each table is built from scored runs (`ResultEntry`: a label, a setting and the summary.json of
`tvr evaluate`) and, with compare_paper, the published numbers of `tvr.trance.paper`
as rows marked "(paper)": the row of a model we have right after ours, the others after, in the
paper's order. Tables are written as Markdown, CSV and JSON. Needs neither torch nor matplotlib
(model names are spelled the paper's way through `tvr.trance.models.registry` when torch is there).
"""

from __future__ import annotations

import re
from typing import Any

from tvr.results.tables import ResultEntry, ResultTable
from tvr.trance import paper as paper
from tvr.trance.world.vocab import VIEW_NAMES, VIEWS

BASIC_COLUMNS = paper.BASIC_COLUMNS
SEQUENCE_COLUMNS = paper.SEQUENCE_COLUMNS
REWARD_LABELS = {"corr": "corr", "dist": "dist", "both": "corr & dist"}
#: the view columns of Table 5, in the paper's order
VIEW_TITLES = {v: VIEW_NAMES[v].capitalize() for v in ("C", "L", "R")}
FIG8_VIEWS = ("C", "L", "R")  # the paper's order
STEPS = ("1", "2", "3", "4")
_ENCODER_DISPLAY = {
    "cnn-sub": "CNN₋",
    "cnn-cat": "CNN⊕",
    "resnet-sub": "ResNet₋",
    "resnet-cat": "ResNet⊕",
    "bcnn": "BCNN",
    "duda": "DUDA",
}


# --- names ----------------------------------------------------------------------------------------
def canonical_model(name: str) -> str | None:
    """The registry's canonical name of a model name or label ("human" for Human...), else None."""
    if re.match(r"human\b", name.strip(), re.IGNORECASE):
        return "human"
    try:
        from tvr.trance.models.registry import parse_model_name
    except ImportError:  # no torch: only the canonical spellings are recognised
        low = name.strip().lower()
        return low if low in paper.TABLE3 else None
    try:
        return parse_model_name(name).name
    except ValueError:
        return None


def display_name(model: str) -> str:
    """A model name as the paper spells it: `cnn+-g` -> `CNN⊕-G`, "human" -> "Human"."""
    if model.strip().lower() == "human":
        return "Human"
    try:
        from tvr.trance.models.registry import parse_model_name

        spec = parse_model_name(model)
    except (ImportError, ValueError):
        return model
    return f"{_ENCODER_DISPLAY[spec.encoder]}-{spec.decoder.upper()}"


# --- tables ---------------------------------------------------------------------------------------
def _percent(x: float) -> str:
    return f"{100 * x:.1f}%"


def _interleave(
    ours: list[tuple[dict[str, Any], Any]], published: list[tuple[Any, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Our rows, each followed by the published row of the same key; then the other published
    rows in the paper's order."""
    by_key = dict(published)
    used: set[Any] = set()
    rows: list[dict[str, Any]] = []
    for row, key in ours:
        rows.append(row)
        if key is not None and key in by_key and key not in used:
            rows.append(by_key[key])
            used.add(key)
    rows.extend(r for k, r in published if k not in used)
    return rows


TABLE3_COLUMNS = [
    "Model",
    *(f"Basic {c}" for c in BASIC_COLUMNS),
    *(f"Event {c}" for c in SEQUENCE_COLUMNS),
    *(f"View {c}" for c in SEQUENCE_COLUMNS),
    "ΔAcc",
]


def _table3_row(name: str, source: str, per_setting: dict[str, dict[str, Any] | None]) -> dict:
    row: dict[str, Any] = {"Model": name, "source": source}
    for setting, cols in (
        ("basic", BASIC_COLUMNS),
        ("event", SEQUENCE_COLUMNS),
        ("view", SEQUENCE_COLUMNS),
    ):
        metrics = per_setting.get(setting) or {}
        for c in cols:
            row[f"{setting.capitalize()} {c}"] = metrics.get(c)
    ev, vi = row["Event Acc"], row["View Acc"]
    row["ΔAcc"] = vi - ev if ev is not None and vi is not None else None
    return row


def _grouped(entries: list[ResultEntry]) -> dict[str, dict[str, ResultEntry]]:
    groups: dict[str, dict[str, ResultEntry]] = {}
    for e in entries:
        groups.setdefault(e.label, {})[e.setting] = e
    return groups


def table3(entries: list[ResultEntry], compare_paper: bool = True) -> ResultTable:
    """Table 3's layout: one row per label, its Basic, Event and View results and ΔAcc."""
    ours = []
    notes = []
    for label, by_setting in _grouped([e for e in entries if e.reward is None]).items():
        row = _table3_row(label, "ours", {s: e.summary["metrics"] for s, e in by_setting.items()})
        model = next((e.model for e in by_setting.values() if e.model), None)
        ours.append((row, model))
        for e in by_setting.values():
            if e.summary.get("missing"):
                notes.append(
                    f"- {label} ({e.setting}): {e.summary['missing']} of {e.summary['samples']} "
                    "scored samples had no prediction and count as wrong."
                )
    published = []
    if compare_paper:
        for model, per_setting in paper.TABLE3.items():
            row = _table3_row(f"{display_name(model)} (paper)", "paper", per_setting)
            row["ΔAcc"] = paper.TABLE3_DELTA_ACC[model]
            published.append((model, row))
        notes.append(f"- (paper): Table 3 of the {paper.PAPER}.")
    notes.insert(0, "ΔAcc = View Acc - Event Acc. AD and AND: lower is better.")
    return ResultTable(
        "table3",
        "Table 3: Basic, Event and View",
        TABLE3_COLUMNS,
        _interleave(ours, published),
        notes,
        {"ΔAcc": lambda x: f"{x:+.4f}"},
    )


TABLE4_COLUMNS = ["Model", "Setting", *SEQUENCE_COLUMNS]


def table4(entries: list[ResultEntry], compare_paper: bool = True) -> ResultTable | None:
    """Table 4's layout: each REINFORCE fine-tune beside the run it started from; None if none."""
    tuned = [e for e in entries if e.reward is not None]
    if not tuned:
        return None
    plain = [e for e in entries if e.reward is None]
    ours: list[tuple[dict[str, Any], Any]] = []
    placed: set[int] = set()
    notes = [
        "Fine-tuned with REINFORCE and rewards from the simulator: corr (1 if correct), "
        "dist (minus the normalized distance), corr & dist (their sum)."
    ]

    def add(e: ResultEntry, key: Any) -> None:
        if id(e) in placed:
            return
        placed.add(id(e))
        m = e.summary["metrics"]
        row = {"Model": e.label, "Setting": e.setting, "source": "ours"}
        row.update({c: m.get(c) for c in SEQUENCE_COLUMNS})
        ours.append((row, key))

    for e in tuned:
        base = None
        if e.base_run is not None:
            base = next((b for b in plain if b.run_dir and b.run_dir.resolve() == e.base_run), None)
        if base is None:
            base = next((b for b in plain if b.model == e.model and b.setting == e.setting), None)
        paper_ok = e.model == paper.TABLE4_MODEL and e.setting == "event"
        if base is not None:
            add(base, (paper.TABLE4_MODEL, None) if paper_ok else None)
        else:
            notes.append(f"- {e.label}: its base run was not given.")
        add(e, (paper.TABLE4_MODEL, e.reward) if paper_ok else None)
    published = []
    if compare_paper:
        base = display_name(paper.TABLE4_MODEL)
        for reward, m in paper.TABLE4.items():
            name = base if reward is None else f"{base} + {REWARD_LABELS[reward]}"
            row = {"Model": f"{name} (paper)", "Setting": "event", "source": "paper", **m}
            published.append(((paper.TABLE4_MODEL, reward), row))
        notes.append(f"- (paper): Table 4 of the {paper.PAPER}.")
    return ResultTable(
        "table4", "Table 4: REINFORCE fine-tuning", TABLE4_COLUMNS, _interleave(ours, published),
        notes,
    )  # fmt: skip


TABLE5_COLUMNS = ["Model", "Samples", "Share", "LAcc", "Acc", "EO"]


def table5(entries: list[ResultEntry], compare_paper: bool = True) -> ResultTable:
    """Table 5's layout: the order-sensitive samples of Event (LAcc, Acc, EO, their number)."""
    ours = []
    for e in entries:
        if e.setting != "event" or e.reward is not None:
            continue
        o = e.summary.get("order_sensitive") or {}
        row = {
            "Model": e.label,
            "source": "ours",
            "Samples": o.get("count"),
            "Share": o.get("share"),
            "LAcc": o.get("LAcc"),
            "Acc": o.get("Acc"),
            "EO": o.get("EO"),
        }
        ours.append((row, e.model))
    notes = [
        "Order-sensitive: some order of the reference steps breaks a rule. "
        "EO = (LAcc - Acc) / LAcc; lower is better."
    ]
    published = []
    if compare_paper:
        share = paper.TABLE5_SHARE
        published.append(
            ("random-order", {"Model": "Random order, avg. of 100 (paper)", "source": "paper",
                              "Samples": 100, "Share": None, **paper.TABLE5_RANDOM_ORDER})
        )  # fmt: skip
        for model, m in paper.TABLE5.items():
            row = {"Model": f"{display_name(model)} (paper)", "source": "paper", "Share": share}
            published.append((model, {**row, "Samples": None, **m}))
        notes.append(
            f"- (paper): Table 5 of the {paper.PAPER}, on 6.2% of its Event test set; its random "
            "row permutes the reference steps of 100 order-sensitive samples."
        )
    return ResultTable(
        "table5",
        "Table 5: order-sensitive samples of Event",
        TABLE5_COLUMNS,
        _interleave(ours, published),
        notes,
        {"Share": _percent},
    )


def fig7_table(entries: list[ResultEntry], compare_paper: bool = True) -> ResultTable:
    """Fig. 7's numbers: Event Acc per number of reference steps (sample counts in brackets)."""
    cols = ["Model", *(f"{k} step{'s' if k != '1' else ''}" for k in STEPS)]
    ours = []
    for e in entries:
        if e.setting != "event" or e.reward is not None:
            continue
        row: dict[str, Any] = {"Model": e.label, "source": "ours", "model": e.model}
        for k, c in zip(STEPS, cols[1:], strict=True):
            b = e.summary.get("by_steps", {}).get(k) or {}
            row[c] = (b.get("Acc"), b.get("count"))
        ours.append((row, e.model))
    published = []
    notes = []
    if compare_paper:
        for model, acc in paper.FIG7_ACC_BY_STEPS.items():
            row = {"Model": f"{display_name(model)} (paper)", "source": "paper", "model": model}
            row.update({c: (acc[k], None) for k, c in zip(STEPS, cols[1:], strict=True)})
            published.append((model, row))
        notes.append(
            "- (paper): Fig. 7 of the journal paper is a plot; its text (section 7.2) gives only "
            "CNN₋-G's numbers: 92%, 55%, 23%, 8%."
        )

    def fmt(v: tuple[float | None, int | None]) -> str:
        acc, n = v
        text = "-" if acc is None else f"{acc:.4f}"
        return text if n is None else f"{text} ({n})"

    return ResultTable(
        "fig7", "Fig. 7: Event Acc per number of steps (samples)", cols,
        _interleave(ours, published), notes, dict.fromkeys(cols[1:], fmt),
    )  # fmt: skip


def fig8_table(entries: list[ResultEntry]) -> ResultTable:
    """Fig. 8's numbers: View Acc per final view (Center, Left, Right)."""
    cols = ["Model", *(VIEW_TITLES[v] for v in FIG8_VIEWS)]
    rows = []
    for e in entries:
        if e.setting != "view" or e.reward is not None:
            continue
        row: dict[str, Any] = {"Model": e.label, "source": "ours", "model": e.model}
        for v in FIG8_VIEWS:
            b = e.summary.get("by_view", {}).get(v) or {}
            row[VIEW_TITLES[v]] = (b.get("Acc"), b.get("count"))
        rows.append(row)

    def fmt(v: tuple[float | None, int | None]) -> str:
        acc, n = v
        return ("-" if acc is None else f"{acc:.4f}") + ("" if n is None else f" ({n})")

    notes = [f"The paper's Fig. 8 gives no numbers in its text: nothing published to compare. "
             f"Views: {', '.join(VIEWS)} = Left, Center, Right."]  # fmt: skip
    return ResultTable(
        "fig8", "Fig. 8: View Acc per final view (samples)", cols, rows, notes,
        dict.fromkeys(cols[1:], fmt),
    )  # fmt: skip


# --- writing --------------------------------------------------------------------------------------
