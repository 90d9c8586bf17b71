"""`tvr vlm report`: scripted runs of all five benchmarks end to end (run -> export -> evaluate
--out -> report), the leaderboard's numbers equal to each summary.json, the paper's rows beside
them, and the parse failures of a run with garbled replies."""

from __future__ import annotations

import csv
import json

import pytest

pytest.importorskip("httpx")
pytest.importorskip("PIL")
pytest.importorskip("matplotlib")

from tests.vlm.scripted_runs import (
    clevrer_run,
    has_clevrer_video,
    has_vtt_metrics,
    trance_run,
    tranco_run,
    visualtrans_runs,
    vtt_run,
)
from tvr.clevrer import paper as clevrer_paper
from tvr.clevrer import results as clevrer_results
from tvr.cli import main
from tvr.trance import paper as trance_paper
from tvr.visualtrans import paper as visualtrans_paper


def summary(folder):
    return json.loads((folder / "summary.json").read_text())


def test_one_leaderboard_of_scripted_runs(tmp_path, capsys):
    vt = visualtrans_runs(tmp_path)
    trance_eval = trance_run(tmp_path)
    tranco_eval, tranco_items = tranco_run(tmp_path)
    runs = [f"right={vt['vt-right']}", f"garbled={vt['vt-garbled']}", f"trance={trance_eval}",
            f"tranco={tranco_eval}"]  # fmt: skip
    vtt_eval = vtt_run(tmp_path) if has_vtt_metrics() else None
    if vtt_eval is not None:
        runs.append(f"vtt={vtt_eval}")
    clevrer = clevrer_run(tmp_path) if has_clevrer_video() else None
    if clevrer is not None:
        runs.append(f"clevrer={clevrer.evaluation}")
    capsys.readouterr()
    out = tmp_path / "board"
    assert main(["vlm", "report", *runs, "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    board = json.loads((out / "leaderboard.json").read_text())
    assert printed == board
    assert {p.name for p in out.iterdir() if not p.name.startswith(".")} == {
        "leaderboard.md", "leaderboard.csv", "leaderboard.json", "leaderboard.png"}
    assert (out / "leaderboard.png").read_bytes().startswith(b"\x89PNG")
    by_label = {r["label"]: r for r in board["runs"]}
    for run in board["runs"]:  # a run's metrics are named as its benchmark's columns
        assert set(run["metrics"]) <= set(board["benchmarks"][run["benchmark"]]["metrics"])

    # VisualTrans: Table 2's columns in percent, equal to summary.json; the garbled run's
    # replies are all counted as unreadable, none guessed
    right, garbled = summary(vt["vt-right"]), summary(vt["vt-garbled"])
    r = by_label["right"]
    assert r["model"] == "vt-right" and r["benchmark"] == "VisualTrans"
    assert r["metrics"]["Overall"] == pytest.approx(100 * right["overall"]["accuracy"])
    assert r["metrics"]["Count"] == pytest.approx(100 * right["subtasks"]["count"]["accuracy"])
    assert r["metrics"]["Spatial"] == right["dimensions"]["spatial"]["table2_pct"]
    assert (r["items"], r["unparsed"], r["parse_failure_rate"]) == (11, 0, 0.0)
    g = by_label["garbled"]
    assert g["model"] == "vt-garbled" and g["metrics"]["Overall"] == 0.0
    assert g["items"] == g["unparsed"] == garbled["status_counts"]["no_answer"] == 11
    assert g["parse_failure_rate"] == 1.0 and g["without_reply"] == 0
    first = board["benchmarks"]["VisualTrans"]["paper"]["rows"][0]
    assert first == {"model": "o3", "setting": by_label["right"]["setting"],
                     "metrics": visualtrans_paper.table2_row("o3")}  # fmt: skip

    # TRANCE: Table 3's Event columns, one garbled reply of three
    t = by_label["trance"]
    assert t["model"] == "trance-model" and t["setting"] == "event"
    assert t["metrics"] == summary(trance_eval)["metrics"]
    assert (t["items"], t["unparsed"], t["without_reply"]) == (3, 1, 0)
    assert t["parse_failure_rate"] == pytest.approx(1 / 3)
    paper_rows = {p["model"]: p["metrics"] for p in board["benchmarks"]["TRANCE"]["paper"]["rows"]}
    assert paper_rows["human"] == trance_paper.TABLE3["human"]["event"]

    # TRANCO: Table 6's columns under the paper's convention, beside Table 6's tiny rows
    c = by_label["tranco"]
    s = summary(tranco_eval)
    assert c["model"] == "tranco-model" and c["setting"] == s["setting"]
    assert c["metrics"] == s["conventions"][s["published"]["convention"]]["metrics"]
    assert (c["items"], c["unparsed"]) == (tranco_items, 1)
    assert next(p["model"] for p in board["benchmarks"]["TRANCO"]["paper"]["rows"]) == "Random"

    if vtt_eval is not None:
        v = by_label["vtt"]
        assert v["model"] == "vtt-model" and (v["items"], v["unparsed"]) == (3, 1)
        assert v["metrics"]["CIDEr"] == summary(vtt_eval)["metrics"]["CIDEr"]

    if clevrer is not None:
        # CLEVRER: Tables 2-3's columns (percent) equal to summary.json; the two garbled replies
        # are counted as unreadable (their questions left out of the answer file, scored wrong),
        # the readable wrong answer is not a parse failure
        e = by_label["clevrer"]
        s = summary(clevrer.evaluation)
        assert e["model"] == "clevrer-model" and e["benchmark"] == "CLEVRER"
        assert e["setting"] == "test"
        assert e["metrics"] == clevrer_results.accuracies(s)
        assert e["metrics"]["descriptive"] == pytest.approx(100 * s["score"]["descriptive"]["accuracy"])
        assert 0 < e["metrics"]["descriptive"] < 100
        assert (e["items"], e["unparsed"], e["without_reply"]) == (clevrer.questions, 2, 0)
        assert e["parse_failure_rate"] == pytest.approx(2 / clevrer.questions)
        assert s["score"]["missing"]["questions"] == 2  # the garbled ones: unanswered, wrong
        assert e["predictions"] == str(clevrer.answers.resolve())
        record = json.loads(clevrer.answers.with_name("clevrer_answers.export.json").read_text())
        assert record["results"] == e["results"] and record["task"] == "clevrer"
        unparsed = [json.loads(x)["id"] for x in
                    clevrer.answers.with_name("clevrer_answers.unparsed.jsonl").read_text().splitlines()]  # fmt: skip
        assert sorted(unparsed) == clevrer.garbled
        paper = board["benchmarks"]["CLEVRER"]["paper"]["rows"]
        assert [p["model"] for p in paper] == ["CNN+LSTM", "MAC (V+)", "NS-DR", "VRDP"]
        columns = board["benchmarks"]["CLEVRER"]["metrics"]
        assert list(paper[2]["metrics"].values()) == list(clevrer_paper.published("NS-DR").values)
        assert list(paper[2]["metrics"]) == list(e["metrics"]) == columns
        assert all(v is not None for v in e["metrics"].values())  # every column shown

    # the Markdown and the CSV hold the same numbers, the paper's rows beside the runs
    md = (out / "leaderboard.md").read_text()
    assert "| garbled | vt-garbled | VisualTrans |" in md and "11/11 (100.0%)" in md
    assert "1/3 (33.3%)" in md and "## TRANCE" in md and "| paper | human | event |" in md
    rows = list(csv.DictReader((out / "leaderboard.csv").open()))
    trance_row = next(x for x in rows if x["run"] == "trance")
    assert float(trance_row["TRANCE Acc"]) == pytest.approx(t["metrics"]["Acc"])
    assert float(trance_row["parse_failure_rate"]) == pytest.approx(1 / 3)
    assert any(x["kind"] == "paper" and x["model"] == "o3" for x in rows)
    # all of VisualTrans's Table 2, the "-" of a model without Interm. left empty
    vt_paper = [x for x in rows if x["kind"] == "paper" and x["benchmark"] == "VisualTrans"]
    assert [x["model"] for x in vt_paper] == list(visualtrans_paper.TABLE2)
    assert next(x for x in vt_paper if x["model"] == "Qwen2.5-VL-7B")["VisualTrans Interm."] == ""
    if clevrer is not None:
        assert "## CLEVRER" in md and f"2/{clevrer.questions} (" in md
        assert "| paper | NS-DR | test |" in md
        clevrer_row = next(x for x in rows if x["run"] == "clevrer")
        assert float(clevrer_row["CLEVRER descriptive"]) == pytest.approx(e["metrics"]["descriptive"])
        assert int(clevrer_row["unparsed"]) == 2


def test_a_folder_that_is_not_an_evaluation_is_refused(tmp_path, capsys):
    (tmp_path / "x").mkdir()
    assert main(["vlm", "report", str(tmp_path / "x"), "--out", str(tmp_path / "o")]) == 2
    assert "no summary.json and .tvr-inputs.json" in capsys.readouterr().err


# --- runs of different data, settings, labels (issues 38 point 9, 42 point 6) ------------------
def _trance_eval(tmp_path, name, n, setting="event", label=None):
    """A TRANCE evaluation of n tiny samples with the reference steps as predictions."""
    from tests.vlm.make_trance import make_trance
    from tvr.trance.world import vocab

    data, _, samples = make_trance(tmp_path / f"data-{name}", n=n)
    preds = tmp_path / f"pred-{name}.jsonl"
    preds.write_text("".join(json.dumps({
        "id": s.id, **({"view": "L"} if setting == "view" else {}),
        "steps": [{"obj": st.obj, "value": vocab.VALUES[st.value]} for st in s.steps]}) + "\n"
        for s in samples))  # fmt: skip
    out = tmp_path / f"eval-{name}"
    assert main(["evaluate", "--data", str(data), "--predictions", str(preds), "--setting",
                 setting, "--out", str(out)]) == 0  # fmt: skip
    return f"{label or name}={out}"


def test_runs_of_different_data_are_marked_not_ranked_silently(tmp_path, capsys):
    runs = [_trance_eval(tmp_path, "big", 3), _trance_eval(tmp_path, "small", 2),
            f"again={tmp_path / 'eval-big'}"]  # fmt: skip
    capsys.readouterr()
    out = tmp_path / "board"
    assert main(["vlm", "report", *runs, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    board = json.loads((out / "leaderboard.json").read_text())
    groups = {r["label"]: r["data_group"] for r in board["runs"]}
    assert groups == {"big": "A", "small": "B", "again": "A"}
    assert board["runs"][0]["data"] == str((tmp_path / "data-big" / "samples.jsonl").resolve())
    md = (out / "leaderboard.md").read_text()
    for text in (md, printed):  # the overview (the terminal's) and the file
        assert "| run | model | benchmark | data | setting |" in text
        assert "compare only runs of one letter" in text
        assert f"- data B: {(tmp_path / 'data-small' / 'samples.jsonl').resolve()}" in text
    section = md.split("## TRANCE", 1)[1]
    # runs of one data side by side: big, again (A), then small (B)
    assert [line.split(" | ")[0] for line in section.splitlines() if line.startswith("| ")][1:4] \
        == ["| big", "| again", "| small"]  # fmt: skip
    rows = list(csv.DictReader((out / "leaderboard.csv").open()))
    assert [x["data"] for x in rows if x["kind"] == "run"] == ["A", "A", "B"]


def test_runs_of_one_data_have_no_data_column(tmp_path, capsys):
    runs = [_trance_eval(tmp_path, "x", 2), f"y={tmp_path / 'eval-x'}"]
    capsys.readouterr()
    assert main(["vlm", "report", *runs, "--out", str(tmp_path / "board")]) == 0
    printed = capsys.readouterr().out
    assert "| run | model | benchmark | setting |" in printed
    assert "| data |" not in printed and "one letter" not in printed


def test_the_paper_rows_follow_each_runs_setting(tmp_path, capsys):
    runs = [_trance_eval(tmp_path, "ev", 2), _trance_eval(tmp_path, "vw", 2, setting="view")]
    out = tmp_path / "board"
    assert main(["vlm", "report", *runs, "--out", str(out)]) == 0
    board = json.loads((out / "leaderboard.json").read_text())
    paper = board["benchmarks"]["TRANCE"]["paper"]
    human = {p["setting"]: p["metrics"] for p in paper["rows"] if p["model"] == "human"}
    assert human == {s: trance_paper.TABLE3["human"][s] for s in ("event", "view")}
    assert "Table 3 (view)" in paper["source"] and "Table 3 (event)" in paper["source"]
    md = (out / "leaderboard.md").read_text()
    assert "| paper | human | - | view |" in md and "| paper | human | - | event |" in md


def test_control_characters_in_labels_are_escaped(tmp_path, capsys):
    label = "evil\x1b[2J\x1b]0;owned\x07\nrow|two\u202e"
    runs = [_trance_eval(tmp_path, "e", 2, label=label)]
    capsys.readouterr()
    out = tmp_path / "board"
    assert main(["vlm", "report", *runs, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    md = (out / "leaderboard.md").read_text()
    escaped = r"evil\x1b[2J\x1b]0;owned\x07\nrow\|two\u202e"
    for text in (md, printed):
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
        assert f"| {escaped} | - | TRANCE | event |" in text
    # the data files keep the label as given
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["runs"][0]["label"] == label


def test_runs_of_the_same_file_but_another_number_of_items_are_marked(tmp_path, capsys):
    from tvr.vlm.export import export_record_path

    first = _trance_eval(tmp_path, "all", 3)
    preds = tmp_path / "pred-all.jsonl"
    part = tmp_path / "pred-part.jsonl"
    part.write_text(preds.read_text().splitlines(keepends=True)[0])
    for p, items in ((preds, 600), (part, 20)):  # as `tvr vlm export` records them
        export_record_path(p).write_text(json.dumps({"items": items, "unparsed": 0,
                                                     "without_reply": 0}))  # fmt: skip
    second = tmp_path / "eval-part"
    assert main(["evaluate", "--data", str(tmp_path / "data-all" / "samples.jsonl"),
                 "--predictions", str(part), "--setting", "event", "--out", str(second)]) == 0
    assert main(["vlm", "report", first, f"part={second}", "--out", str(tmp_path / "b")]) == 0
    board = json.loads((tmp_path / "b" / "leaderboard.json").read_text())
    assert [(r["items"], r["data_group"]) for r in board["runs"]] == [(600, "A"), (20, "B")]
    assert "(setting event, split test, 20 items)" in capsys.readouterr().out
