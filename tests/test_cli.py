"""End to end: `tvr sample`, `tvr baseline`, `tvr evaluate`, `tvr stats`, `tvr convert`."""

import contextlib
import json
import subprocess
import sys

import pytest

from tvr.cli import main
from tvr.trance.data.files import read_samples
from tvr.trance.data.release import read_release


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("data")
    assert (
        main(
            [
                "sample",
                "--out",
                str(out),
                "--num",
                "60",
                "--shard-size",
                "20",
                "--workers",
                "2",
                "--quiet",
            ]
        )
        == 0
    )
    return out


def test_sample_writes_samples_config_and_balance(sample_dir):
    samples = read_samples(sample_dir / "samples.jsonl")
    assert len(samples) == 60
    config = json.loads((sample_dir / "config.json").read_text())
    assert config["num"] == 60 and config["sampler"]["tolerance"] == 0.1
    assert json.loads((sample_dir / "balance.json").read_text())["samples"] == 60


@pytest.mark.parametrize("baseline,acc", [("oracle", 1.0), ("random", None)])
def test_baseline_then_evaluate(sample_dir, tmp_path, baseline, acc, capsys):
    pred = tmp_path / "pred.jsonl"
    assert (
        main(
            [
                "baseline",
                baseline,
                "--data",
                str(sample_dir / "samples.jsonl"),
                "--out",
                str(pred),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "evaluate",
                "--data",
                str(sample_dir / "samples.jsonl"),
                "--predictions",
                str(pred),
                "--out",
                str(tmp_path / "eval"),
            ]
        )
        == 0
    )
    summary = json.loads((tmp_path / "eval" / "summary.json").read_text())
    lines = (tmp_path / "eval" / "detail.jsonl").read_text().splitlines()
    assert len(lines) == 60
    if acc is not None:
        assert summary["metrics"]["Acc"] == acc and summary["metrics"]["AD"] == 0
    else:
        assert summary["metrics"]["Acc"] < 0.1
    assert "LAcc" in capsys.readouterr().out


def test_view_and_basic_settings_end_to_end(sample_dir, tmp_path):
    # Event samples scored as View and Basic: a copy without the config.json that says "event"
    # (beside it, --setting view would be refused: tests/test_settings_from_data.py)
    bare = tmp_path / "bare" / "samples.jsonl"
    bare.parent.mkdir()
    bare.write_bytes((sample_dir / "samples.jsonl").read_bytes())
    for setting in ("view", "basic"):
        pred = tmp_path / f"{setting}.jsonl"
        main(
            [
                "baseline",
                "oracle",
                "--setting",
                setting,
                "--data",
                str(bare),
                "--out",
                str(pred),
            ]
        )
        main(
            [
                "evaluate",
                "--setting",
                setting,
                "--data",
                str(bare),
                "--predictions",
                str(pred),
                "--out",
                str(tmp_path / setting),
            ]
        )
        summary = json.loads((tmp_path / setting / "summary.json").read_text())
        assert summary["metrics"]["Acc"] == 1.0


def test_a_bad_prediction_file_gives_a_message_not_a_traceback(sample_dir, tmp_path):
    pred = tmp_path / "bad.jsonl"
    sid = read_samples(sample_dir / "samples.jsonl")[0].id
    pred.write_text(json.dumps({"id": sid, "steps": [{"obj": 12, "value": "color.red"}]}) + "\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tvr",
            "evaluate",
            "--data",
            str(sample_dir / "samples.jsonl"),
            "--predictions",
            str(pred),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert f"{pred}, line 1, field 'steps[0].obj'" in proc.stderr
    assert "Traceback" not in proc.stderr
    lenient = main(
        [
            "evaluate",
            "--lenient",
            "--data",
            str(sample_dir / "samples.jsonl"),
            "--predictions",
            str(pred),
            "--out",
            str(tmp_path / "len"),
        ]
    )
    assert lenient == 0
    summary = json.loads((tmp_path / "len" / "summary.json").read_text())
    assert summary["invalid"] == 1 and summary["missing"] == 59 and summary["metrics"]["Acc"] == 0


def test_missing_file_and_bad_options(tmp_path, capsys):
    assert main(["evaluate", "--data", str(tmp_path / "nope.jsonl"), "--predictions", "x"]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["sample", "--out", str(tmp_path), "--num", "-3"])
    assert "positive integer" in capsys.readouterr().err


def test_stats_prints_table_8(sample_dir, tmp_path, capsys):
    assert (
        main(["stats", "--data", str(sample_dir / "samples.jsonl"), "--out", str(tmp_path / "stats.json")])
        == 0
    )
    out = capsys.readouterr().out
    assert "Table 8" in out and "1-gram" in out
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["ngrams"]["1-gram"]["options"] == 33
    assert sum(stats["steps"].values()) == 60


def test_release_layout_round_trip(sample_dir, tmp_path):
    samples = read_samples(sample_dir / "samples.jsonl")
    assert (
        main(
            [
                "convert",
                "--to-release",
                str(sample_dir / "samples.jsonl"),
                "--out",
                str(tmp_path / "data.jsonl"),
            ]
        )
        == 0
    )
    first = json.loads((tmp_path / "data.jsonl").read_text().splitlines()[0])
    assert first["tvr_id"] == samples[0].id and first["tvr_seed"] == samples[0].seed
    assert first["idx"] == 0 and first["states"][0]["images"] == {
        "Camera_Center": "img_000000-init.C.png"
    }
    assert first["states"][1]["images"]["Camera_Right"] == "img_000000-fin.R.png"
    back = read_release(tmp_path / "data.jsonl")
    assert (
        main(
            [
                "convert",
                "--from-release",
                str(tmp_path / "data.jsonl"),
                "--out",
                str(tmp_path / "back.jsonl"),
            ]
        )
        == 0
    )
    assert read_samples(tmp_path / "back.jsonl") == back
    for a, b in zip(samples, back, strict=True):
        # what the release has no field for comes back too (issue 15, item 14)
        assert (b.id, b.seed, b.shard, b.index) == (a.id, a.seed, a.shard, a.index)
        assert b.order_sensitive == a.order_sensitive is not None
        assert [(s.obj, s.value, s.move_type, s.accepted) for s in a.steps] == [
            (s.obj, s.value, s.move_type, s.accepted) for s in b.steps
        ]
        assert (a.initial_array == b.initial_array).all() and (a.final_array == b.final_array).all()
        assert a.cameras == b.cameras and a.lights == b.lights
        assert [o["rotation"] for o in a.objects] == pytest.approx(
            [o["rotation"] for o in b.objects]
        )


def test_release_file_errors_are_located(tmp_path):
    bad = tmp_path / "data.jsonl"
    line = {"idx": 0, "states": [{"objects": []}, {"objects": []}], "transformations": []}
    bad.write_text(json.dumps(line) + "\n")
    with pytest.raises(Exception, match=r"line 1, field 'states\[0\].objects'"):
        read_release(bad)


def test_help_lists_every_command():
    proc = subprocess.run([sys.executable, "-m", "tvr", "--help"], capture_output=True, text=True)
    for cmd in ("demo", "sample", "stats", "baseline", "evaluate", "convert"):
        assert cmd in proc.stdout


def test_demo_main_job(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--num", "40", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "oracle baseline" in out and "random baseline" in out
    oracle = json.loads((tmp_path / "eval-oracle" / "summary.json").read_text())
    assert oracle["metrics"]["Acc"] == 1.0


def test_a_foreign_release_line_gets_an_image_id_and_a_bad_tvr_field_names_its_line(tmp_path):
    from tvr.core.errors import InputError
    from tvr.trance.data.files import read_samples as _read
    from tvr.trance.data.release import sample_to_release

    assert main(["sample", "--num", "2", "--out", str(tmp_path / "s"), "--quiet"]) == 0
    sample = _read(tmp_path / "s" / "samples.jsonl")[1]
    line = sample_to_release(sample, 7)
    foreign = {k: v for k, v in line.items() if not k.startswith("tvr_")}  # as the release has it
    (tmp_path / "foreign.jsonl").write_text(json.dumps(foreign) + "\n")
    (got,) = read_release(tmp_path / "foreign.jsonl")
    assert (got.id, got.index, got.seed, got.shard) == ("img_000007", 7, None, None)
    bad = {**line, "tvr_shard": "3"}
    (tmp_path / "bad.jsonl").write_text(json.dumps(line) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(InputError, match=r"bad.jsonl, line 2, field 'tvr_shard': expected int"):
        read_release(tmp_path / "bad.jsonl")


def _bad_outs(tmp_path):
    """(case, --out) pairs no command can write: a path under a file, an existing file (for a
    folder), a folder of /sys and of /proc (refused to root too, unlike a chmod 0o500 folder)."""
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    return {
        "under a file": a_file / "sub",
        "an existing file": a_file,
        "/sys": "/sys/tvr-test-out",
        "/proc": "/proc/tvr-test-out",
    }


@pytest.mark.parametrize("case", ["under a file", "an existing file", "/sys", "/proc"])
@pytest.mark.parametrize(
    "command",
    [
        ["sample", "--num", "5", "--quiet"],
        ["generate", "--num", "3", "--backend", "raster", "--quiet"],
        ["evaluate", "--data", "{samples}", "--predictions", "{samples}"],
        ["render", "--data", "{samples}", "--backend", "raster", "--limit", "1"],
        ["demo", "--num", "5"],
        ["baseline", "oracle", "--data", "{samples}"],
        ["convert", "--to-release", "{samples}"],
        ["report", "--data", "{dir}"],
    ],
    ids=lambda c: c[0] if isinstance(c, list) else c,
)
def test_a_bad_out_gives_one_line_naming_it(command, case, sample_dir, tmp_path, capsys):
    out = str(_bad_outs(tmp_path)[case])
    writes_a_file = command[0] in ("baseline", "convert")
    if writes_a_file and case == "an existing file":
        pytest.skip("its --out is a file: an existing one is overwritten, as meant")
    if command[0] in ("generate", "render"):
        pytest.importorskip("moderngl")
    samples = str(sample_dir / "samples.jsonl")
    argv = [a.format(samples=samples, dir=sample_dir) for a in command] + ["--out", out]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    *before, last = err.splitlines()
    assert "Traceback" not in err, err
    assert all("sampling" in line for line in before), err  # only demo's progress bar before it
    assert last.startswith(f"tvr {command[0]}: error: ") and out in last, err


def test_a_closed_stdout_ends_quietly(tmp_path):
    """`tvr ... --json | head -1` (issue 28: "tvr clevrer: error: Broken pipe")."""
    import subprocess
    import sys

    from tests.clevrer.data.samples import random_question_file

    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(random_question_file(30, seed=0)))
    answers = tmp_path / "a.json"
    assert main(["clevrer", "baseline", "--data", str(questions), "random",
                 "--out", str(answers)]) == 0  # fmt: skip
    # `true` exits at once: by the time tvr writes, nobody reads
    command = (f"{sys.executable} -m tvr clevrer evaluate --data {questions} "
               f"--predictions {answers} --json | true")  # fmt: skip
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.stderr == "" and done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["clevrer", "generate", "--num", "2", "--preset", "fast"],
        ["generate", "--setting", "event", "--split-sizes", "train=2,val=1,test=1",
         "--preset", "fast"],
        ["tranco", "testbed", "--num", "4", "--preset", "fast"],
        ["vtt", "testbed", "--num", "4", "--preset", "fast"],
        ["sample", "--num", "0"],
        ["clevrer", "generate", "--num", "2", "--split-sizes", "train=0,val=0,test=0"],
        ["tranco", "testbed", "--split-sizes", "train=0,val=1,test=1"],
    ],
    ids=lambda a: " ".join(a[:2]) + " " + a[-2],
)  # fmt: skip
def test_a_bad_setting_is_refused_before_any_work(argv, tmp_path, capsys):
    """Issue 28: `clevrer generate --preset fast` simulated every video, then failed with a
    traceback, having saved the bad value in config.json. Every job command checks its whole
    configuration first: one line, exit 2, nothing written."""
    with contextlib.suppress(SystemExit):  # argparse's own refusals exit 2 too
        assert main([*argv, "--out", str(tmp_path / "set")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "error:" in err[-1] and "Traceback" not in "\n".join(err)
    assert list(tmp_path.iterdir()) == []


def test_a_busy_port_is_said_before_anything_else(tmp_path, capsys):
    """Issue 29: `tvr serve` on a busy port printed that it started, then failed."""
    import socket

    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        assert main(["serve", "--data", str(tmp_path), "--port", str(port)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip() == (f"tvr serve: error: --port {port}: cannot listen on 127.0.0.1:{port} "
                           "(Address already in use; another server?): choose another --port")  # fmt: skip


def test_json_on_every_scoring_command(tmp_path, capsys):
    """Issue 29: `tvr evaluate` and `visualtrans score` had no --json (the other three had)."""
    from tests.visualtrans.make_data import make_visualtrans
    from tvr.core.output_lock import release_all
    from tvr.visualtrans.data.dataset import load_dataset

    assert main(["demo", "--out", str(tmp_path / "d"), "--num", "8", "--workers", "1"]) == 0
    release_all()
    capsys.readouterr()
    assert main(["evaluate", "--data", str(tmp_path / "d" / "samples" / "samples.jsonl"),
                 "--predictions", str(tmp_path / "d" / "predictions-oracle.jsonl"),
                 "--json"]) == 0  # fmt: skip
    summary = json.loads(capsys.readouterr().out)
    assert summary["predictions_file"].endswith("predictions-oracle.jsonl")
    data, _, _ = make_visualtrans(tmp_path / "vt")
    replies = tmp_path / "replies.jsonl"
    replies.write_text("".join(json.dumps({"id": it.id, "reply": "<answer>A</answer>",
                                           "error": None}) + "\n"
                               for it in load_dataset(data).items))  # fmt: skip
    assert main(["visualtrans", "evaluate", "--data", str(data), "--predictions", str(replies),
                 "--out", str(tmp_path / "score"), "--json"]) == 0  # fmt: skip
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((tmp_path / "score" / "summary.json").read_text())
