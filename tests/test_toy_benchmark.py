"""docs/architecture.md's "How to add a benchmark", followed once: a tiny benchmark in a package of
its own, installed only through the `tvr.benchmarks` entry point (a dist-info on sys.path, as pip
would write it), registers its comparison, stats and evaluation in its plugin.py; then `tvr
compare --benchmark toy`, `tvr toy compare`, `tvr toy stats` and `tvr toy evaluate` find it."""

from __future__ import annotations

import json
import sys
import textwrap
from importlib import metadata

import pytest

from tvr.cli import build_parser, main
from tvr.core import plugins, verbs
from tvr.results import compare

PLUGIN = '''
"""The toy benchmark's parts of the shared layers (its `tvr.benchmarks` entry point)."""
from tvr.core.verbs import Evaluator, Stats, register_evaluator, register_stats
from tvr.results.compare import Comparer, register_comparer


def _stats(data):
    from toybench.data import read_answers

    answers = read_answers(data)
    stats = {"questions": len(answers), "answers": sorted(set(answers.values()))}
    return stats, [f"{data}: {stats['questions']} questions"], 0


def _evaluate(data, split, predictions, problems):
    from toybench.eval.evaluate import evaluate

    return evaluate(data, predictions, problems)


register_comparer("toy", Comparer("toybench.eval.compare", help="compare two toy evaluations",
                                  description="Accuracy, question by question (McNemar)."))
register_stats("toy", Stats(_stats, help="count the toy questions", description="Counts.",
                            data_help="answers.json"))
register_evaluator("toy", Evaluator(_evaluate, help="score toy answers", description="Accuracy.",
                                    data_help="answers.json", predictions_help="JSON lines",
                                    out_files=("detail.jsonl",)))
'''
DATA = '''
"""The toy's one format: answers.json, {question id: answer}."""
import json
from pathlib import Path


def read_answers(data):
    return json.loads(Path(data).read_text())
'''
EVALUATE = '''
"""`tvr toy evaluate`: a predictions line {"id", "answer"} right or wrong."""
from tvr.core.jsonl import iter_jsonl
from tvr.core.verbs import Evaluation
from toybench.data import read_answers


def evaluate(data, predictions, problems):
    answers = read_answers(data)
    given = {row["id"]: row["answer"] for _line, row in iter_jsonl(predictions)}
    detail = [{"id": q, "correct": given.get(q) == a} for q, a in sorted(answers.items())]
    accuracy = sum(d["correct"] for d in detail) / len(detail)
    return Evaluation({"accuracy": accuracy}, [f"accuracy {accuracy:.2f}"],
                      {"detail.jsonl": detail})
'''
COMPARE = '''
"""`tvr toy compare`: two evaluations' accuracy, question by question."""
from dataclasses import dataclass
from pathlib import Path

from tvr.results import compare as shared


@dataclass
class Detail:
    path: Path
    label: str
    correct: dict


def read_detail(path, label=None):
    file = shared.detail_file(path, "tvr toy evaluate --out")
    correct = {row["id"]: row["correct"] for _line, row in shared.detail_rows(file)}
    return Detail(file, label or shared.default_label(path), correct)


def compare_evaluations(a, b, resamples=10000, seed=0):
    row = shared.accuracy_row("accuracy", a.correct, b.correct, resamples, seed)
    return {"benchmark": "toy", **shared.sides(a, b), "metrics": [row]}


def markdown_lines(document):
    return [*shared.heading_lines("Toy", document, "McNemar."),
            *shared.metric_table(document["metrics"])]
'''


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy package and its dist-info (entry point `toy = "toybench.plugin"`) on sys.path; the
    registries as they were afterwards."""
    pkg = tmp_path / "site" / "toybench"
    (pkg / "eval").mkdir(parents=True)
    for rel, text in {"__init__.py": "", "plugin.py": PLUGIN, "data.py": DATA,
                      "eval/__init__.py": "", "eval/evaluate.py": EVALUATE,
                      "eval/compare.py": COMPARE}.items():  # fmt: skip
        (pkg / rel).write_text(textwrap.dedent(text))
    info = tmp_path / "site" / "toybench-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toybench\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[tvr.benchmarks]\ntoy = toybench.plugin\n")
    plugins.load_benchmarks()  # tvr's own five first, into the registries kept afterwards
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(plugins, "_loaded", set(plugins._loaded))
    monkeypatch.setattr(compare, "_COMPARERS", dict(compare._COMPARERS))
    monkeypatch.setattr(verbs, "_STATS", dict(verbs._STATS))
    monkeypatch.setattr(verbs, "_EVALUATORS", dict(verbs._EVALUATORS))
    yield tmp_path
    for name in [m for m in sys.modules if m == "toybench" or m.startswith("toybench.")]:
        del sys.modules[name]


def test_the_toy_is_found_through_its_entry_point_only(toy):
    names = [ep.name for ep in metadata.entry_points(group=plugins.ENTRY_POINT_GROUP)]
    assert "toy" in names
    assert "toy" in plugins.load_benchmarks()
    assert "toy" in compare.comparers() and "toy" in verbs.stats_verbs()
    assert "toy" in verbs.evaluators()
    group = build_parser()._subparsers._group_actions[0].choices["toy"]
    verbs_of_toy = group._subparsers._group_actions[0].choices
    assert sorted(verbs_of_toy) == ["compare", "evaluate", "stats"]


def test_tvr_compare_stats_and_evaluate_serve_the_toy(toy, capsys):
    data = toy / "answers.json"
    data.write_text(json.dumps({"q1": "a", "q2": "b", "q3": "c", "q4": "d"}))
    good, bad = toy / "good.jsonl", toy / "bad.jsonl"
    good.write_text("".join(json.dumps({"id": q, "answer": a}) + "\n"
                            for q, a in (("q1", "a"), ("q2", "b"), ("q3", "c"), ("q4", "d"))))
    bad.write_text(json.dumps({"id": "q1", "answer": "a"}) + "\n")

    assert main(["toy", "stats", "--data", str(data), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"questions": 4, "answers": ["a", "b", "c", "d"]}
    for name, predictions in (("good", good), ("bad", bad)):
        assert main(["toy", "evaluate", "--data", str(data), "--predictions", str(predictions),
                     "--out", str(toy / f"eval-{name}")]) == 0  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert out == ["accuracy 1.00", f"wrote {toy}/eval-good/summary.json, detail.jsonl",
                   "accuracy 0.25", f"wrote {toy}/eval-bad/summary.json, detail.jsonl"]
    assert json.loads((toy / "eval-bad" / "summary.json").read_text()) == {"accuracy": 0.25}

    a, b = f"good={toy / 'eval-good'}", f"bad={toy / 'eval-bad'}"
    assert main(["compare", "--benchmark", "toy", a, b, "--resamples", "200", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["benchmark"] == "toy" and (doc["a"]["label"], doc["b"]["label"]) == ("good", "bad")
    row = doc["metrics"][0]
    assert (row["a"], row["b"], row["only_a"], row["only_b"]) == (1.0, 0.25, 3, 0)
    assert main(["toy", "compare", a, b, "--resamples", "200", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == doc
    # an option of another benchmark's comparison is refused in one line
    assert main(["compare", "--benchmark", "toy", a, b, "--convention", "prose"]) == 2
    assert "--convention: not an option of the toy comparison" in capsys.readouterr().err
