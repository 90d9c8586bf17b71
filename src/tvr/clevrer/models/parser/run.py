"""`train_parser(config) -> run_dir`: one parser run on `tvr.training.runs.fit_run`, then its parses.

The run folder holds what every tvr run holds (config.json, metrics.csv with `val/acc` = exact
program match per epoch, checkpoints/best.ckpt and last.ckpt; a rerun resumes) and, once
training ends, the best checkpoint's parse of the whole validation split:
`predictions/<val_split>.json` (the question file with parsed programs, what NS-DR executes)
and `eval/<val_split>/exact_match.json` (per role, per question type, whole questions).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lightning.pytorch.callbacks import Callback

from tvr.clevrer.data.layout import find_questions
from tvr.clevrer.data.questions import read_questions, write_questions
from tvr.clevrer.models.parser.config import ParserConfig
from tvr.clevrer.models.parser.data import role_counts
from tvr.clevrer.models.parser.module import ParserData, ParserModule
from tvr.clevrer.models.parser.predict import Parser, exact_match, parse_questions
from tvr.core.jsonl import write_json
from tvr.training.runs import fit_config, open_run


def train_parser(
    config: ParserConfig,
    callbacks: Sequence[Callback] = (),
    progress_bar: bool = False,
    epoch_lines: bool = True,
) -> Path:
    """Train the parser as configured (resuming its run folder); returns the run folder."""
    run_dir = open_run(config)
    data = ParserData(config)
    data.setup()
    assert data.words is not None and data.tokens is not None
    counts = role_counts(data.train_samples)
    print(
        f"parser: {counts['descriptive']} descriptive questions, {counts['question']} "
        f"multiple-choice questions, {counts['choice']} choices; {len(data.val_samples)} held-out "
        f"texts; {len(data.words)} words, {len(data.tokens)} program tokens"
    )
    words, tokens = data.words.to_json(), data.tokens.to_json()

    def make_module() -> ParserModule:
        return ParserModule(config.to_dict(), words, tokens)

    result = fit_config(
        config, make_module, data, callbacks, progress_bar, epoch_lines,
        batch_size=lambda b: b["words"].shape[0], monitor="val/acc", mode="max",
        monitor_label="val exact match",
    )  # fmt: skip
    if result.trainer.is_global_zero:
        write_parses(result.best, config.data, config.val_split, run_dir)
    return run_dir


def write_parses(
    checkpoint: Path, data: str, split: str, run_dir: Path, name: str | None = None
) -> dict:
    """Parse `split` of `data` with `checkpoint`; write predictions/<name>.json and
    eval/<name>/exact_match.json into `run_dir` (`name` defaults to `split`); returns the exact
    match."""
    name = name or split
    gold = read_questions(find_questions(data, split))
    parsed = parse_questions(Parser.load(checkpoint), gold)
    write_questions(run_dir / "predictions" / f"{name}.json", parsed)
    scores = exact_match(gold, parsed)
    write_json(
        run_dir / "eval" / name / "exact_match.json",
        {"split": split, "checkpoint": str(checkpoint), **scores},
    )
    return scores
