"""`tvr results`: the papers' result tables and plots for our runs, beside the published numbers.

A RUN is one of
  - a training run directory (config.json and predictions.jsonl, see `tvr.trance.train.run`): its
    predictions are scored with the project's evaluator (`tvr.trance.eval.evaluate`) against the
    samples of `--samples`, of the dataset folder `--data` or of the dataset it was trained on
    (config `data_root`, split `predict_split`, else val; the synthetic source is regenerated
    from its seed), and the evaluation is cached in RUN/eval/;
  - an evaluation directory written by `tvr evaluate` (summary.json);
  - a predictions file (for example one tester's answers exported by the web app), or a folder
    of them (every tester's export, joined into one row, labelled "Human" when the files are
    the web app's human-*.jsonl), scored against `--samples` or `--data`; the evaluation is
    written under OUT/evals/.
A RUN may be written LABEL=PATH. The default label is the model name as the paper spells it
(`CNN⊕-G`, `ResNet₋-T`); REINFORCE fine-tunes (config `reinforce`) are `ResNet₋-T + corr` etc.

Tables (Markdown, CSV and JSON): Table 3 (one row per label: Basic ObjAcc/AttrAcc/ValAcc/Acc,
Event and View AD/AND/LAcc/Acc, ΔAcc = View Acc - Event Acc), Table 4 (REINFORCE fine-tunes
beside their base model), Table 5 (the order-sensitive subset of Event: LAcc, Acc, EO, size);
the numbers of Fig. 7 (Acc per number of steps, Event) and Fig. 8 (Acc per final view, View).
Runs of one setting scored on the same samples are also compared sample by sample (Acc
difference, bootstrap interval, McNemar p: `tvr.results.paired`).
The tables are built in `tvr.trance.results.tables`, the plots in `tvr.trance.results.plots`;
the published numbers (`tvr.trance.paper`) are rows marked "(paper)". This module
reads and scores the RUNs and writes everything; it needs neither torch nor matplotlib.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.core.jsonl import iter_jsonl, write_json, write_jsonl, write_text
from tvr.results.curves import split_label
from tvr.results.paired import paired_table
from tvr.results.registry import build_tables
from tvr.results.tables import ResultEntry, ResultTable, write_table
from tvr.trance.data.files import read_samples, write_samples
from tvr.trance.eval.evaluate import evaluate_files
from tvr.trance.results.tables import (
    REWARD_LABELS,
    canonical_model,
    display_name,
)
from tvr.trance.world.vocab import SETTINGS

__all__ = ["ResultEntry", "ResultsOptions", "canonical_model", "display_name", "make_results"]


# --- the runs -------------------------------------------------------------------------------------
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
        from tvr.trance.data.store import open_dataset
    except ImportError:
        raise UserError(
            f"{root}: reading a dataset folder needs tvr.trance.data.store (not in this install); "
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
    from tvr.trance.train.config import TrainConfig
    from tvr.trance.train.data import synthetic_split, synthetic_split_records
    from tvr.trance.train.synthetic import write_synthetic_samples

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


def _folder_label(folder: Path) -> str:
    """ "Human" for a folder of the web app's tester exports (human-*.jsonl), else its name."""
    files = sorted(folder.glob("*.jsonl"))
    return "Human" if files and all(f.name.startswith("human-") for f in files) else folder.name


def _join_predictions(folder: Path, out: Path) -> Path:
    """The predictions files of a folder as one file; a UserError if two answer one sample."""
    files = sorted(folder.glob("*.jsonl"))
    seen: dict[tuple[str, str], tuple[Path, int]] = {}
    records = []
    for f in files:
        for lineno, rec in iter_jsonl(f):
            if isinstance(rec, dict):
                key = (str(rec.get("id")), str(rec.get("view", "")))
                if key in seen:
                    first, first_line = seen[key]
                    raise UserError(
                        f"{f}, line {lineno}: sample {key[0]!r} is answered in {first}, line "
                        f"{first_line} too; give the files as separate RUNs"
                    )
                seen[key] = (f, lineno)
            records.append(rec)
    write_jsonl(out, records)
    return out


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
    if pred.is_dir():  # a folder of predictions files, e.g. the testers' exports of the web app
        label = label or _folder_label(pred)
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_") or "run"
        pred = _join_predictions(pred, out / "evals" / f"{index:02d}-{slug}" / "predictions.jsonl")
    label = label or pred.stem
    setting = opts.setting or sources.only_setting()
    if setting is None and len(sources.plain) == 1 and not sources.keyed and not sources.datasets:
        setting = _infer_setting(pred, sources.plain[0])
    if setting is None:
        setting = _infer_setting(pred, None)
    samples = sources.for_setting(setting, (opts.split,), pred)
    if samples is None:
        raise UserError(f"{pred}: no --samples or --data for its setting ({setting})")
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
        if any(path.glob("*.jsonl")):
            return _load_predictions(path, label, index, opts, sources, out)
        raise UserError(
            f"{path}: neither a training run (config.json and predictions.jsonl), an "
            "evaluation (summary.json of `tvr evaluate`) nor a folder of predictions files"
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
    tables, figure_tables = build_tables("trance", entries, cp)  # registered by tvr.trance.plugin
    paired = paired_table(entries)
    if paired is not None:
        tables.append(paired)
    figures = {t.name: t for t in figure_tables}
    files: list[Path] = []
    for t in (*tables, *figure_tables):
        write_table(t, out)
        files += [out / f"{t.name}.{ext}" for ext in ("md", "csv", "json")]
    sources = _sources_table(entries)
    write_table(sources, out, markdown=False)
    write_json(out / "config.json", opts.__dict__)
    parts = ["# Results", "", sources.to_markdown()]
    if opts.plots:
        from tvr.trance.results.plots import fig7_plot, fig8_plot, learning_curves_plot

        if "fig7" in figures:
            files.append(fig7_plot(figures["fig7"], out / "fig7.png"))
        if "fig8" in figures:
            files.append(fig8_plot(figures["fig8"], out / "fig8.png"))
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
