"""Learning curves of any run: metrics.csv read with located errors, the plot, the tables, `tvr curves`."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from PIL import Image

from tvr.cli import main
from tvr.core.errors import InputError, UserError
from tvr.results import curves, figures
from tvr.results.curves import Monitor, choose_metrics, load_run, load_runs, write_curves

# what fit_run writes: epoch from 0, bookkeeping columns, then the logged metrics (sorted)
TRANCO_CSV = """epoch,step,lr,batches,train/loss,val/emr,val/loss
0,4,0.001,4,2.5,0.10,2.2
1,8,0.001,4,1.75,0.30,1.9
2,12,0.0005,4,1.25,0.25,1.7
"""
# a VTT-like run: a validation every other epoch leaves empty cells
VTT_CSV = """epoch,step,lr,batches,train/loss,val/cider,val/loss
0,2,0.0,2,4.5,,
1,4,0.0005,2,3.5,12.5,3.25
2,6,0.001,2,3.0,,
3,8,0.001,2,2.75,20.0,2.5
"""


def _run(root: Path, name: str, text: str, config: dict | None = None) -> Path:
    run = root / name
    run.mkdir(parents=True)
    (run / "metrics.csv").write_text(text)
    (run / "config.json").write_text(json.dumps(config or {"model": name, "epochs": 4}))
    return run


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    tranco = _run(tmp_path, "tranco-run", TRANCO_CSV, {"epochs": 3, "monitor": "val/emr"})
    vtt = _run(tmp_path, "vtt-run", VTT_CSV)
    return tranco, vtt


def test_a_run_reads_as_numbers_per_epoch_counted_from_one_with_empty_cells_left_out(two_runs):
    tranco, vtt = (load_run(None, r) for r in two_runs)
    assert tranco.label == "tranco-run" and tranco.metrics_csv == two_runs[0] / "metrics.csv"
    assert tranco.series("val/emr") == [(1, 0.10), (2, 0.30), (3, 0.25)]
    assert tranco.series("train/loss") == [(1, 2.5), (2, 1.75), (3, 1.25)]
    assert vtt.series("val/cider") == [(2, 12.5), (4, 20.0)]
    assert "val/cider" not in vtt.rows[0] and vtt.rows[0]["train/loss"] == 4.5
    # the config names the monitored metric (max by default): the best epoch is the second
    assert tranco.monitor == Monitor("val/emr", "max") and tranco.best() == (2, 0.30)
    assert vtt.monitor is None and vtt.best() is None
    # a metrics.csv path reads as its folder does; the caller's monitor wins over the config
    direct = load_run("t", two_runs[0] / "metrics.csv", Monitor.named("val/loss"))
    assert direct.rows == tranco.rows and direct.monitor == Monitor("val/loss", "min")
    assert direct.best() == (3, 1.7)


def test_the_best_epoch_is_the_first_of_equals_and_never_nan(tmp_path):
    text = "epoch,val/acc,val/loss\n0,0.5,nan\n1,0.7,0.4\n2,0.7,0.4\n3,nan,0.6\n"
    run = _run(tmp_path, "r", text, {"monitor": "val/acc", "mode": "max"})
    assert load_run(None, run).best() == (2, 0.7)
    assert load_run(None, run, Monitor.named("val/loss")).best() == (2, 0.4)
    assert load_run(None, run, Monitor("val/loss", "max")).best() == (4, 0.6)
    assert load_run(None, run, Monitor("val/other")).best() is None


def test_default_metrics_put_train_loss_first_and_leave_bookkeeping_out(two_runs):
    runs = load_runs([str(r) for r in two_runs])
    assert choose_metrics(runs) == ["train/loss", "val/emr", "val/loss", "val/cider"]
    assert choose_metrics(runs, ["val/cider", "lr"]) == ["val/cider", "lr"]
    with pytest.raises(UserError, match=r"no run has the metric 'val/acc'; available: epoch, "):
        choose_metrics(runs, ["val/acc"])


def _lines(fig) -> dict[str, list[tuple[list[float], list[float]]]]:
    """(x, y) of every run's line (not the markers of best epochs), per panel title."""
    out = {}
    for ax in fig.axes:
        if ax.get_visible():
            out[ax.get_title()] = [
                (list(line.get_xdata()), list(line.get_ydata()))
                for line in ax.get_lines()
                if line.get_marker() == "."
            ]
    return out


def test_write_curves_draws_and_tables_every_metric_side_by_side(two_runs, tmp_path, monkeypatch):
    drawn = []
    save = figures.save_figure
    monkeypatch.setattr(
        figures, "save_figure", lambda fig, path: drawn.append(fig) or save(fig, path)
    )
    out = tmp_path / "out"
    report = write_curves(["T=" + str(two_runs[0]), str(two_runs[1])], out)
    assert report.metrics == ["train/loss", "val/emr", "val/loss", "val/cider"]
    assert sorted(p.name for p in report.files) == [
        "curves.csv", "curves.json", "curves.md", "curves.png"
    ]  # fmt: skip
    with Image.open(out / "curves.png") as image:
        image.verify()
    with Image.open(out / "curves.png") as image:
        assert image.format == "PNG"
        width, height = image.size
    assert 900 <= width <= 2000 and 500 <= height <= 1500  # 3 columns, 2 rows of panels
    assert not list(out.glob(".*"))  # no temporary file left
    lines = _lines(drawn[0])
    assert lines["val/emr"] == [([1, 2, 3], [0.10, 0.30, 0.25])]
    assert lines["val/cider"] == [([2, 4], [12.5, 20.0])]
    assert lines["train/loss"] == [
        ([1, 2, 3], [2.5, 1.75, 1.25]),
        ([1, 2, 3, 4], [4.5, 3.5, 3.0, 2.75]),
    ]
    # the monitored run's best epoch: a star on its metric, a dotted line where it has values
    emr = next(ax for ax in drawn[0].axes if ax.get_title() == "val/emr")
    stars = [ln for ln in emr.get_lines() if ln.get_marker() == "*"]
    assert [(list(s.get_xdata()), list(s.get_ydata())) for s in stars] == [([2], [0.30])]
    dotted = [list(ln.get_xdata()) for ln in emr.get_lines() if ln.get_linestyle() == ":"]
    assert dotted == [[2, 2]]  # a vertical line at T's best epoch
    cider = next(ax for ax in drawn[0].axes if ax.get_title() == "val/cider")
    assert len(cider.get_lines()) == 1  # T has no val/cider: no line, no marker there
    legend = [t.get_text() for t in drawn[0].legends[0].get_texts()]
    assert legend == ["T (best val/emr 0.3 at epoch 2)", "vtt-run"]

    md = (out / "curves.md").read_text()
    assert "| T | " in md and "| val/emr (max) | 2 | 0.3 |" in md
    assert "### val/cider\n\n| epoch | T | vtt-run |" in md
    assert "| 2 | - | 12.5 |" in md and "| 4 | - | 20 |" in md
    assert "Best epoch (the run's monitored metric): T 0.3 at epoch 2." in md
    with (out / "curves.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["epoch"] for r in rows] == ["1", "2", "3", "4"]
    assert [r["T: val/emr"] for r in rows] == ["0.1", "0.3", "0.25", ""]
    assert [r["vtt-run: val/loss"] for r in rows] == ["", "3.25", "", "2.5"]
    saved = json.loads((out / "curves.json").read_text())
    assert saved["runs"][0] | {"metrics_csv": None} == {
        "label": "T", "metrics_csv": None, "epochs": 3, "monitor": "val/emr", "mode": "max",
        "best_epoch": 2, "best_value": 0.3,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("", "metrics.csv, line 1: empty"),
        ("step,train/loss\n1,2.0\n", "line 1, field 'epoch': no such column"),
        ("epoch,val/acc\n0,0.5\n1,high\n", "line 3, field 'val/acc': not a number: 'high'"),
        ("epoch,val/acc\n0,0.5\n1\n", "line 3: 1 cells, the header has 2"),
        (
            "epoch,val/acc\n0,0.5\n0,0.6\n",
            "line 3, field 'epoch': epoch 0 appears twice (also line 2)",
        ),
        ("epoch,val/acc\n0.5,0.5\n", "line 2, field 'epoch': expected the epoch as a whole number"),
        ("epoch,val/acc,val/acc\n0,1,2\n", "line 1, field 'val/acc': the column appears twice"),
        ("epoch,val/acc\n", "metrics.csv: no epoch rows"),
    ],
)
def test_a_malformed_metrics_csv_names_its_file_line_and_column(tmp_path, text, where):
    run = _run(tmp_path, "r", text)
    with pytest.raises(InputError) as err:
        load_run(None, run)
    assert str(err.value).startswith(str(run / "metrics.csv")) and where in str(err.value)
    assert "\n" not in str(err.value)


def test_the_shared_reader_keeps_the_trance_plot_import(tmp_path):
    from tvr.trance.results import plots

    run = _run(tmp_path, "r", VTT_CSV)
    assert plots.read_metrics_csv is curves.read_metrics_csv
    rows = plots.read_metrics_csv(run / "metrics.csv")
    assert [r["epoch"] for r in rows] == [0, 1, 2, 3] and rows[1]["val/cider"] == 12.5


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["curves", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_tvr_curves_writes_the_plot_and_tables(two_runs, tmp_path, capsys):
    out = tmp_path / "out"
    code, stdout, _ = _cli(
        capsys, f"a={two_runs[0]}", f"b={two_runs[1] / 'metrics.csv'}", "--out", str(out),
        "--metric", "val/loss", "--monitor", "val/loss",
    )  # fmt: skip
    assert code == 0
    assert "a: 3 epochs, best val/loss at epoch 3" in stdout
    assert "b: 4 epochs, best val/loss at epoch 4" in stdout and "metrics: val/loss" in stdout
    md = (out / "curves.md").read_text()
    assert "| a | " in md and "| val/loss (min) | 3 | 1.7 |" in md and "### train/loss" not in md
    assert (out / "curves.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--metric", "val/acc"], "no run has the metric 'val/acc'; available: epoch, step, lr"),
        (["--mode", "min"], "--mode goes with --monitor"),
        (["{missing}"], "no such run folder or metrics.csv"),
        (["{empty}"], "no metrics.csv in this folder"),
        (["{bad}"], "metrics.csv, line 3, field 'val/acc': not a number: 'x'"),
        (["same={run}", "same={run}"], "two runs are labelled 'same'"),
    ],
)
def test_tvr_curves_errors_are_one_line_and_exit_2(two_runs, tmp_path, capsys, argv, message):
    paths = {
        "run": two_runs[0], "missing": tmp_path / "nope", "empty": tmp_path / "empty",
        "bad": _run(tmp_path, "bad", "epoch,val/acc\n0,1\n1,x\n"),
    }  # fmt: skip
    (tmp_path / "empty").mkdir()
    argv = [a.format(**paths) for a in argv]
    runs = [] if argv[0].startswith("--") else argv
    options = argv if argv[0].startswith("--") else []
    out = tmp_path / "out"
    code, _, err = _cli(capsys, *(runs or [str(two_runs[0])]), "--out", str(out), *options)
    assert code == 2 and err.startswith("tvr curves: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()  # nothing written before the inputs were checked


def test_tvr_help_lists_curves_without_importing_matplotlib_or_torch():
    import subprocess
    import sys

    code = (
        "import sys; from tvr.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('torch', 'matplotlib') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "curves" in done.stdout and done.stdout.strip().endswith("[]")


def test_an_out_that_is_a_file_gives_one_line_naming_it(two_runs, tmp_path, capsys):
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    code, _, err = _cli(capsys, str(two_runs[0]), "--out", str(a_file))
    assert (
        code == 2
        and err
        == f"tvr curves: error: --out {a_file}: cannot create the folder "
        "(a file of that name exists)\n"
    )
