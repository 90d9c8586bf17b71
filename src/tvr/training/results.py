"""`tvr results`: the papers' result tables and plots for our runs, beside the published numbers.

A RUN is one of
  - a training run directory (config.json and predictions.jsonl, see `tvr.training.run`): its
    predictions are scored with the project's evaluator (`tvr.trance.evaluate`) against the
    samples of `--samples`, of the dataset folder `--data` or of the dataset it was trained on
    (config `data_root`, split `predict_split`, else val; the synthetic source is regenerated
    from its seed), and the evaluation is cached in RUN/eval/;
  - an evaluation directory written by `tvr evaluate` (summary.json);
  - a predictions file (for example one tester's answers exported by the web app), scored
    against `--samples` or `--data`; the evaluation is written under OUT/evals/.
A RUN may be written LABEL=PATH. The default label is the model name as the paper spells it
(`CNN⊕-G`, `ResNet₋-T`); REINFORCE fine-tunes (config `reinforce`) are `ResNet₋-T + corr` etc.

Tables (Markdown, CSV and JSON): Table 3 (one row per label: Basic ObjAcc/AttrAcc/ValAcc/Acc,
Event and View AD/AND/LAcc/Acc, ΔAcc = View Acc - Event Acc), Table 4 (REINFORCE fine-tunes
beside their base model), Table 5 (the order-sensitive subset of Event: LAcc, Acc, EO, size);
the numbers of Fig. 7 (Acc per number of steps, Event) and Fig. 8 (Acc per final view, View).
The published numbers (`tvr.training.paper_results`) are rows marked "(paper)". Plots are in
`tvr.training.results_plots`. This module needs neither torch nor matplotlib.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.errors import UserError
from tvr.training import paper_results as paper
from tvr.trance.camera import VIEWS
from tvr.trance.evaluate import evaluate_files
from tvr.trance.metrics import SETTINGS
from tvr.trance.samples_io import iter_jsonl, read_samples, write_json, write_samples

BASIC_COLUMNS = paper.BASIC_COLUMNS
SEQUENCE_COLUMNS = paper.SEQUENCE_COLUMNS
REWARD_LABELS = {"corr": "corr", "dist": "dist", "both": "corr & dist"}
VIEW_NAMES = {"C": "Center", "L": "Left", "R": "Right"}
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
        from tvr.models.registry import parse_model_name
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
        from tvr.models.registry import parse_model_name

        spec = parse_model_name(model)
    except (ImportError, ValueError):
        return model
    return f"{_ENCODER_DISPLAY[spec.encoder]}-{spec.decoder.upper()}"


# --- the runs -------------------------------------------------------------------------------------
@dataclass
class ResultEntry:
    """One scored RUN: its label, setting, evaluation summary and where it came from."""

    label: str
    setting: str
    summary: dict[str, Any]
    path: Path  # the RUN as given
    kind: str  # "run", "evaluation" or "predictions"
    evaluation: Path | None = None  # the folder holding summary.json
    model: str | None = None  # canonical model name (or "human") when known
    config: dict[str, Any] | None = None  # the training run's config.json
    metrics_csv: Path | None = None
    run_dir: Path | None = None

    @property
    def reward(self) -> str | None:
        """The REINFORCE reward of a fine-tuning run, None for other runs."""
        if self.config and self.config.get("reinforce"):
            return str(self.config.get("reward", "both"))
        return None

    @property
    def base_run(self) -> Path | None:
        """The run directory a REINFORCE run started from (the owner of its init checkpoint)."""
        ckpt = (self.config or {}).get("init_checkpoint")
        return Path(ckpt).resolve().parent.parent if ckpt else None


@dataclass
class ResultsOptions:
    """What `tvr results` was asked for (saved as OUT/config.json)."""

    runs: list[str]
    out: str
    samples: list[str] = field(default_factory=list)  # [SETTING=]PATH
    data: list[str] = field(default_factory=list)  # dataset folders
    split: str = "test"  # the split of --data for predictions files
    setting: str | None = None  # the setting of predictions files (default: inferred)
    only_predicted: bool = False  # score each RUN on the samples it has predictions for
    compare_paper: bool = True
    plots: bool = True


def split_label(spec: str) -> tuple[str | None, Path]:
    """`LABEL=PATH` -> (LABEL, PATH); a plain path (even one holding "=") -> (None, PATH)."""
    if "=" in spec and not Path(spec).exists():
        label, _, path = spec.partition("=")
        if label.strip() and path.strip():
            return label.strip(), Path(path.strip())
    return None, Path(spec)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise UserError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a JSON object")
    return data


def _check_summary(summary: dict[str, Any], path: Path) -> dict[str, Any]:
    setting = summary.get("setting")
    if setting not in SETTINGS or not isinstance(summary.get("metrics"), dict):
        raise UserError(
            f"{path}: not a summary.json of `tvr evaluate` (needs 'setting' and 'metrics')"
        )
    return summary


def _open_dataset(root: Path):
    try:
        from tvr.trance.store import open_dataset
    except ImportError:
        raise UserError(
            f"{root}: reading a dataset folder needs tvr.trance.store (not in this install); "
            "give the samples file with --samples"
        ) from None
    return open_dataset(root)


def _dataset_split(root: Path, ds: Any, splits: Sequence[str]) -> Path:
    """The samples file of the first of `splits` that the dataset `ds` (at `root`) has."""
    for s in splits:
        if s in ds.splits:
            return Path(ds.split(s).samples_path)
    raise UserError(f"{root}: no split {' or '.join(splits)} (it has {', '.join(ds.splits)})")


class SampleSources:
    """The samples that RUNs are scored against: `--samples [SETTING=]PATH` and `--data DIR`,
    each repeatable; a source is chosen by the RUN's setting."""

    def __init__(self, samples: Sequence[str], data: Sequence[str]) -> None:
        self.keyed: dict[str, Path] = {}
        self.plain: list[Path] = []
        for spec in samples:
            key, _, path = spec.partition("=")
            if path and key in SETTINGS and not Path(spec).exists():
                self.keyed[key] = Path(path)
            else:
                self.plain.append(Path(spec))
        for p in [*self.keyed.values(), *self.plain]:
            if not p.is_file():
                raise UserError(f"{p}: no such samples file (--samples)")
        self.datasets = [(Path(d), _open_dataset(Path(d))) for d in data]

    def __bool__(self) -> bool:
        return bool(self.keyed or self.plain or self.datasets)

    def only_setting(self) -> str | None:
        """The setting when there is one source whose setting is known, else None."""
        if len(self.keyed) == 1 and not self.plain and not self.datasets:
            return next(iter(self.keyed))
        if len(self.datasets) == 1 and not self.plain and not self.keyed:
            return self.datasets[0][1].setting
        return None

    def for_setting(self, setting: str, splits: Sequence[str], who: Path) -> Path | None:
        """The samples file for a RUN of `setting`; None when none was given."""
        if setting in self.keyed:
            return self.keyed[setting]
        if self.datasets:
            for root, ds in self.datasets:
                if ds.setting == setting:
                    return _dataset_split(root, ds, splits)
            if not self.plain:
                have = ", ".join(f"{r} is {ds.setting}" for r, ds in self.datasets)
                raise UserError(f"{who}: mismatched settings: it is {setting}, but --data {have}")
        if len(self.plain) > 1:
            raise UserError(
                f"{who}: several --samples files; say which setting each is for "
                "(--samples event=FILE)"
            )
        return self.plain[0] if self.plain else None


def _synthetic_samples(config: dict[str, Any], out: Path) -> Path:
    """Write the samples of the synthetic split a run predicted (its predict_split, else val)."""
    from tvr.training.config import TrainConfig
    from tvr.training.data import synthetic_split, synthetic_split_records
    from tvr.training.synthetic import write_synthetic_samples

    cfg = TrainConfig.from_dict(config)
    for split in (cfg.predict_split, "val"):
        if synthetic_split(cfg, split)[0] > 0:
            out.parent.mkdir(parents=True, exist_ok=True)
            return write_synthetic_samples(out, synthetic_split_records(cfg, split))
    raise UserError(f"{out.parent.parent}: its synthetic source has no {cfg.predict_split} split")


def _prediction_ids(path: Path) -> set[str]:
    return {
        str(rec.get("id")) for _, rec in iter_jsonl(path) if isinstance(rec, dict) and "id" in rec
    }


def _evaluate(
    samples: Path, predictions: Path, setting: str, out: Path, only_predicted: bool
) -> dict[str, Any]:
    """Score with the project's evaluator; with only_predicted, on the predicted samples only."""
    if only_predicted:
        ids = _prediction_ids(predictions)
        subset = [s for s in read_samples(samples) if s.id in ids]
        out.mkdir(parents=True, exist_ok=True)
        write_samples(out / "samples.jsonl", subset)
        samples = out / "samples.jsonl"
    return evaluate_files(samples, predictions, setting, out)


def _infer_setting(predictions: Path, samples: Path | None) -> str:
    """View if the predictions name views; Basic if every sample (without samples: every
    prediction) has one step; else Event."""
    steps = []
    for _, rec in iter_jsonl(predictions):
        if isinstance(rec, dict) and "view" in rec:
            return "view"
        if isinstance(rec, dict) and isinstance(rec.get("steps"), list):
            steps.append(len(rec["steps"]))
    if samples is not None:
        one = all(len(s.steps) == 1 for s in read_samples(samples))
    else:
        one = bool(steps) and all(n == 1 for n in steps)
    return "basic" if one else "event"


def _cached_summary(
    eval_dir: Path, predictions: Path, samples: Path | None, setting: str, only_predicted: bool
) -> dict[str, Any] | None:
    """RUN/eval/summary.json if it scored these predictions (not older) the same way."""
    summary_path, config_path = eval_dir / "summary.json", eval_dir / "config.json"
    if not (summary_path.is_file() and config_path.is_file()):
        return None
    if summary_path.stat().st_mtime < predictions.stat().st_mtime:
        return None
    cfg = _read_json(config_path)
    if cfg.get("setting") != setting or cfg.get("only_predicted", False) != only_predicted:
        return None
    if cfg.get("source_samples") != (str(samples) if samples is not None else None):
        return None  # scored against other samples than those asked for now
    return _read_json(summary_path)


def run_label(config: dict[str, Any]) -> str:
    """A training run's default label: its model as the paper spells it, and for a REINFORCE
    fine-tune its reward (`ResNet₋-T + corr & dist`)."""
    label = display_name(str(config["model"]))
    if config.get("reinforce"):
        reward = str(config.get("reward", "both"))
        label += f" + {REWARD_LABELS.get(reward, reward)}"
        if config.get("rl_variant") == "paper":
            label += " (paper variant)"
    return label


def _load_run(
    run_dir: Path, label: str | None, opts: ResultsOptions, sources: SampleSources
) -> ResultEntry:
    config = _read_json(run_dir / "config.json")
    setting = config.get("setting")
    model = config.get("model")
    if setting not in SETTINGS or not isinstance(model, str):
        raise UserError(
            f"{run_dir / 'config.json'}: not a training run config (needs 'model', 'setting')"
        )
    if opts.setting and opts.setting != setting:
        raise UserError(
            f"{run_dir}: mismatched settings: the run is {setting}, --setting says {opts.setting}"
        )
    predictions = run_dir / "predictions.jsonl"
    if not predictions.is_file():
        raise UserError(
            f"{run_dir}: a training run without predictions.jsonl (unfinished? "
            f"write them with `tvr predict --run {run_dir}`)"
        )
    eval_dir = run_dir / "eval"
    splits = (config.get("predict_split") or "test", "val")
    given = sources.for_setting(setting, splits, run_dir)
    summary = _cached_summary(eval_dir, predictions, given, setting, opts.only_predicted)
    if summary is None:
        if given is not None:
            samples = given
        elif config.get("data_root"):
            root = Path(config["data_root"])
            ds = _open_dataset(root)
            if ds.setting != setting:
                raise UserError(
                    f"{run_dir}: mismatched settings: the run is {setting}, its dataset {root} "
                    f"is {ds.setting}"
                )
            samples = _dataset_split(root, ds, splits)
        elif config.get("data") == "synthetic":
            samples = _synthetic_samples(config, eval_dir / "reference" / "samples.jsonl")
        else:
            raise UserError(
                f"{run_dir}: no samples to score its predictions against: its config names no "
                "dataset folder (data_root); give --samples or --data"
            )
        summary = _evaluate(samples, predictions, setting, eval_dir, opts.only_predicted)
        cfg = _read_json(eval_dir / "config.json")
        cfg.update(source_samples=str(given) if given else None, only_predicted=opts.only_predicted)
        write_json(eval_dir / "config.json", cfg)
    _check_summary(summary, eval_dir / "summary.json")
    if summary["setting"] != setting:
        raise UserError(
            f"{eval_dir / 'summary.json'}: mismatched settings: the run is {setting}, "
            f"its evaluation {summary['setting']}"
        )
    entry = ResultEntry(
        label or "",
        setting,
        summary,
        run_dir,
        "run",
        evaluation=eval_dir,
        model=canonical_model(model),
        config=config,
        metrics_csv=run_dir / "metrics.csv" if (run_dir / "metrics.csv").is_file() else None,
        run_dir=run_dir,
    )
    if not entry.label:
        entry.label = run_label(config)
    return entry


def _load_evaluation(eval_dir: Path, label: str | None, opts: ResultsOptions) -> ResultEntry:
    summary = _check_summary(_read_json(eval_dir / "summary.json"), eval_dir / "summary.json")
    setting = summary["setting"]
    if opts.setting and opts.setting != setting:
        raise UserError(
            f"{eval_dir}: mismatched settings: the evaluation is {setting}, "
            f"--setting says {opts.setting}"
        )
    entry = ResultEntry(label or eval_dir.name, setting, summary, eval_dir, "evaluation", eval_dir)
    # an evaluation of a training run's predictions: take the model (and curves) from the run
    pred = summary.get("predictions_file")
    run_dir = Path(pred).parent if pred else None
    if run_dir is not None and (run_dir / "config.json").is_file():
        config = _read_json(run_dir / "config.json")
        if isinstance(config.get("model"), str) and config.get("setting") == setting:
            entry.config, entry.run_dir = config, run_dir
            entry.model = canonical_model(config["model"])
            if (run_dir / "metrics.csv").is_file():
                entry.metrics_csv = run_dir / "metrics.csv"
            if label is None:
                entry.label = run_label(config)
    if entry.model is None:
        entry.model = canonical_model(entry.label)
    return entry


def _load_predictions(
    pred: Path,
    label: str | None,
    index: int,
    opts: ResultsOptions,
    sources: SampleSources,
    out: Path,
) -> ResultEntry:
    if not sources:
        raise UserError(
            f"{pred}: a predictions file needs the samples it answers: give --samples or --data"
        )
    setting = opts.setting or sources.only_setting()
    if setting is None and len(sources.plain) == 1 and not sources.keyed and not sources.datasets:
        setting = _infer_setting(pred, sources.plain[0])
    if setting is None:
        setting = _infer_setting(pred, None)
    samples = sources.for_setting(setting, (opts.split,), pred)
    if samples is None:
        raise UserError(f"{pred}: no --samples or --data for its setting ({setting})")
    label = label or pred.stem
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_") or "run"
    eval_dir = out / "evals" / f"{index:02d}-{slug}"
    summary = _evaluate(samples, pred, setting, eval_dir, opts.only_predicted)
    return ResultEntry(
        label, setting, summary, pred, "predictions", eval_dir, model=canonical_model(label)
    )


def load_entry(
    spec: str, index: int, opts: ResultsOptions, sources: SampleSources, out: Path
) -> ResultEntry:
    """One RUN (see the module docstring); a UserError naming the path if it is none of them."""
    label, path = split_label(spec)
    if path.is_dir():
        if (path / "config.json").is_file() and not (path / "summary.json").is_file():
            return _load_run(path, label, opts, sources)
        if (path / "summary.json").is_file():
            return _load_evaluation(path, label, opts)
        raise UserError(
            f"{path}: neither a training run (config.json and predictions.jsonl) nor an "
            "evaluation (summary.json of `tvr evaluate`)"
        )
    if path.is_file():
        if path.name == "summary.json":
            return _load_evaluation(path.parent, label, opts)
        return _load_predictions(path, label, index, opts, sources, out)
    raise UserError(f"{path}: no such run directory, evaluation directory or predictions file")


def load_entries(opts: ResultsOptions) -> list[ResultEntry]:
    """Every RUN of the options, scored; a UserError for two RUNs with one label and setting."""
    out = Path(opts.out)
    sources = SampleSources(opts.samples, opts.data)
    entries = [load_entry(spec, i, opts, sources, out) for i, spec in enumerate(opts.runs)]
    seen: dict[tuple[str, str], ResultEntry] = {}
    for e in entries:
        key = (e.label, e.setting)
        if key in seen:
            raise UserError(
                f"{e.path} and {seen[key].path} are both {e.setting} results labelled "
                f"{e.label!r}: name them apart with LABEL=PATH"
            )
        seen[key] = e
    return entries


# --- tables ---------------------------------------------------------------------------------------
@dataclass
class ResultTable:
    """A table: named columns, rows as dicts (None prints "-"), a title and notes."""

    name: str
    title: str
    columns: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    formats: dict[str, Callable[[Any], str]] = field(default_factory=dict)

    def cell(self, column: str, value: Any) -> str:
        if value is None:
            return "-"
        if column in self.formats:
            return self.formats[column](value)
        if isinstance(value, float):
            return f"{value:.4f}"
        return str(value)

    def to_markdown(self) -> str:
        lines = [f"### {self.title}", ""]
        lines.append("| " + " | ".join(self.columns) + " |")
        aligns = ["---"] + [
            "---:"
            if all(isinstance(r.get(c), int | float | tuple | None) for r in self.rows)
            else "---"
            for c in self.columns[1:]
        ]
        lines.append("| " + " | ".join(aligns) + " |")
        for row in self.rows:
            lines.append("| " + " | ".join(self.cell(c, row.get(c)) for c in self.columns) + " |")
        if self.notes:
            lines.append("")
            lines.extend(self.notes)
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.columns)
        for row in self.rows:
            writer.writerow(["" if row.get(c) is None else row.get(c) for c in self.columns])
        return buf.getvalue()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "columns": self.columns,
            "rows": [{c: row.get(c) for c in self.columns} for row in self.rows],
            "notes": self.notes,
        }


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
    cols = ["Model", *(VIEW_NAMES[v] for v in FIG8_VIEWS)]
    rows = []
    for e in entries:
        if e.setting != "view" or e.reward is not None:
            continue
        row: dict[str, Any] = {"Model": e.label, "source": "ours", "model": e.model}
        for v in FIG8_VIEWS:
            b = e.summary.get("by_view", {}).get(v) or {}
            row[VIEW_NAMES[v]] = (b.get("Acc"), b.get("count"))
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
def write_text(path: Path, text: str) -> None:
    """Write a text file atomically (temporary file, then os.replace)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _plain(value: Any) -> Any:
    """JSON-friendly cells: (acc, count) pairs become {"Acc", "count"}."""
    if isinstance(value, tuple):
        return {"Acc": value[0], "count": value[1]}
    return value


def write_table(table: ResultTable, out: Path, markdown: bool = True) -> None:
    if markdown:
        write_text(out / f"{table.name}.md", table.to_markdown())
    data = table.to_json()
    data["rows"] = [{k: _plain(v) for k, v in r.items()} for r in data["rows"]]
    for r, src in zip(data["rows"], table.rows, strict=True):
        r["source"] = src.get("source")
    write_json(out / f"{table.name}.json", data)
    flat = ResultTable(table.name, table.title, table.columns)
    for row in table.rows:
        flat_row = {}
        for c in table.columns:
            v = row.get(c)
            flat_row[c] = v[0] if isinstance(v, tuple) else v
        flat.rows.append(flat_row)
    write_text(out / f"{table.name}.csv", flat.to_csv())


@dataclass
class ResultsReport:
    """What `make_results` produced: the entries, the tables, the Markdown and the files."""

    entries: list[ResultEntry]
    tables: list[ResultTable]
    markdown: str
    files: list[Path]


def _sources_table(entries: list[ResultEntry]) -> ResultTable:
    t = ResultTable("sources", "Runs", ["Label", "Setting", "Kind", "Samples", "Path"])
    for e in entries:
        t.rows.append(
            {
                "Label": e.label,
                "Setting": e.setting,
                "Kind": e.kind,
                "Samples": e.summary.get("samples"),
                "Path": str(e.path),
            }
        )
    return t


def make_results(opts: ResultsOptions) -> ResultsReport:
    """Load and score every RUN, build the tables, write them (and the plots) to opts.out."""
    if not opts.runs:
        raise UserError("give at least one RUN (a training run, an evaluation or predictions)")
    if opts.setting is not None and opts.setting not in SETTINGS:
        raise UserError(f"--setting must be one of {list(SETTINGS)}, got {opts.setting!r}")
    out = Path(opts.out)
    entries = load_entries(opts)
    cp = opts.compare_paper
    t3, t4, t5 = table3(entries, cp), table4(entries, cp), table5(entries, cp)
    f7, f8 = fig7_table(entries, cp), fig8_table(entries)
    has_event = any(e.setting == "event" and e.reward is None for e in entries)
    has_view = any(e.setting == "view" and e.reward is None for e in entries)
    tables = [t for t in (t3, t4, t5) if t is not None]
    figure_tables = [t for t, ok in ((f7, has_event or cp), (f8, has_view)) if ok]
    files: list[Path] = []
    for t in (*tables, *figure_tables):
        write_table(t, out)
        files += [out / f"{t.name}.{ext}" for ext in ("md", "csv", "json")]
    sources = _sources_table(entries)
    write_table(sources, out, markdown=False)
    write_json(out / "config.json", opts.__dict__)
    parts = ["# Results", "", sources.to_markdown()]
    if opts.plots:
        from tvr.training.results_plots import fig7_plot, fig8_plot, learning_curves_plot

        if any(t.name == "fig7" for t in figure_tables):
            files.append(fig7_plot(f7, out / "fig7.png"))
        if has_view:
            files.append(fig8_plot(f8, out / "fig8.png"))
        curves = [e for e in entries if e.metrics_csv is not None]
        if curves:
            files.append(learning_curves_plot(curves, out / "learning_curves.png", cp))
    for t in (*tables, *figure_tables):
        parts.append(t.to_markdown())
        if t.name in ("fig7", "fig8") and (out / f"{t.name}.png").is_file():
            parts.append(f"![{t.title}]({t.name}.png)\n")
    if (out / "learning_curves.png").is_file() and opts.plots:
        parts.append("### Learning curves\n\n![learning curves](learning_curves.png)\n")
    markdown = "\n".join(parts)
    write_text(out / "results.md", markdown)
    files.append(out / "results.md")
    return ResultsReport(entries, tables + figure_tables, markdown, files)
