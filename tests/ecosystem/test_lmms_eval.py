"""`tvr export lmms-eval`: the task folder's functions are tvr's (prompt, scorer), and lmms-eval
driven against the scripted chat server gives the numbers of `tvr vlm run` + tvr's evaluator on
the same replies, to the last digit.

Two levels: the `process_results` path (the exported rows through the folder's utils.py, with
the replies `tvr vlm run` got; needs only `datasets`), and lmms-eval itself (`python -m
lmms_eval` as a subprocess; skipped unless lmms-eval is importable: it is not in the `test`
extra, see docs/ecosystem.md)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

datasets = pytest.importorskip("datasets")
pytest.importorskip("pyarrow")

from tests.vlm.chat_server import ChatServer  # noqa: E402

from tvr.cli import main  # noqa: E402

os.environ["HF_HUB_OFFLINE"] = "1"
KEY = "sk-test-lmms"


def _has_lmms_eval() -> bool:
    return importlib.util.find_spec("lmms_eval") is not None


def _lmms_python():
    """A Python with lmms-eval: this one, else TVR_LMMS_PYTHON (0.7.3 needs filelock<4, so it
    lives in a venv of its own), or None. Opt-in: a venv left on the machine is not picked up by
    itself, since the end-to-end runs take minutes."""
    if _has_lmms_eval():
        return sys.executable
    found = os.environ.get("TVR_LMMS_PYTHON")
    return found if found and os.path.isfile(found) else None


needs_lmms = pytest.mark.skipif(
    _lmms_python() is None,
    reason="lmms-eval is not importable here nor in TVR_LMMS_PYTHON "
    "(not in the test extra: python3.11 -m venv /tmp/lmms-venv; /tmp/lmms-venv/bin/pip install "
    "lmms-eval==0.7.3 'filelock<4')",
)  # fmt: skip

#: the exported tasks' max_new_tokens: `tvr vlm run --temperature 0 --max-tokens N` sends what
#: lmms-eval's OpenAI model sends (it always sends both)
MAX_TOKENS = {"visualtrans": 4096, "trance": 2048, "vtt": 2048, "clevrer": 4096, "tranco": 4096}


def _export(bench, data, out):
    assert main(["export", "lmms-eval", "--benchmark", bench, "--data", str(data), "--out",
                 str(out), "--quiet"]) == 0  # fmt: skip
    assert (out / "utils.py").is_file() and (out / "hf" / "README.md").is_file()
    return sorted(p.stem for p in out.glob("*.yaml"))


def _utils(folder):
    spec = importlib.util.spec_from_file_location(f"lmms_utils_{folder.name}", folder / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _vlm_run(server, task, *args):
    return main(["vlm", "run", "--base-url", server.base_url, "--model", "scripted",
                 "--api-key", KEY, "--quiet", "--retries", "1", "--timeout", "10",
                 "--temperature", "0", "--max-tokens", str(MAX_TOKENS[task]),
                 "--task", task, *map(str, args)])  # fmt: skip


def _request(body: bytes) -> str:
    """A request body with each image as its decoded pixels' digest (lmms-eval re-encodes every
    image as PNG; tvr sends the files' bytes), as canonical JSON."""
    import base64
    import hashlib
    import io

    from PIL import Image

    doc = json.loads(body)
    for message in doc["messages"]:
        for part in message["content"]:
            if part.get("type") == "image_url":
                data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                im = Image.open(io.BytesIO(data)).convert("RGB")
                part["image_url"] = {"pixels": hashlib.sha256(im.tobytes()).hexdigest(),
                                     "size": list(im.size)}  # fmt: skip
    return json.dumps(doc, sort_keys=True)


def _same_requests(server, before):
    """lmms-eval's requests (after the first `before`) are tvr's: text first, then the images
    (the same pixels, in order), the same model, temperature and max_tokens, one per item."""
    tvr = sorted(_request(r.body) for r in server.requests[:before])
    lmms = sorted(_request(r.body) for r in server.requests[before:])
    assert len(lmms) == len(tvr)
    assert lmms == tvr


def _lmms_eval(server, folder, task, tmp_path):
    """lmms-eval's CLI on `task` of `folder` against `server`, with no --reasoning_tags (its
    default strips <think>/<analysis>; the tasks turn that off); its results' metrics, after
    checking that its requests are tvr's (`_same_requests`)."""
    before = len(server.requests)
    out = tmp_path / "lmms-out"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_HOME": str(tmp_path / "hf-home"), "WANDB_MODE": "disabled",
           "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    proc = subprocess.run(
        [_lmms_python(), "-m", "lmms_eval", "--model", "openai", "--model_args",
         f"model=scripted,base_url={server.base_url},api_key={KEY},num_concurrent=2,max_retries=1",
         "--tasks", task, "--include_path", str(folder), "--batch_size", "1",
         "--output_path", str(out)],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    found = list(out.rglob("*_results.json"))
    assert found, proc.stderr[-3000:]
    results = json.loads(found[0].read_text())["results"][task]
    _same_requests(server, before)
    return {
        k.split(",")[0]: v for k, v in results.items() if k.endswith(",none") and "stderr" not in k
    }


# --- VisualTrans ------------------------------------------------------------------------------

#: plain replies, replies whose answer lies in a reasoning block (lmms-eval strips <think> and
#: <analysis> blocks by default: issue 42), and a malformed one (no final answer)
VISUALTRANS_REPLIES = {
    "[Q01]": "<think>Two items.</think><answer>Two.</answer>",
    "[Q02]": "<think>No group formed.</think>\n<answer>0</answer>",
    "[Q03]": "<think>...</think><answer>B</answer>",
    "[Q04]": "<analysis>Reasoning here.\nFinal Answer: C</analysis>",
    "[Q05]": "<think>image6 fits. Final Answer: D</think>",
    "[Q06]": "<answer>white block, green block</answer>",
    "[Q07]": "<answer>red tomato slice, brown and beige bacon strip</answer>",
    "[Q08]": "<answer>none</answer>",
    "[Q09]": "<answer>Because nothing moved, A</answer>",
    "[Q10]": "I cannot tell from these images.",
}


def _visualtrans(tmp_path, capsys):
    from tests.visualtrans.make_data import make_visualtrans

    data, images, _ = make_visualtrans(tmp_path / "vt")
    folder = tmp_path / "lmms"
    assert _export("visualtrans", data, folder) == ["tvr_visualtrans"]
    results = tmp_path / "results.jsonl"
    server = ChatServer(VISUALTRANS_REPLIES)
    with server:
        assert _vlm_run(server, "visualtrans", "--data", data, "--images", images,
                        "--out", results) == 0  # fmt: skip
    summaries = {}
    for mode in ("official", "normalized"):
        capsys.readouterr()
        assert main(["visualtrans", "evaluate", "--data", str(data), "--predictions",
                     str(results), "--mode", mode, "--json"]) == 0  # fmt: skip
        summaries[mode] = json.loads(capsys.readouterr().out)
    off = summaries["official"]
    expected = {
        "overall_official": 100 * off["overall"]["accuracy"],
        "overall_normalized": 100 * summaries["normalized"]["overall"]["accuracy"],
        **{f"{d}_official": off["dimensions"][d]["table2_pct"]
           for d in ("spatial", "procedural", "quantitative")},
    }  # fmt: skip
    # the reasoning-tag replies count in tvr (lmms-eval's default would strip them: 8 and 9)
    # Q04 and Q05 answer inside <analysis>/<think>: tvr reads them (lmms-eval's default strips
    # the blocks, issue 42); Q10 has no answer
    assert off["overall"]["correct"] == 8 and summaries["normalized"]["overall"]["correct"] == 9
    assert off["status_counts"]["no_answer"] == 1
    replies = {
        json.loads(x)["id"]: json.loads(x)["reply"] for x in results.read_text().splitlines()
    }
    return data, folder, server, replies, expected


def test_visualtrans_process_results_equal_tvr(tmp_path, capsys):
    from tvr.vlm.tasks import build_messages, make_adapter
    from tvr.vlm.templates import load_template

    data, folder, _, replies, expected = _visualtrans(tmp_path, capsys)
    utils = _utils(folder)
    rows = datasets.load_dataset(str(folder / "hf"), "default", cache_dir=str(tmp_path / "c"))[
        "test"
    ]
    assert len(rows) == 11
    rows = utils.process_docs(rows)  # the duplicate is asked once, as tvr asks it (issue 42)
    assert len(rows) == 10 and sorted(rows["id"]) == sorted(replies)
    assert sum(len(json.loads(d)) for d in rows["duplicate_rows"]) == 1
    # the prompt is tvr's, byte for byte, and the images are the item's, in order
    task = make_adapter("visualtrans", data, None)
    sent = {it.id: build_messages(it, load_template(None, task))[0] for it in task.items()}
    for row in rows:
        assert utils.doc_to_text(row) == sent[row["id"]]["content"][0]["text"]
        assert len(utils.doc_to_visual(row)) == len(sent[row["id"]]["content"]) - 1
    values = [utils.process_results({k: v for k, v in row.items() if k != "images"},
                                    [replies[row["id"]]]) for row in rows]  # fmt: skip
    got = {m: getattr(utils, m)([v[m] for v in values]) for m in expected}
    assert got == expected


@needs_lmms
def test_visualtrans_lmms_eval_end_to_end(tmp_path, capsys):
    _, folder, server, _, expected = _visualtrans(tmp_path, capsys)
    with server:
        got = _lmms_eval(server, folder, "tvr_visualtrans", tmp_path)
    assert {m: got[m] for m in expected} == expected


# --- TRANCE (Event) ---------------------------------------------------------------------------


def _trance_set(tmp_path, setting):
    """A small generated TRANCE set of `setting` (six test samples)."""
    data = tmp_path / "gen"
    assert main(["generate", "--setting", setting, "--split-sizes", "train=1,val=1,test=6",
                 "--shard-size", "3", "--out", str(data), "--preset", "preview",
                 "--image-size", "96x72", "--small-size", "48x36", "--quiet"]) == 0  # fmt: skip
    return data


def _trance_scripted(tmp_path, capsys, data, setting, server):
    """`tvr vlm run` against `server`, `tvr vlm export`, `tvr evaluate --json`: the summary and
    the replies by item id."""
    results, preds = tmp_path / "results.jsonl", tmp_path / "preds.jsonl"
    with server:
        assert _vlm_run(server, "trance", "--data", data, "--setting", setting,
                        "--out", results) == 0  # fmt: skip
    assert main(["vlm", "export", "--task", "trance", "--data", str(data), "--setting", setting,
                 "--results", str(results), "--out", str(preds)]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["evaluate", "--data", str(data), "--split", "test", "--setting", setting,
                 "--predictions", str(preds), "--json"]) == 0  # fmt: skip
    summary = json.loads(capsys.readouterr().out)
    replies = {
        json.loads(x)["id"]: json.loads(x)["reply"] for x in results.read_text().splitlines()
    }
    return summary, replies


def _trance(tmp_path, capsys):
    from tvr.trance.data.files import read_samples
    from tvr.trance.vlm_task import objects_table
    from tvr.trance.world import vocab

    data = _trance_set(tmp_path, "event")
    folder = tmp_path / "lmms"
    assert "tvr_trance_event" in _export("trance", data, folder)
    samples = read_samples(data / "test" / "samples.jsonl")

    def reply(k, s):  # right (in a reasoning block), the first step only, unreadable, in turn
        steps = [{"obj": st.obj, "value": vocab.VALUES[st.value]} for st in s.steps]
        if k % 3 == 1:
            steps = steps[:1]
        answer = f"<answer>{json.dumps({'steps': steps})}</answer>"
        if k % 3 == 0:  # lmms-eval's default --reasoning_tags would strip it all (issue 42)
            return f"<think>Checking each object. {answer}</think>"
        return "no steps here" if k % 3 == 2 else answer

    table = {objects_table(s.objects): reply(k, s) for k, s in enumerate(samples)}
    server = ChatServer(table)
    summary, replies = _trance_scripted(tmp_path, capsys, data, "event", server)
    expected = {m: summary["metrics"][m] for m in ("AD", "AND", "LAcc", "Acc")}
    assert 0 < expected["Acc"] < 1
    return data, folder, server, replies, expected


def test_trance_process_results_equal_tvr(tmp_path, capsys):
    from tvr.trance.vlm_task import TranceTask
    from tvr.vlm.tasks import build_messages
    from tvr.vlm.templates import load_template

    data, folder, _, replies, expected = _trance(tmp_path, capsys)
    utils = _utils(folder)
    rows = datasets.load_dataset(str(folder / "hf"), "event", cache_dir=str(tmp_path / "c"))["test"]
    task = TranceTask(data, setting="event")
    sent = {it.id: build_messages(it, load_template(None, task))[0] for it in task.items()}
    for row in rows:
        assert utils.doc_to_text_event(row) == sent[row["id"]]["content"][0]["text"]
    values = [utils.process_results_event(row, [replies.get(row["id"])]) for row in rows]
    got = {m: getattr(utils, f"{m}_event")([v[m] for v in values]) for m in expected}
    assert got == expected


@needs_lmms
def test_trance_lmms_eval_end_to_end(tmp_path, capsys):
    _, folder, server, _, expected = _trance(tmp_path, capsys)
    with server:
        got = _lmms_eval(server, folder, "tvr_trance_event", tmp_path)
    assert {m: got[m] for m in expected} == expected


# --- VTT (strip) ------------------------------------------------------------------------------

from tests.vtt.samples import needs_java  # noqa: E402

VTT_METRICS = ("BLEU_4", "METEOR", "ROUGE_L", "CIDEr")


def _vtt(tmp_path, capsys):
    from tests.vtt.release import make_release
    from tests.vtt.test_vlm_end_to_end import STRIP_REPLIES

    root = make_release(tmp_path / "rel")
    folder = tmp_path / "lmms"
    assert _export("vtt", root, folder) == ["tvr_vtt", "tvr_vtt_train"]
    assert "need Java" in (folder / "tvr_vtt.yaml").read_text()
    results, preds, evaluation = (tmp_path / n for n in ("results.jsonl", "preds.jsonl", "eval"))
    server = ChatServer(STRIP_REPLIES)
    with server:
        assert _vlm_run(server, "vtt", "--data", root, "--out", results) == 0
    assert main(["vlm", "export", "--task", "vtt", "--data", str(root), "--results",
                 str(results), "--out", str(preds)]) == 0  # fmt: skip
    assert main(["vtt", "evaluate", "--data", str(root), "--predictions", str(preds),
                 "--out", str(evaluation), "--no-bertscore"]) == 0  # fmt: skip
    capsys.readouterr()
    metrics = json.loads((evaluation / "summary.json").read_text())["metrics"]
    assert metrics["BERTScore"] is None and metrics["SPICE"] is None
    expected = {m: metrics[m] for m in VTT_METRICS}
    assert 0 < expected["CIDEr"] < 1000
    replies = {
        json.loads(x)["id"]: json.loads(x)["reply"] for x in results.read_text().splitlines()
    }
    return root, folder, server, replies, expected


@needs_java
def test_vtt_process_results_equal_tvr(tmp_path, capsys, monkeypatch):
    import io

    from PIL import Image

    from tvr.vlm.tasks import build_messages, make_adapter
    from tvr.vlm.templates import load_template
    from tvr.vtt.strip import strip_jpeg

    monkeypatch.delenv("TVR_VTT_BERTSCORE_MODEL", raising=False)
    monkeypatch.delenv("TVR_VTT_SPICE_CORENLP", raising=False)
    root, folder, _, replies, expected = _vtt(tmp_path, capsys)
    utils = _utils(folder)
    rows = datasets.load_dataset(str(folder / "hf"), "default", cache_dir=str(tmp_path / "c"))[
        "test"
    ]
    task = make_adapter("vtt", root, None)
    sent = {it.id: build_messages(it, load_template(None, task))[0] for it in task.items()}
    by_id = {r.id: r for r in task.records}
    for row in rows:  # tvr's prompt, byte for byte, and tvr's strip (the JPEG it sends, decoded)
        assert utils.doc_to_text(row) == sent[row["id"]]["content"][0]["text"]
        (strip,) = utils.doc_to_visual(row)
        jpeg = strip_jpeg(task.states(by_id[row["id"]]))
        assert strip.tobytes() == Image.open(io.BytesIO(jpeg)).convert("RGB").tobytes()
    values = [utils.process_results({k: v for k, v in row.items() if k != "states"},
                                    [replies[row["id"]]]) for row in rows]  # fmt: skip
    got = {m: getattr(utils, m)([v[m] for v in values]) for m in expected}
    assert got == expected


@needs_java
@needs_lmms
def test_vtt_lmms_eval_end_to_end(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TVR_VTT_BERTSCORE_MODEL", raising=False)
    monkeypatch.delenv("TVR_VTT_SPICE_CORENLP", raising=False)
    _, folder, server, _, expected = _vtt(tmp_path, capsys)
    with server:
        got = _lmms_eval(server, folder, "tvr_vtt", tmp_path)
    assert {m: got[m] for m in expected} == expected


# --- CLEVRER ----------------------------------------------------------------------------------

CLEVRER_METRICS = ("descriptive", *(f"{t}_{lv}" for t in ("explanatory", "predictive",
                   "counterfactual") for lv in ("per_option", "per_question")))  # fmt: skip


def _clevrer_reply(q, k):
    """Right, wrong or unreadable, in turn (by the question's place among those of its text)."""
    if k % 3 == 2:
        return "I am not sure what happens here."
    if q.choices is None:
        answer = q.answer if k % 3 == 0 else ("no" if q.answer == "yes" else "yes")
        return f"<think>Looking.</think><answer>{answer}</answer>"
    verdicts = {str(n): (c.answer if k % 3 == 0 else "correct")
                for n, c in enumerate(q.choices, start=1)}  # fmt: skip
    return f"<answer>{json.dumps(verdicts)}</answer>"


def _clevrer(tmp_path, capsys):
    pytest.importorskip("av")
    pytest.importorskip("pybullet")
    from tvr.clevrer.data.questions import read_questions

    data = tmp_path / "cg"
    assert main(["clevrer", "generate", "--out", str(data), "--num", "2", "--split-sizes",
                 "train=0,val=2,test=0", "--preset", "preview", "--no-dynamics",
                 "--quiet"]) == 0  # fmt: skip
    folder = tmp_path / "lmms"
    assert _export("clevrer", data, folder) == ["tvr_clevrer"]
    questions = [q for v in read_questions(data / "questions" / "validation.json")
                 for q in v.questions]  # fmt: skip
    by_text: dict[str, str] = {}
    for k, q in enumerate(questions):
        by_text.setdefault(q.question, _clevrer_reply(q, k))

    def responder(messages):
        text = "".join(p.get("text", "") for p in messages[-1]["content"] if p["type"] == "text")
        line = next(x for x in text.splitlines() if x.startswith("Question: "))
        return by_text[line.removeprefix("Question: ")]

    server = ChatServer({}, responder=responder)
    results, answers, evaluation = (tmp_path / n for n in ("r.jsonl", "a.json", "eval"))
    with server:
        assert _vlm_run(server, "clevrer", "--data", data, "--split", "val", "--out",
                        results) == 0  # fmt: skip
    assert all(len(r.image_mimes) == 8 for r in server.requests)
    assert main(["vlm", "export", "--task", "clevrer", "--data", str(data), "--split", "val",
                 "--results", str(results), "--out", str(answers)]) == 0  # fmt: skip
    assert main(["clevrer", "evaluate", "--data", str(data), "--split", "val", "--predictions",
                 str(answers), "--out", str(evaluation)]) == 0  # fmt: skip
    capsys.readouterr()
    s = json.loads((evaluation / "summary.json").read_text())["score"]
    expected = {m: (s[m] if m == "descriptive" else s[m.split("_", 1)[0]][m.split("_", 1)[1]])[
        "accuracy"] for m in CLEVRER_METRICS}  # fmt: skip
    assert 0 < expected["descriptive"] < 1 and s["missing"]["questions"] > 0
    replies = {
        json.loads(x)["id"]: json.loads(x)["reply"] for x in results.read_text().splitlines()
    }
    return data, folder, server, replies, expected


def test_clevrer_process_results_equal_tvr(tmp_path, capsys):
    import io

    from PIL import Image

    from tvr.clevrer.vlm_task import ClevrerTask
    from tvr.vlm.tasks import build_messages
    from tvr.vlm.templates import load_template

    data, folder, _, replies, expected = _clevrer(tmp_path, capsys)
    utils = _utils(folder)
    rows = datasets.load_dataset(str(folder / "hf"), "questions",
                                 cache_dir=str(tmp_path / "c"))["validation"]  # fmt: skip
    task = ClevrerTask(data, split="val")
    items = {it.id: it for it in task.items()}
    for row in rows:  # tvr's prompt, byte for byte; tvr's frames (the JPEGs it sends, decoded)
        item = items[row["id"]]
        sent = build_messages(item, load_template(None, task))[0]["content"]
        assert utils.doc_to_text(row) == sent[0]["text"]
        frames = utils.doc_to_visual(row)
        assert len(frames) == len(item.images) == 8
        jpeg = item.images[3].compose(item.images[3].sources)
        assert frames[3].tobytes() == Image.open(io.BytesIO(jpeg)).convert("RGB").tobytes()
    values = [utils.process_results(row, [replies[row["id"]]]) for row in rows]
    got = {m: getattr(utils, m)([v[m] for v in values]) for m in expected}
    assert got == expected


@needs_lmms
def test_clevrer_lmms_eval_end_to_end(tmp_path, capsys):
    _, folder, server, _, expected = _clevrer(tmp_path, capsys)
    with server:
        got = _lmms_eval(server, folder, "tvr_clevrer", tmp_path)
    assert {m: got[m] for m in expected} == expected


# --- TRANCO -----------------------------------------------------------------------------------

TRANCO_METRICS = ("EMR", "R", "P", "KTD", "SD", "NSD")


def _tranco(tmp_path, capsys):
    import base64
    import io

    from PIL import Image

    from tvr.tranco.vlm_task import TrancoTask

    data = tmp_path / "tr"
    assert main(["tranco", "testbed", "--out", str(data), "--split-sizes", "train=2,val=2,test=4",
                 "--image-size", "64x48", "--frames-per-clip", "2", "--preset", "preview",
                 "--quiet"]) == 0  # fmt: skip
    folder = tmp_path / "lmms"
    assert _export("tranco", data, folder) == ["tvr_tranco", "tvr_tranco_validation"]
    samples = TrancoTask(data).samples
    replies = {}
    for k, s in enumerate(samples):  # right, the first step only, reversed, unreadable
        numbers = [s.candidates.index(c) + 1 for c in s.clips]
        numbers = [numbers, numbers[:1], numbers[::-1], None][k % 4]
        replies[s.id] = "no idea" if numbers is None else f"<answer>{json.dumps(numbers)}</answer>"

    def pixels(data_bytes):
        return Image.open(io.BytesIO(data_bytes)).convert("L").resize((16, 12)).tobytes()

    initial = {s.id: pixels((data / s.initial).read_bytes()) for s in samples}

    def responder(messages):  # knows a sample by its initial image (the nearest, re-encoded)
        part = next(p for p in messages[-1]["content"] if p["type"] == "image_url")
        got = pixels(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))
        return replies[min(initial, key=lambda i: sum(abs(a - b) for a, b in
                                                      zip(initial[i], got, strict=True)))]  # fmt: skip

    server = ChatServer({}, responder=responder)
    results, preds = tmp_path / "results.jsonl", tmp_path / "preds.jsonl"
    with server:
        assert _vlm_run(server, "tranco", "--data", data, "--out", results) == 0
    assert main(["vlm", "export", "--task", "tranco", "--data", str(data), "--results",
                 str(results), "--out", str(preds)]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["tranco", "evaluate", "--data", str(data), "--split", "test", "--predictions",
                 str(preds), "--json"]) == 0  # fmt: skip
    summary = json.loads(capsys.readouterr().out)
    metrics = summary["conventions"][summary["published"]["convention"]]["metrics"]
    expected = {m: metrics[m] for m in TRANCO_METRICS}
    assert 0 < expected["EMR"] < 1
    got_replies = {
        json.loads(x)["id"]: json.loads(x)["reply"] for x in results.read_text().splitlines()
    }
    assert got_replies == replies  # the responder told the samples apart
    return data, folder, server, replies, expected


def test_tranco_process_results_equal_tvr(tmp_path, capsys):
    from tvr.tranco.vlm_task import TrancoTask
    from tvr.vlm.tasks import build_messages
    from tvr.vlm.templates import load_template

    data, folder, _, replies, expected = _tranco(tmp_path, capsys)
    utils = _utils(folder)
    rows = datasets.load_dataset(str(folder / "hf"), "default", cache_dir=str(tmp_path / "c"))[
        "test"
    ]
    task = TrancoTask(data)
    items = {it.id: it for it in task.items()}
    for row in rows:  # tvr's prompt, byte for byte; tvr's images, in order (sheets: its JPEGs)
        item = items[row["id"]]
        sent = build_messages(item, load_template(None, task))[0]["content"]
        assert utils.doc_to_text(row) == sent[0]["text"]
        visuals = utils.doc_to_visual(row)
        assert len(visuals) == len(item.images) == len(sent) - 1
    values = [utils.process_results(row, [replies[row["id"]]]) for row in rows]
    got = {m: getattr(utils, m)([v[m] for v in values]) for m in expected}
    assert got == expected


@needs_lmms
def test_tranco_lmms_eval_end_to_end(tmp_path, capsys):
    _, folder, server, _, expected = _tranco(tmp_path, capsys)
    with server:
        got = _lmms_eval(server, folder, "tvr_tranco", tmp_path)
    assert {m: got[m] for m in expected} == expected


# --- TRANCE (Basic) ---------------------------------------------------------------------------


def _trance_basic(tmp_path, capsys):
    from tvr.trance.data.files import read_samples
    from tvr.trance.vlm_task import objects_table
    from tvr.trance.world import vocab

    data = _trance_set(tmp_path, "basic")
    folder = tmp_path / "lmms"
    assert "tvr_trance_basic" in _export("trance", data, folder)
    samples = read_samples(data / "test" / "samples.jsonl")

    def reply(k, s):  # right, wrong value, unreadable, in turn
        st = s.steps[0]
        value = vocab.VALUES[st.value] if k % 3 == 0 else next(
            v for v in vocab.VALUES if v != vocab.VALUES[st.value])  # fmt: skip
        steps = [{"obj": st.obj, "value": value}]
        return "no steps here" if k % 3 == 2 else f"<answer>{json.dumps({'steps': steps})}</answer>"

    table = {objects_table(s.objects): reply(k, s) for k, s in enumerate(samples)}
    server = ChatServer(table)
    summary, replies = _trance_scripted(tmp_path, capsys, data, "basic", server)
    expected = {m: summary["metrics"][m] for m in ("ObjAcc", "AttrAcc", "ValAcc", "Acc")}
    assert 0 < expected["Acc"] < 1
    return data, folder, server, replies, expected


def test_trance_basic_process_results_equal_tvr(tmp_path, capsys):
    from tvr.trance.vlm_task import TranceTask
    from tvr.vlm.tasks import build_messages
    from tvr.vlm.templates import load_template

    data, folder, _, replies, expected = _trance_basic(tmp_path, capsys)
    utils = _utils(folder)
    rows = datasets.load_dataset(str(folder / "hf"), "basic", cache_dir=str(tmp_path / "c"))["test"]
    rows = utils.process_docs_basic(rows)
    task = TranceTask(data, setting="basic")
    sent = {it.id: build_messages(it, load_template(None, task))[0] for it in task.items()}
    assert sorted(rows["id"]) == sorted(sent)
    for row in rows:
        assert utils.doc_to_text_basic(row) == sent[row["id"]]["content"][0]["text"]
    values = [utils.process_results_basic(row, [replies.get(row["id"])]) for row in rows]
    got = {m: getattr(utils, f"{m}_basic")([v[m] for v in values]) for m in expected}
    assert got == expected


@needs_lmms
def test_trance_basic_lmms_eval_end_to_end(tmp_path, capsys):
    _, folder, server, _, expected = _trance_basic(tmp_path, capsys)
    with server:
        got = _lmms_eval(server, folder, "tvr_trance_basic", tmp_path)
    assert {m: got[m] for m in expected} == expected


# --- TRANCE (View) ----------------------------------------------------------------------------

VIEW_METRICS = ("AD", "AND", "LAcc", "Acc")


def _trance_view(tmp_path, capsys):
    """A generated View set whose odd samples lose their own `view` (so they are asked in each of
    L, C, R, as the release's are), replies by item (right, first step only, unreadable)."""
    from tvr.trance.vlm_task import TranceTask, objects_table
    from tvr.trance.world import vocab

    data = _trance_set(tmp_path, "view")
    samples_path = data / "test" / "samples.jsonl"
    lines = [json.loads(x) for x in samples_path.read_text().splitlines() if x.strip()]
    for k, line in enumerate(lines):
        if k % 2:
            line.pop("view")
    samples_path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    for cache in (data / "test").glob("samples.ref*"):
        cache.unlink()
    folder = tmp_path / "lmms"
    assert "tvr_trance_view" in _export("trance", data, folder)
    task = TranceTask(data, setting="view")
    items = task.items()
    assert len(items) == 3 * 3 + 3  # three samples at their own view, three at L, C and R
    by_sample = {s.id: s for s in task.samples}
    replies = {}
    for k, item in enumerate(items):
        s = by_sample[item.meta["sample_id"]]
        steps = [{"obj": st.obj, "value": vocab.VALUES[st.value]} for st in s.steps]
        steps = steps[:1] if k % 3 == 1 else steps
        replies[item.id] = (
            "no steps here" if k % 3 == 2 else f"<answer>{json.dumps({'steps': steps})}</answer>"
        )
    keys = {(objects_table(by_sample[it.meta["sample_id"]].objects),
             vocab.VIEW_NAMES[it.fields["final_view"]]): it.id for it in items}  # fmt: skip

    def responder(messages):
        text = "".join(p.get("text", "") for p in messages[-1]["content"] if p["type"] == "text")
        found = [i for (table, name), i in keys.items()
                 if table in text and f"final state, seen from the {name} camera" in text]  # fmt: skip
        assert len(found) == 1, found
        return replies[found[0]]

    server = ChatServer({}, responder=responder)
    summary, got_replies = _trance_scripted(tmp_path, capsys, data, "view", server)
    expected = {m: summary["metrics"][m] for m in VIEW_METRICS}
    expected |= {f"{m}_{v}": summary["by_view"][v][m] for v in vocab.VIEWS for m in VIEW_METRICS}
    assert summary["samples"] == len(items) and 0 < expected["Acc"] < 1
    assert all(summary["by_view"][v]["count"] > 0 for v in vocab.VIEWS)
    assert got_replies == replies  # the responder told the items apart
    return data, folder, server, replies, expected


def test_trance_view_process_results_equal_tvr(tmp_path, capsys):
    from PIL import Image

    from tvr.trance.vlm_task import TranceTask
    from tvr.vlm.tasks import build_messages
    from tvr.vlm.templates import load_template

    data, folder, _, replies, expected = _trance_view(tmp_path, capsys)
    utils = _utils(folder)
    rows = datasets.load_dataset(str(folder / "hf"), "view", cache_dir=str(tmp_path / "c"))["test"]
    rows = utils.process_docs_view(rows)
    task = TranceTask(data, setting="view")
    items = task.items()
    assert rows["item_id"] == [it.id for it in items]  # tvr's items, in tvr's order
    for row, item in zip(rows, items, strict=True):  # tvr's prompt, byte for byte; its images
        sent = build_messages(item, load_template(None, task))[0]
        assert utils.doc_to_text_view(row) == sent["content"][0]["text"]
        visuals = utils.doc_to_visual_view(row)
        assert [v.tobytes() for v in visuals] == [
            Image.open(p).convert("RGB").tobytes() for p in item.images
        ]
    no_images = rows.remove_columns(["init_C", "fin_L", "fin_C", "fin_R"])
    values = [utils.process_results_view(row, [replies.get(row["item_id"])]) for row in no_images]
    got = {m: getattr(utils, f"{m}_view")([v[m] for v in values]) for m in expected}
    assert got == expected


@needs_lmms
def test_trance_view_lmms_eval_end_to_end(tmp_path, capsys):
    _, folder, server, _, expected = _trance_view(tmp_path, capsys)
    with server:
        got = _lmms_eval(server, folder, "tvr_trance_view", tmp_path)
    assert {m: got[m] for m in expected} == expected
