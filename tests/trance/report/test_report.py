"""`tvr report` and the statistics it shares with `tvr stats`: counts, Table 8, plots, HTML."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.trance.helpers import make_sample, state
from tvr.cli import main
from tvr.core.errors import InputError, UserError
from tvr.trance.paper import PAPER_TABLE8
from tvr.trance.report.sources import open_source
from tvr.trance.report.writer import ReportConfig, write_report
from tvr.trance.sampling.jobs import GenerateConfig, generate
from tvr.trance.sampling.sampler import SamplerConfig
from tvr.trance.sampling.stats import balance_stats
from tvr.trance.world import vocab

NUM = 300


@pytest.fixture(scope="module")
def samples_file(tmp_path_factory) -> Path:
    """A few hundred balanced Event samples from the real sampler (occlusion off: fast)."""
    out = tmp_path_factory.mktemp("symbolic")
    config = GenerateConfig.for_setting(
        "event", num=NUM, seed=11, shard_size=150, sampler=SamplerConfig(occlusion=False)
    )
    return generate(config, out, progress=False)


@pytest.fixture(scope="module")
def report(samples_file, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("rep") / "report"
    assert main(["report", "--data", str(samples_file), "--out", str(out), "--examples", "5"]) == 0
    return out, json.loads((out / "report.json").read_text())


def _raw(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _table8_by_hand(sequences: list[list[str]], n: int) -> dict[str, float]:
    """options, mean and std of the n-gram counts over all 33^n options (unseen ones count 0)."""
    grams = Counter(tuple(seq[i : i + n]) for seq in sequences for i in range(len(seq) - n + 1))
    options = 33**n
    mean = sum(grams.values()) / options
    var = (
        sum((c - mean) ** 2 for c in grams.values()) + (options - len(grams)) * mean**2
    ) / options
    return {"options": options, "mean": mean, "std": math.sqrt(var)}


def test_counts_match_an_independent_count(samples_file, report):
    _, rep = report
    raw = _raw(samples_file)
    stats = rep["stats"]
    assert stats["samples"] == NUM and rep["splits"]["samples"]["samples"] == NUM

    def visible(pos):
        return all(-20 <= p <= 20 for p in pos)

    vis = Counter(sum(visible(o["position"]) for o in d["objects"]) for d in raw)
    assert stats["visible_objects"] == {str(k): vis.get(k, 0) for k in range(1, 11)}
    for attr in ("color", "material", "shape", "size"):
        got = Counter(o[attr] for d in raw for o in d["objects"])
        assert stats["attribute_values"][attr] == {k: got[k] for k in vocab.CATEGORIES[attr]}
        assert sum(stats["attribute_values"][attr].values()) == 10 * NUM
    steps = Counter(len(d["steps"]) for d in raw)
    assert stats["steps"] == {str(k): steps.get(k, 0) for k in range(1, 5)}
    objs = Counter(s["obj"] for d in raw for s in d["steps"])
    assert stats["object_index"] == {str(k): objs.get(k, 0) for k in range(10)}
    moves = Counter(s["type"] for d in raw for s in d["steps"] if "type" in s)
    assert stats["move_type"] == {m: moves.get(m, 0) for m in ("inner", "out", "in")}
    assert sum(moves.values()) > 0
    sequences = [[s["value"] for s in d["steps"]] for d in raw]
    for n in range(1, 5):
        want = _table8_by_hand(sequences, n)
        got = stats["ngrams"][f"{n}-gram"]
        assert got["options"] == want["options"]
        assert got["mean"] == pytest.approx(want["mean"], rel=1e-12)
        assert got["std"] == pytest.approx(want["std"], rel=1e-9)
    # the stored flags, not a recomputation
    flags = [d["order_sensitive"] for d in raw]
    assert stats["order_sensitive"] == sum(flags) and stats["order_sensitive_computed"] == 0
    assert stats["order_sensitive_share"] == pytest.approx(sum(flags) / NUM)
    assert rep["paper"]["table8"]["1-gram"]["mean"] == 38636


def test_ngram_table_on_a_hand_built_case():
    init = state()
    a, b = "color.red", "color.blue"
    samples = [
        make_sample("x", init, [(0, a), (1, b), (2, a)]),
        make_sample("y", init, [(3, a)]),
    ]
    table = balance_stats(samples)["ngrams"]
    # 1-grams: red 3 times, blue once, 31 values never
    m1 = 4 / 33
    std1 = math.sqrt(((3 - m1) ** 2 + (1 - m1) ** 2 + 31 * m1**2) / 33)
    assert table["1-gram"] == pytest.approx(
        {"options": 33, "min": 0, "max": 3, "median": 0, "mean": m1, "std": std1}
    )
    # 2-grams: (red, blue) and (blue, red) once each
    m2 = 2 / 1089
    std2 = math.sqrt((2 * (1 - m2) ** 2 + 1087 * m2**2) / 1089)
    assert table["2-gram"]["options"] == 1089
    assert table["2-gram"]["mean"] == pytest.approx(m2) and table["2-gram"]["std"] == pytest.approx(
        std2
    )
    # one 3-gram, no 4-gram
    assert table["3-gram"]["mean"] == pytest.approx(1 / 35937)
    assert table["4-gram"] == pytest.approx(
        {"options": 1185921, "min": 0, "max": 0, "median": 0, "mean": 0, "std": 0}
    )


def test_missing_order_flags_are_computed_by_the_simulator():
    # two large objects in a row: object 1 must move away before object 0 takes its place
    init = state((0, 0, 0), (-10, 0, 0))
    ok = make_sample("a", init, [(1, "position.front.1"), (0, "position.front.1")])
    plain = make_sample("b", init, [(0, "color.red"), (1, "color.blue")])
    ok.order_sensitive = None
    plain.order_sensitive = None
    stats = balance_stats([ok, plain])
    assert stats["order_sensitive_computed"] == 2
    assert stats["order_sensitive"] == 1


def test_plots_are_valid_images(report):
    out, rep = report
    assert set(rep["plots"]) == {
        "attribute_values",
        "visible_objects",
        "steps",
        "object_index",
        "move_type",
        "combined",
    }
    for rel in rep["plots"].values():
        with Image.open(out / rel) as im:
            im.verify()
        with Image.open(out / rel) as im:
            arr = np.asarray(im.convert("RGB"))
        assert arr.shape[0] > 200 and arr.shape[1] > 300
        assert len(np.unique(arr[::4, ::4].reshape(-1, 3), axis=0)) > 10  # drawn, not blank
    with Image.open(out / rep["plots"]["combined"]) as im:
        assert im.size[0] > 2 * Image.open(out / rep["plots"]["steps"]).size[0]


def _example_blocks(page: str) -> list[str]:
    return page.split('<div class="example"')[1:]


def test_html_has_one_entry_per_example_with_steps(report, samples_file):
    out, rep = report
    page = (out / "index.html").read_text()
    blocks = _example_blocks(page)
    assert len(blocks) == len(rep["examples"]) == 5
    by_id = {d["id"]: d for d in _raw(samples_file)}
    for block, ex in zip(blocks, rep["examples"], strict=True):
        assert f'data-id="{ex["id"]}"' in block
        d = by_id[ex["id"]]
        rows = re.findall(r'<tr class="step">(.*?)</tr>', block)
        assert len(rows) == len(d["steps"])
        for row, s in zip(rows, d["steps"], strict=True):
            cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
            attr, rest = s["value"].split(".", 1)
            assert cells[1:] == [str(s["obj"]), attr, rest.replace(".", " "), s.get("type", "-")]
        assert block.count("<tr><td>") + block.count("<tr class=hidden><td>") == 10
        assert block.count('class="noimg"') == 4  # no images given
    assert "38,636" in page  # the paper's Table 8 beside ours
    md = (out / "report.md").read_text()
    assert "| mean |" in md and "702.5" in md and "order-sensitive" in md


def test_rendered_samples_get_their_images(samples_file, tmp_path):
    """A tiny rendered set (raster, preview): the page links copies of the right PNGs."""
    pytest.importorskip("moderngl")
    from tvr.trance.data.files import read_samples, write_samples

    small = tmp_path / "small.jsonl"
    write_samples(small, read_samples(samples_file)[:3])
    images = tmp_path / "images"
    render = ["render", "--data", str(small), "--out", str(images), "--backend", "raster"]
    assert main([*render, "--preset", "preview", "--no-masks"]) == 0
    out = tmp_path / "rep"
    assert main(["report", "--data", str(small), "--images", str(images), "--out", str(out)]) == 0
    rep = json.loads((out / "report.json").read_text())
    page = (out / "index.html").read_text()
    assert len(rep["examples"]) == 3
    for block, ex in zip(_example_blocks(page), rep["examples"], strict=True):
        for key in ("init.C", "fin.L", "fin.C", "fin.R"):
            rel = ex["images"][key]
            stage, view = key.split(".")
            assert rel == f"images/small/{ex['id']}-{stage}.{view}.png"
            assert f'src="{rel}"' in block
            assert (out / rel).read_bytes() == (images / Path(rel).name).read_bytes()
        assert 'class="noimg"' not in block


def test_view_samples_mark_their_view(tmp_path):
    from tvr.trance.data.files import write_samples

    init = state((0, 0, 0))
    s = make_sample("v0", init, [(0, "color.red")])
    s.extra["view"] = "R"
    path = tmp_path / "view.jsonl"
    write_samples(path, [s])
    out = tmp_path / "rep"
    report = write_report(open_source(path), ReportConfig(str(path), str(out)))
    assert report["setting"] == "view" and report["examples"][0]["view"] == "R"
    page = (out / "index.html").read_text()
    marked = re.findall(r'<figure class="view">.*?</figure>', page)
    assert len(marked) == 1 and "final, right (R)" in marked[0]
    assert "View: R" in page


def test_split_option_and_rerun_replace_the_report(samples_file, tmp_path):
    out = tmp_path / "rep"
    src = open_source(samples_file)
    write_report(src, ReportConfig(str(samples_file), str(out), examples=2))
    (out / "stale.txt").write_text("old")
    rep = write_report(src, ReportConfig(str(samples_file), str(out), split="samples", examples=0))
    assert rep["scope"] == "samples" and rep["examples"] == []
    assert not (out / "stale.txt").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["rep"]  # no temporary folders left
    with pytest.raises(UserError, match="no split 'test'"):
        write_report(src, ReportConfig(str(samples_file), str(out), split="test"))
    assert (out / "index.html").is_file()  # the old report survives a failed run


def test_bad_input_is_named(samples_file, tmp_path, capsys):
    with pytest.raises(UserError, match="no such file or folder"):
        open_source(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="neither a dataset folder"):
        open_source(tmp_path / "empty")
    lines = samples_file.read_text().splitlines()
    bad = json.loads(lines[1])
    bad["steps"][0]["value"] = "color.pink"
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([lines[0], json.dumps(bad), *lines[2:5]]) + "\n")
    with pytest.raises(InputError) as err:
        open_source(broken)
    assert err.value.line == 2 and err.value.field == "steps[0].value"
    assert main(["report", "--data", str(broken)]) == 2
    assert "line 2, field 'steps[0].value'" in capsys.readouterr().err
    with pytest.raises(UserError, match="--images"):
        open_source(samples_file, tmp_path / "nope")


def test_stats_and_report_agree(samples_file, report, tmp_path):
    _, rep = report
    assert main(["stats", "--data", str(samples_file), "--out", str(tmp_path / "s.json")]) == 0
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats == rep["stats"]
    assert set(PAPER_TABLE8) == set(stats["ngrams"])
    assert stats["ngrams"]["1-gram"]["options"] == vocab.NUM_VALUES


def test_report_on_a_generated_dataset(tmp_path, capsys):
    """`tvr report DIR` on a tiny View dataset made by `tvr generate` (raster, preview)."""
    pytest.importorskip("moderngl")
    from tvr.trance.data.store import open_dataset
    from tvr.trance.generate.config import DatasetConfig
    from tvr.trance.generate.job import generate_dataset

    config = DatasetConfig(
        setting="view",
        split_sizes={"train": 4, "val": 2, "test": 2},
        shard_size=2,
        preset="preview",
    )
    root = generate_dataset(config, tmp_path / "ds", progress=False).root
    assert main(["report", "--data", str(root), "--examples", "2"]) == 0
    out = root / "report"  # the default place
    rep = json.loads((out / "report.json").read_text())
    ds = open_dataset(root)  # the report folder does not disturb the store
    assert rep["kind"] == "dataset" and rep["setting"] == "view" and rep["scope"] == "all splits"
    assert {k: v["samples"] for k, v in rep["splits"].items()} == {"train": 4, "val": 2, "test": 2}
    assert rep["stats"]["samples"] == 8
    # the combined statistics, merged from the splits' counts, equal a count over all samples
    everything = [s for n in ds.splits for s in ds.split(n).samples()]
    assert rep["stats"] == json.loads(json.dumps(balance_stats(everything)))
    assert rep["stats"]["steps"] == {
        str(k): sum(len(s.steps) == k for n in ds.splits for s in ds.split(n).samples())
        for k in range(1, 5)
    }
    assert [e["split"] for e in rep["examples"]] == ["train", "train", "val", "val", "test", "test"]
    page = (out / "index.html").read_text()
    for block, ex in zip(_example_blocks(page), rep["examples"], strict=True):
        sp = ds.split(ex["split"])
        i = sp.index_of(ex["id"])
        assert ex["position"] == i and ex["view"] == sp.sample(i).extra["view"]
        for key, rel in ex["images"].items():
            stage, view = key.split(".")
            assert (out / rel).read_bytes() == sp.image_path(i, stage, view).read_bytes()
            assert f'src="{rel}"' in block
        marked = re.findall(r'<figure class="view">.*?</figure>', block)
        assert len(marked) == 1 and f"{ex['id']}-fin.{ex['view']}.png" in marked[0]
    assert main(["report", "--data", str(root), "--split", "test", "--out", str(tmp_path / "t")]) == 0
    rep = json.loads((tmp_path / "t" / "report.json").read_text())
    assert rep["scope"] == "test" and rep["stats"]["samples"] == 2
    assert {e["split"] for e in rep["examples"]} == {"test"}
    # a half-written shard is named by the store, never reported on
    shard = root / "val" / "shards" / "shard-00000"
    shard.rename(root / "val" / "shards" / ".shard-00000.tmp-x")
    assert main(["report", "--data", str(root), "--out", str(tmp_path / "u")]) == 2
    assert ".shard-00000.tmp-x: half-written" in capsys.readouterr().err
    assert not (tmp_path / "u").exists()
