"""`tvr clevrer report`: counts, balance, timelines, frames and GIFs of a set."""

from __future__ import annotations

import json

from PIL import Image

from tvr.cli import main


def test_report_of_a_rendered_set(rendered_set, tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["clevrer", "report", "--data", str(rendered_set), "--out", str(out),
                 "--videos", "2"]) == 0  # fmt: skip
    stats = json.loads((out / "stats.json").read_text())
    q = stats["questions"]
    assert q["videos"] == 3 and q["questions"] == sum(t["count"] for t in q["types"].values())
    assert set(q["descriptive_answers"]) <= {"count", "exist", "query_color", "query_shape",
                                             "query_material"}  # fmt: skip
    events = stats["events"]["per_video"]
    assert set(map(int, events)) == {0, 1, 2}
    assert all(v["collision"] >= 1 for v in events.values())
    text = (out / "report.md").read_text()
    assert "| descriptive |" in text and "video_00001" in text and "video_00002" not in text
    for name in ("question_types.png", "answer_balance.png", "timelines/video_00000.png",
                 "frames/video_00000.png", "frames/video_00001.gif"):  # fmt: skip
        with Image.open(out / name) as im:
            assert im.width > 100
    with Image.open(out / "frames" / "video_00000.gif") as gif:
        assert gif.n_frames == 64


def test_report_of_a_folder_without_clevrer_files(tmp_path, capsys):
    assert main(["clevrer", "report", "--data", str(tmp_path), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "no CLEVRER question files" in err and "Traceback" not in err
