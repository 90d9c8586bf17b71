"""Output a reader cannot misread (issue 42): torn lines, lenient notes, Table 8 rows, EO."""

from __future__ import annotations

import json

from tvr.cli import main


def _demo(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path / "d"), "--num", "12", "--workers", "1"]) == 0
    capsys.readouterr()
    return tmp_path / "d" / "samples" / "samples.jsonl", tmp_path / "d" / "predictions-oracle.jsonl"


def _tear(pred, line_no: int, keep: int):
    lines = pred.read_text(encoding="utf-8").splitlines()
    lines[line_no - 1] = lines[line_no - 1][:keep]
    pred.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_torn_line_names_the_column_where_it_ends(tmp_path, capsys):
    samples, pred = _demo(tmp_path, capsys)
    _tear(pred, 3, 30)
    assert main(["evaluate", "--data", str(samples), "--predictions", str(pred)]) == 2
    err = capsys.readouterr().err
    assert f"{pred}, line 3: not valid JSON (unexpected end of data, column 31)" in err, err


def test_a_torn_vtt_record_names_its_column(tmp_path, capsys):
    records = tmp_path / "vtt.jsonl"
    records.write_text('{"id": "a", "youtube_id": "v"\n', encoding="utf-8")
    assert main(["vtt", "stats", "--data", str(records)]) == 2
    err = capsys.readouterr().err
    assert "line 1: not valid JSON (unexpected end of data, column 30)" in err, err


def test_lenient_says_a_torn_line_once(tmp_path, capsys):
    samples, pred = _demo(tmp_path, capsys)
    _tear(pred, 3, 30)
    assert main(["evaluate", "--data", str(samples), "--predictions", str(pred), "--lenient"]) == 0
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if line.startswith("note:")]
    assert len(notes) == 2, notes  # the samples without a prediction, the bad lines: each once
    assert "1 sample(s) had no readable prediction" in notes[0]
    assert "1 bad prediction line(s) skipped" in notes[1]
    assert "1 of them named no sample" in notes[1]  # the same sample, not a second one


def test_table8_rows_are_labelled_when_piped(tmp_path, capsys):
    samples, _ = _demo(tmp_path, capsys)
    assert main(["stats", "--data", str(samples)]) == 0
    out = capsys.readouterr().out
    table = out[out.index("n-gram atomic transformations"):]
    rows = [line for line in table.splitlines() if line.startswith("│")]
    labels = [row.split("│")[1].strip() for row in rows]
    assert labels and all(labels), rows  # no unlabelled (paper) row
    assert "options (paper)" in labels and "mean (paper)" in labels


def test_the_eo_column_says_where_it_exists(tmp_path, capsys):
    samples, pred = _demo(tmp_path, capsys)
    assert main(["evaluate", "--data", str(samples), "--predictions", str(pred)]) == 0
    out = capsys.readouterr().out
    assert "EO = (LAcc - Acc) / LAcc exists on the order-sensitive samples only" in out
    json.loads(json.dumps(out))  # plain text
