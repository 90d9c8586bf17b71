"""`tvr clevrer evaluate`: an answer file scored against a question file, as `tvr.core.verbs`'s
evaluators give it (summary.json, the table, summary.md and detail.jsonl)."""

from __future__ import annotations

from pathlib import Path

from tvr.clevrer.data.layout import questions_file
from tvr.clevrer.data.questions import check_answers, read_questions
from tvr.clevrer.data.submission import read_submission
from tvr.clevrer.eval.baselines import chance_level
from tvr.clevrer.eval.score import score
from tvr.clevrer.eval.summary import summarize, table_lines
from tvr.core.verbs import Evaluation


def evaluate(data: str | Path, split: str, predictions: Path, problems: list | None) -> Evaluation:
    """Score `predictions` (the submission format) against the questions of `data` (a question
    file, or a set's folder and its `split`); `problems`: the list --lenient adds bad entries to."""
    path = questions_file(data, split)
    questions = read_questions(path)
    check_answers(questions, path)
    answers = read_submission(predictions, problems)
    result = score(questions, answers)
    chance = chance_level(questions)
    lines = table_lines(result, chance, f"ours: {predictions.name}")
    files = {"summary.md": "```\n" + "\n".join(lines) + "\n```\n", "detail.jsonl": result.details}
    return Evaluation(summarize(result, chance, path, predictions), lines, files)
