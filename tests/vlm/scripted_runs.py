"""Scripted VLM runs of all five benchmarks, end to end: a scripted OpenAI-compatible server
answers (`tvr vlm run`), the replies are exported (`tvr vlm export`, not VisualTrans) and scored
(the benchmark's evaluate `--out`). Used by tests/vlm/test_report.py and by
scripts/vlm_leaderboard_example.py (docs/leaderboard.md's table and plot). The "models" are
scripts, not real models: each gets some replies right, and some it cannot read.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from tests.vlm.chat_server import ChatServer
from tvr.cli import main

#: CLEVRER: frames sent per video (few, to keep the run short)
CLEVRER_FRAMES = 3


def vlm_run(server, model, *args):
    return main(["vlm", "run", "--base-url", server.base_url, "--model", model, "--api-key", "k",
                 "--quiet", "--retries", "0", "--timeout", "5", *map(str, args)])  # fmt: skip


def visualtrans_runs(tmp_path: Path) -> dict[str, Path]:
    """Two VisualTrans runs of the 11 test items: one mostly right, one whose every reply is
    garbled. Returns model -> its evaluation folder."""
    from tests.visualtrans.make_data import make_visualtrans
    from tests.vlm.test_end_to_end import E2E_REPLIES

    data, images, _ = make_visualtrans(tmp_path / "vt")
    evals = {}
    for model, server in (("vt-right", ChatServer(E2E_REPLIES)),
                          ("vt-garbled", ChatServer({}, responder=lambda m: "no idea, sorry"))):  # fmt: skip
        results = tmp_path / f"{model}.jsonl"
        with server:
            assert vlm_run(server, model, "--task", "visualtrans", "--data", data, "--images",
                           images, "--out", results) == 0  # fmt: skip
        evals[model] = tmp_path / f"eval-{model}"
        assert main(["visualtrans", "evaluate", "--data", str(data), "--predictions",
                     str(results), "--out", str(evals[model])]) == 0  # fmt: skip
    return evals


def trance_run(tmp_path: Path) -> Path:
    """3 TRANCE Event samples, the third reply garbled."""
    from tests.vlm.make_trance import make_trance, sample_key, steps_reply

    data, images, _ = make_trance(tmp_path / "trance", n=3)
    table = {
        sample_key(0): steps_reply([(1, "color.yellow")]),
        sample_key(1): steps_reply([(1, "color.yellow"), (2, "color.cyan")]),
        sample_key(2): "I believe object one became yellow and object two cyan.",  # garbled
    }
    results, preds = tmp_path / "trance.jsonl", tmp_path / "trance-preds.jsonl"
    with ChatServer(table) as server:
        assert vlm_run(server, "trance-model", "--task", "trance", "--data", data, "--images",
                       images, "--out", results, "--setting", "event") == 0  # fmt: skip
    assert main(["vlm", "export", "--task", "trance", "--data", str(data), "--images",
                 str(images), "--results", str(results), "--out", str(preds)]) == 0  # fmt: skip
    out = tmp_path / "eval-trance"
    assert main(["evaluate", "--data", str(data), "--predictions", str(preds), "--setting",
                 "event", "--out", str(out)]) == 0  # fmt: skip
    return out


def tranco_run(tmp_path: Path) -> tuple[Path, int]:
    """The tiny TRANCO samples, the last reply garbled. Returns (evaluation, items)."""
    from tests.tranco.tiny_dataset import make_tiny_dataset
    from tvr.tranco.vlm_task import TrancoTask

    root = make_tiny_dataset(tmp_path / "tranco")
    samples = TrancoTask(root).samples
    number = {s.id: {c: i + 1 for i, c in enumerate(s.candidates)} for s in samples}
    replies = {s.id: f"<answer>{json.dumps([number[s.id][c] for c in s.clips])}</answer>"
               for s in samples}  # fmt: skip
    replies[samples[-1].id] = "I cannot tell which clips these are."
    by_image = {(root / s.initial).read_bytes(): replies[s.id] for s in samples}

    def responder(messages):
        part = next(p for p in messages[-1]["content"] if p["type"] == "image_url")
        return by_image[base64.b64decode(part["image_url"]["url"].split(",", 1)[1])]

    results, preds = tmp_path / "tranco.jsonl", tmp_path / "tranco-preds.jsonl"
    with ChatServer({}, responder=responder) as server:
        assert vlm_run(server, "tranco-model", "--task", "tranco", "--data", root, "--images",
                       root, "--out", results) == 0  # fmt: skip
    assert main(["vlm", "export", "--task", "tranco", "--data", str(root), "--images",
                 str(root), "--results", str(results), "--out", str(preds)]) == 0  # fmt: skip
    out = tmp_path / "eval-tranco"
    assert main(["tranco", "evaluate", "--data", str(root / "test.jsonl"), "--predictions",
                 str(preds), "--out", str(out)]) == 0  # fmt: skip
    return out, len(samples)


def has_vtt_metrics() -> bool:
    return shutil.which("java") is not None and importlib.util.find_spec("pycocoevalcap") is not None


def vtt_run(tmp_path: Path) -> Path:
    """3 VTT samples (strip), one reply garbled (the test release's own script)."""
    from tests.vtt.release import make_release
    from tests.vtt.test_vlm_end_to_end import STRIP_REPLIES

    root = make_release(tmp_path / "rel")
    data = ["--task", "vtt", "--data", root, "--images", root / "states"]
    results, preds = tmp_path / "vtt.jsonl", tmp_path / "vtt-preds.jsonl"
    with ChatServer(STRIP_REPLIES) as server:
        assert vlm_run(server, "vtt-model", *data, "--out", results) == 0
    assert main(["vlm", "export", *map(str, data), "--results", str(results), "--out",
                 str(preds)]) == 0  # fmt: skip
    out = tmp_path / "eval-vtt"
    assert main(["vtt", "evaluate", "--data", str(root / "meta" / "vtt.jsonl"), "--predictions",
                 str(preds), "--out", str(out), "--no-bertscore"]) == 0  # fmt: skip
    return out


def has_clevrer_video() -> bool:
    """A CLEVRER set can be made (pybullet) and its videos read (PyAV)."""
    return all(importlib.util.find_spec(m) is not None for m in ("pybullet", "av"))


@dataclass
class ClevrerRun:
    evaluation: Path
    answers: Path
    questions: int
    garbled: list[str]  # item ids whose reply is garbled (unreadable)
    wrong: list[str]  # item ids answered wrongly, but readably


def _clevrer_reply(question) -> str:
    if question.choices is None:
        return f"<think>Looking at the frames.</think><answer>{question.answer}</answer>"
    verdicts = {str(k): c.answer for k, c in enumerate(question.choices, start=1)}
    return f"<answer>{json.dumps(verdicts)}</answer>"


def _wrong_reply(question) -> str:
    """A readable, wrong descriptive answer."""
    if question.subtype == "count" or str(question.answer).isdigit():
        return f"<answer>{int(question.answer) + 1}</answer>"
    if question.subtype == "exist":
        return f"<answer>{'no' if question.answer == 'yes' else 'yes'}</answer>"
    from tvr.clevrer.vlm_task import ANSWER_SPACES

    space = ANSWER_SPACES.get(question.subtype, ("red", "blue"))
    return f"<answer>{next(a for a in space if a != question.answer)}</answer>"


def clevrer_run(tmp_path: Path) -> ClevrerRun:
    """The test split of a 2-video CLEVRER set (rendered, raster): every reply right but the
    first descriptive one (garbled), the first multiple-choice one (garbled) and the second
    descriptive one (readable, wrong)."""
    from tvr.clevrer.data.questions import read_questions
    from tvr.clevrer.generate.config import GenerateConfig
    from tvr.clevrer.generate.job import generate
    from tvr.clevrer.vlm_task import item_id

    data = tmp_path / "clevrer"
    generate(GenerateConfig(num=2, seed=0, shard_size=2).validate(), data, progress=False)
    videos = read_questions(data / "questions" / "test.json")
    pairs = [(v.scene_index, q) for v in videos for q in v.questions]
    descriptive = [q for _, q in pairs if q.choices is None]
    choice = [q for _, q in pairs if q.choices is not None]
    garbled_q, wrong_q = {id(descriptive[0]), id(choice[0])}, {id(descriptive[1])}
    by_text = {q.question: q for _, q in pairs}
    assert len(by_text) == len(pairs)  # the script knows a question by its text

    def responder(messages):
        text = "".join(p.get("text", "") for p in messages[-1]["content"] if p["type"] == "text")
        line = next(x for x in text.splitlines() if x.startswith("Question: "))
        q = by_text[line.removeprefix("Question: ")]
        if id(q) in garbled_q:
            return "I think it is the second one, probably."
        return _wrong_reply(q) if id(q) in wrong_q else _clevrer_reply(q)

    task = ["--task", "clevrer", "--data", str(data), "--split", "test", "--frames",
            str(CLEVRER_FRAMES)]  # fmt: skip
    results, answers = tmp_path / "clevrer.jsonl", tmp_path / "clevrer_answers.json"
    with ChatServer({}, responder=responder) as server:
        assert vlm_run(server, "clevrer-model", *task, "--out", results) == 0
    assert main(["vlm", "export", *task, "--results", str(results), "--out", str(answers)]) == 0
    out = tmp_path / "eval-clevrer"
    assert main(["clevrer", "evaluate", "--data", str(data), "--split", "test", "--predictions",
                 str(answers), "--out", str(out)]) == 0  # fmt: skip
    ids = {id(q): item_id(k, q.question_id) for k, q in pairs}
    return ClevrerRun(out, answers, len(pairs), sorted(ids[i] for i in garbled_q),
                      [ids[i] for i in wrong_q])  # fmt: skip
