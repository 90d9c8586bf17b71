"""`tvr results`: tables and plots of baseline predictions, fake runs and one real tiny run."""

import json
import os

import pytest

from tvr.cli import main
from tvr.core.errors import UserError
from tvr.core.jsonl import write_jsonl
from tvr.trance import paper as paper
from tvr.trance.data.files import write_samples
from tvr.trance.eval.baselines import predict
from tvr.trance.eval.evaluate import evaluate_files
from tvr.trance.results.make import (
    ResultsOptions,
    canonical_model,
    display_name,
    make_results,
)
from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler
from tvr.trance.train.config import TrainConfig

N = 60
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Samples of the real sampler for each setting and the three baselines' predictions."""
    root = tmp_path_factory.mktemp("results-data")
    out = {}
    for i, setting in enumerate(("basic", "event", "view")):
        steps = 1 if setting == "basic" else 4
        sampler = ShardSampler(SamplerConfig(max_steps=steps, occlusion=False), seed=i, shard=0)
        samples = [sampler.sample(k) for k in range(N)]
        write_samples(root / f"{setting}.jsonl", samples)
        out[setting] = root / f"{setting}.jsonl"
        for name in ("oracle", "reversed", "random"):
            path = root / f"{setting}-{name}.jsonl"
            write_jsonl(path, predict(name, samples, setting, seed=1))
            out[setting, name] = path
    return out


def _samples_args(data):
    return [a for s in ("basic", "event", "view") for a in ("--data", f"{s}={data[s]}")]


def _rows(path):
    return {r["Model"]: r for r in json.loads(path.read_text())["rows"]}


def _summary(data, setting, name):
    return evaluate_files(data[setting], data[setting, name], setting)


def test_baseline_tables_carry_the_evaluator_numbers(tmp_path, data, capsys):
    out = tmp_path / "out"
    runs = [f"{label}={data[s, name]}" for s in ("basic", "event", "view")
            for label, name in (("Oracle", "oracle"), ("Reversed", "reversed"), ("Random", "random"))]  # fmt: skip
    assert main(["results", *runs, *_samples_args(data), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| Model | Basic ObjAcc |" in printed and "| Oracle | 1.0000 |" in printed

    t3 = _rows(out / "table3.json")
    for label, name in (("Oracle", "oracle"), ("Reversed", "reversed"), ("Random", "random")):
        row = t3[label]
        assert row["source"] == "ours"
        for setting, cols in (("basic", paper.BASIC_COLUMNS), ("event", paper.SEQUENCE_COLUMNS),
                              ("view", paper.SEQUENCE_COLUMNS)):  # fmt: skip
            m = _summary(data, setting, name)["metrics"]
            for c in cols:
                assert row[f"{setting.capitalize()} {c}"] == pytest.approx(m[c]), (label, c)
        assert row["ΔAcc"] == pytest.approx(row["View Acc"] - row["Event Acc"])
    assert t3["Oracle"]["Event Acc"] == 1.0 and t3["Oracle"]["Basic Acc"] == 1.0
    assert t3["Oracle"]["ΔAcc"] == 0.0
    assert t3["Random"]["Event Acc"] < 0.2 and t3["Random"]["Event AD"] > 1.0
    assert t3["Random"]["Basic Acc"] < 0.2
    # reversed: loose correct everywhere, wrong exactly where the order matters
    assert t3["Reversed"]["Event LAcc"] == 1.0 and t3["Reversed"]["Event Acc"] < 1.0
    assert t3["Reversed"]["ΔAcc"] != 0.0

    # the paper's rows: Table 3 as published, next to nothing of ours (no model labels here)
    cnn = t3["CNN₋-G (paper)"]
    assert cnn["source"] == "paper" and cnn["Event Acc"] == 0.4419 and cnn["View AD"] == 2.2649
    assert cnn["ΔAcc"] == -0.2119 and t3["ResNet⊕-T (paper)"]["Basic Acc"] is None
    assert t3["Human (paper)"]["View Acc"] == 0.8433
    for model in paper.TABLE3:  # the printed ΔAcc agrees with the printed Acc columns, to the
        r = t3[f"{display_name(model)} (paper)"]  # rounding (ResNet⊕-G: -0.0507 vs -0.0506)
        assert r["ΔAcc"] == pytest.approx(r["View Acc"] - r["Event Acc"], abs=1.5e-4)

    t5 = _rows(out / "table5.json")
    for label, name in (("Oracle", "oracle"), ("Reversed", "reversed")):
        o = _summary(data, "event", name)["order_sensitive"]
        assert t5[label]["Samples"] == o["count"] > 0
        assert (t5[label]["LAcc"], t5[label]["Acc"], t5[label]["EO"]) == (
            o["LAcc"],
            o["Acc"],
            o["EO"],
        )
    assert t5["Reversed"]["EO"] == 1.0 and t5["Oracle"]["EO"] == 0.0
    assert t5["ResNet⊕-G (paper)"]["EO"] == 0.2050 and t5["ResNet⊕-G (paper)"]["Share"] == 0.062
    assert t5["Random order, avg. of 100 (paper)"]["EO"] == 0.5008

    f7 = _rows(out / "fig7.json")
    by_steps = _summary(data, "event", "reversed")["by_steps"]
    assert [f7["Reversed"][c]["Acc"] for c in ("1 step", "2 steps", "3 steps", "4 steps")] == [
        by_steps[k]["Acc"] for k in "1234"
    ]
    assert [f7["CNN₋-G (paper)"][c]["Acc"] for c in ("1 step", "2 steps", "3 steps", "4 steps")] == [
        0.92, 0.55, 0.23, 0.08
    ]  # fmt: skip
    f8 = _rows(out / "fig8.json")
    by_view = _summary(data, "view", "reversed")["by_view"]
    assert {v: f8["Reversed"][n]["Acc"] for v, n in (("C", "Center"), ("L", "Left"), ("R", "Right"))} == {
        v: by_view[v]["Acc"] for v in "CLR"
    }  # fmt: skip

    md = (out / "table3.md").read_text()
    assert "| Reversed | " in md and "(paper)" in md
    csv_head = (out / "table3.csv").read_text().splitlines()[0]
    assert csv_head.startswith("Model,Basic ObjAcc,") and csv_head.endswith(",ΔAcc")
    for png in ("fig7.png", "fig8.png"):
        blob = (out / png).read_bytes()
        assert blob.startswith(PNG_MAGIC) and len(blob) > 10_000
    assert not (out / "learning_curves.png").exists()  # no run with a metrics.csv
    assert not (out / "table4.md").exists()  # no REINFORCE run


def test_without_paper_rows(tmp_path, data):
    opts = ResultsOptions(
        runs=[str(data["event", "oracle"])], out=str(tmp_path), samples=[str(data["event"])],
        compare_paper=False, plots=False,
    )  # fmt: skip
    report = make_results(opts)
    assert report.entries[0].setting == "event"  # inferred from the samples
    assert all(r["source"] == "ours" for t in report.tables for r in t.rows)
    assert [r["Model"] for r in report.tables[0].rows] == ["event-oracle"]
    assert "(paper)" not in (tmp_path / "results.md").read_text()
    assert not (tmp_path / "fig7.png").exists()


def _fake_run(root, name, model, setting, predictions, **config):
    """A training run folder without training: a config and a predictions file."""
    run = root / name
    run.mkdir(parents=True)
    TrainConfig(model=model, setting=setting, data="store", **config).save(run / "config.json")
    (run / "predictions.jsonl").write_bytes(predictions.read_bytes())
    return run


def test_run_folders_reinforce_table_and_evaluation_folders(tmp_path, data):
    base = _fake_run(tmp_path, "base", "resnet--t", "event", data["event", "reversed"])
    ckpt = str(base / "checkpoints" / "last.ckpt")
    tuned = {
        reward: _fake_run(tmp_path, f"rl-{reward}", "resnet--t", "event", data["event", pred],
                          reinforce=True, reward=reward, init_checkpoint=ckpt)
        for reward, pred in (("corr", "oracle"), ("dist", "random"), ("both", "reversed"))
    }  # fmt: skip
    basic = _fake_run(tmp_path, "basic", "cnn+-g", "basic", data["basic", "reversed"])
    opts = ResultsOptions(
        runs=[str(base), *map(str, tuned.values()), str(basic)],
        out=str(tmp_path / "out"), samples=[f"event={data['event']}", f"basic={data['basic']}"],
    )  # fmt: skip
    make_results(opts)
    for run in (base, basic, *tuned.values()):  # evaluations cached in the runs
        assert (run / "eval" / "summary.json").is_file()
    t4 = json.loads((tmp_path / "out" / "table4.json").read_text())["rows"]
    assert [r["Model"] for r in t4] == [
        "ResNet₋-T", "ResNet₋-T (paper)", "ResNet₋-T + corr", "ResNet₋-T + corr (paper)",
        "ResNet₋-T + dist", "ResNet₋-T + dist (paper)",
        "ResNet₋-T + corr & dist", "ResNet₋-T + corr & dist (paper)",
    ]  # fmt: skip
    assert t4[2]["Acc"] == 1.0 and t4[4]["Acc"] < 0.2
    assert t4[0]["Acc"] == _summary(data, "event", "reversed")["metrics"]["Acc"]
    assert t4[7]["AD"] == 0.7681 and t4[1]["LAcc"] == 0.6865
    t3 = _rows(tmp_path / "out" / "table3.json")
    assert "ResNet₋-T + corr" not in t3  # fine-tunes are Table 4's
    assert t3["ResNet₋-T"]["Event Acc"] == t4[0]["Acc"] and t3["ResNet₋-T"]["Basic Acc"] is None
    assert t3["CNN⊕-G"]["Basic Acc"] == _summary(data, "basic", "reversed")["metrics"]["Acc"]
    labels = list(t3)
    assert labels[labels.index("CNN⊕-G") + 1] == "CNN⊕-G (paper)"  # the paper's row beside ours

    # the cache is used while the predictions are not newer, renewed when they are
    summary = base / "eval" / "summary.json"
    stamp = summary.stat().st_mtime_ns
    make_results(opts)
    assert summary.stat().st_mtime_ns == stamp
    os.utime(base / "predictions.jsonl", ns=(stamp + 10**9, stamp + 10**9))
    make_results(opts)
    assert summary.stat().st_mtime_ns != stamp
    # ... and when other samples are asked for
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(data["event"].read_bytes())
    opts.samples = [f"event={copy}", f"basic={data['basic']}"]
    make_results(opts)
    assert json.loads((base / "eval" / "summary.json").read_text())["samples_file"] == str(copy)

    # an evaluation folder of `tvr evaluate` on a run's predictions takes the run's model name
    ev = tmp_path / "ev"
    assert main(["evaluate", "--data", str(data["event"]), "--predictions",
                 str(base / "predictions.jsonl"), "--out", str(ev)]) == 0  # fmt: skip
    report = make_results(ResultsOptions(runs=[str(ev)], out=str(tmp_path / "o2"), plots=False))
    assert report.entries[0].label == "ResNet₋-T" and report.entries[0].kind == "evaluation"


def test_only_predicted_scores_a_tester_on_their_samples(tmp_path, data):
    lines = data["event", "oracle"].read_text().splitlines()[:10]
    tester = tmp_path / "tester1.jsonl"
    tester.write_text("\n".join(lines) + "\n")
    common = dict(samples=[str(data["event"])], plots=False, compare_paper=False)
    part = make_results(ResultsOptions(runs=[f"Human={tester}"], out=str(tmp_path / "a"),
                                       only_predicted=True, **common))  # fmt: skip
    whole = make_results(
        ResultsOptions(runs=[f"Human={tester}"], out=str(tmp_path / "b"), **common)
    )
    assert part.entries[0].summary["samples"] == 10
    assert part.entries[0].summary["metrics"]["Acc"] == 1.0
    assert whole.entries[0].summary["metrics"]["Acc"] == pytest.approx(10 / N)
    assert "50 of 60 scored samples had no prediction" in whole.markdown
    assert part.entries[0].model == "human"
    # a folder of the web app's exports, one file per tester, is one Human row
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "human-0001-a-event-test.jsonl").write_text("\n".join(lines[:4]) + "\n")
    (folder / "human-0002-b-event-test.jsonl").write_text("\n".join(lines[4:]) + "\n")
    joined = make_results(ResultsOptions(runs=[str(folder)], out=str(tmp_path / "c"),
                                         only_predicted=True, **common))  # fmt: skip
    assert joined.entries[0].label == "Human" and joined.entries[0].summary["samples"] == 10
    assert joined.entries[0].summary["metrics"] == part.entries[0].summary["metrics"]
    (folder / "human-0003-c-event-test.jsonl").write_text(lines[5] + "\n")
    with pytest.raises(UserError, match=r"human-0003-c-event-test.jsonl, line 1: sample .* too"):
        make_results(ResultsOptions(runs=[str(folder)], out=str(tmp_path / "d"), **common))


def test_bad_runs_are_named(tmp_path, data):
    def opts(*runs, **kw):
        return ResultsOptions(runs=[str(r) for r in runs], out=str(tmp_path / "out"), **kw)

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError, match=rf"{empty}: neither a training run"):
        make_results(opts(empty))
    with pytest.raises(UserError, match="no such run directory"):
        make_results(opts(tmp_path / "nowhere"))
    unfinished = _fake_run(tmp_path, "unfinished", "cnn+-g", "event", data["event", "oracle"])
    (unfinished / "predictions.jsonl").unlink()
    with pytest.raises(UserError, match=rf"{unfinished}: a training run without predictions"):
        make_results(opts(unfinished))
    with pytest.raises(UserError, match="needs the samples it answers"):
        make_results(opts(data["event", "oracle"]))
    run = _fake_run(tmp_path, "run", "cnn+-g", "event", data["event", "oracle"])
    with pytest.raises(UserError, match=rf"{run}: mismatched settings: the run is event"):
        make_results(opts(run, samples=[str(data["event"])], setting="view"))
    with pytest.raises(UserError, match=rf"{run}: no samples to score"):
        make_results(opts(run))
    bad_summary = tmp_path / "bad-eval"
    bad_summary.mkdir()
    (bad_summary / "summary.json").write_text('{"setting": "event"}')
    with pytest.raises(UserError, match=r"bad-eval/summary.json: not a summary.json"):
        make_results(opts(bad_summary))
    with pytest.raises(UserError, match="name them apart with LABEL=PATH"):
        make_results(opts(data["event", "oracle"], data["event", "oracle"], samples=[str(data["event"])]))  # fmt: skip
    with pytest.raises(UserError, match="no such samples file"):
        make_results(opts(run, samples=[str(tmp_path / "none.jsonl")]))
    # the CLI turns these into a message and status 2
    assert main(["results", str(empty), "--out", str(tmp_path / "o")]) == 2


def test_names():
    assert display_name("cnn+-g") == "CNN⊕-G" and display_name("resnet-sub-t") == "ResNet₋-T"
    assert display_name("bcnn-g") == "BCNN-G" and display_name("human") == "Human"
    assert canonical_model("ResNet₋-T") == "resnet--t" and canonical_model("CNN₊-G") == "cnn+-g"
    assert canonical_model("Human tester 3") == "human" and canonical_model("Oracle") is None


def test_a_real_training_run(tmp_path):
    from tvr.trance.train.data import synthetic_split_records
    from tvr.trance.train.run import train
    from tvr.trance.train.synthetic import write_synthetic_samples

    cfg = TrainConfig(
        model="cnn+-g", setting="event", image_size=(30, 40),
        synthetic_sizes={"train": 16, "val": 8, "test": 8}, epochs=1, batch_size=8,
        accelerator="cpu", output_dir=str(tmp_path), run_name="run", log_every_n_steps=1,
    )  # fmt: skip
    run = train(cfg)
    out = tmp_path / "out"
    report = make_results(ResultsOptions(runs=[str(run)], out=str(out)))
    entry = report.entries[0]
    assert entry.label == "CNN⊕-G" and entry.kind == "run" and entry.metrics_csv is not None
    # scored against the regenerated synthetic test split: the same as scoring it by hand
    samples = write_synthetic_samples(tmp_path / "test.jsonl", synthetic_split_records(cfg, "test"))
    expected = evaluate_files(samples, run / "predictions.jsonl", "event")
    assert entry.summary["metrics"] == expected["metrics"] and entry.summary["samples"] == 8
    t3 = _rows(out / "table3.json")
    assert t3["CNN⊕-G"]["Event AD"] == expected["metrics"]["AD"]
    assert t3["CNN⊕-G (paper)"]["Event Acc"] == 0.4797
    blob = (out / "learning_curves.png").read_bytes()
    assert blob.startswith(PNG_MAGIC) and len(blob) > 10_000
    assert "learning_curves.png" in report.markdown


def test_runs_on_a_dataset_folder(tmp_path):
    pytest.importorskip("moderngl")
    from tvr.trance.data.store import open_dataset
    from tvr.trance.generate.config import DatasetConfig
    from tvr.trance.generate.job import generate_dataset

    tiny = {"preset": "preview", "image_width": 64, "image_height": 48, "small_width": 32,
            "small_height": 32, "shard_size": 8}  # fmt: skip
    root = tmp_path / "ds"
    generate_dataset(
        DatasetConfig(setting="event", split_sizes={"val": 3, "test": 9}, **tiny), root,
        progress=False,
    )  # fmt: skip
    test = open_dataset(root).split("test")
    preds = tmp_path / "oracle.jsonl"
    write_jsonl(preds, predict("oracle", test.samples(), "event"))
    run = _fake_run(tmp_path, "run", "resnet+-g", "event", preds, data_root=str(root))
    report = make_results(ResultsOptions(runs=[str(run)], out=str(tmp_path / "o"), plots=False))
    entry = report.entries[0]
    assert entry.summary["samples"] == 9 and entry.summary["metrics"]["Acc"] == 1.0
    assert entry.summary["samples_file"] == str(test.samples_path)
    # a predictions file scored on --data's test split
    report = make_results(
        ResultsOptions(
            runs=[f"Oracle={preds}"], data=[str(root)], out=str(tmp_path / "p"), plots=False
        )
    )
    assert report.entries[0].setting == "event" and report.entries[0].summary["samples"] == 9
    # a view run against an event dataset
    view_run = _fake_run(tmp_path, "v", "resnet+-g", "view", preds)
    opts = ResultsOptions(runs=[str(view_run)], data=[str(root)], out=str(tmp_path / "q"))
    with pytest.raises(
        UserError, match=rf"{view_run}: mismatched settings: it is view, but --data"
    ):
        make_results(opts)
