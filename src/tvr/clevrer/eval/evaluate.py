"""`tvr clevrer evaluate`: an answer file scored against a question file, as `tvr.core.verbs`'s
evaluators give it (summary.json, the table, summary.md and detail.jsonl)."""

from __future__ import annotations

from pathlib import Path

from tvr.clevrer.data.cache import cached_questions
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
    questions = cached_questions(path, read_questions)
    check_answers(questions, path)
    answers = read_submission(predictions, problems)
    require_answers_overlap(Path(data), path, predictions, questions, answers)
    result = score(questions, answers)
    chance = chance_level(questions)
    lines = table_lines(result, chance, f"ours: {predictions.name}")
    files = {"summary.md": "```\n" + "\n".join(lines) + "\n```\n", "detail.jsonl": result.details}
    return Evaluation(summarize(result, chance, path, predictions), lines, files)


def require_answers_overlap(
    data: Path, path: Path, predictions: Path, questions: list, answers: list
) -> None:
    """Refuse answers that share no video with the question file `path` of `data`, naming the
    split they are of (the set's other question files, else the release's index ranges)."""
    from tvr.clevrer.data.layout import SPLITS, find_questions, split_of
    from tvr.core.errors import UserError
    from tvr.core.overlap import require_overlap

    known = {str(v.scene_index) for v in questions}
    ids = [str(a.scene_index) for a in answers]
    if not ids or known & set(ids):
        return
    others: dict[str, str] = {}
    names = {"validation": "val"}
    if data.is_dir():
        for split in SPLITS:
            try:
                other = find_questions(data, split)
            except UserError:
                continue
            if other.resolve() != path.resolve():
                others.update({str(v.scene_index): names.get(split, split)
                               for v in read_questions(other)})  # fmt: skip
    for i in ids:  # the release's index ranges (a generated set's indices may go past them)
        if int(i) < 20000:
            others.setdefault(i, names.get(split_of(int(i)), split_of(int(i))))
    split = names.get(path.stem, path.stem)
    others = {i: s for i, s in others.items() if s != split}
    require_overlap(predictions, ids, known, path, "video (scene index)", split, others)
