"""`tvr tranco build` on tiny videos made here: samples, frames, skipping, split, stats, resume, CLI."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.tranco.tiny_coin import BUILT, FPS, VIDEOS, frame_number, make_coin
from tvr.cli import main
from tvr.core.errors import UserError
from tvr.tranco.data.build import (
    TABLE2_SPLIT,
    BuildConfig,
    allocate,
    build_dataset,
    split_samples,
)
from tvr.tranco.data.dataset import open_dataset
from tvr.tranco.data.stats import dataset_stats, stats_lines

pytest.importorskip("av")


@pytest.fixture(scope="module")
def coin(tmp_path_factory) -> tuple[Path, Path]:
    return make_coin(tmp_path_factory.mktemp("coin"))


def _config(coin, **changes) -> BuildConfig:
    return BuildConfig(str(coin[0]), str(coin[1]), **{"short_side": 32, "shard_size": 3, **changes})


@pytest.fixture(scope="module")
def built(coin, tmp_path_factory):
    out = tmp_path_factory.mktemp("built") / "ds"
    report = build_dataset(_config(coin, tiny_candidates=6), out, progress=False)
    return out, report


def _image(path: Path) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB"))


def test_samples_are_the_videos_with_2_to_7_steps_and_broken_ones_are_listed(built):
    out, report = built
    ds = open_dataset(out)
    assert sorted(s.id for s in ds) == sorted(BUILT)
    info = json.loads((out / "dataset.json").read_text())
    reasons = {s["id"]: s["reason"] for s in info["skipped_videos"]}
    assert set(reasons) == {"gone", "junk", "short"}
    assert reasons["gone"] == "no local video file"
    assert reasons["junk"].startswith("cannot read the video")
    assert "before the wanted time 3.500 s" in reasons["short"]
    assert info["coin"] == {"videos": len(VIDEOS), "eligible": len(VIDEOS) - 2, "out_of_range": 2}
    text = "\n".join(report.lines())
    assert "built: 7 samples; skipped: 3 videos (1 without a local file, 2 unreadable)" in text
    assert "skipped junk: cannot read the video" in text
    assert sum(info["splits"].values()) == 7
    assert info["clips"] == {s: sum(x.steps for x in ds.split(s)) for s in info["clips"]}


def test_states_and_clip_frames_follow_the_time_rule(built):
    out, _ = built
    ds = open_dataset(out)
    for sample in ds:
        steps = sorted(VIDEOS[sample.id][0])  # time order
        assert sample.steps == len(steps) and sample.task.startswith("task ")
        assert frame_number(_image(ds.path(sample.initial))) == math.ceil(steps[0][0] * FPS - 1e-6)
        end = min(math.ceil(steps[-1][1] * FPS - 1e-6), 19)
        assert frame_number(_image(ds.path(sample.final))) == end
        for i, (clip_id, (start, stop)) in enumerate(zip(sample.clips, steps, strict=True)):
            clip = ds.clips[clip_id]
            assert (
                clip_id == f"{sample.id}_{i}" and clip.index == i and clip.segment == (start, stop)
            )
            frames = [frame_number(_image(p)) for p in ds.frames(clip_id)]
            assert len(frames) == 3 and frames == sorted(frames)
            lo, hi = math.ceil(start * FPS - 1e-6), math.floor(stop * FPS + 1e-6)
            assert all(lo <= f <= max(lo, hi) for f in frames), (clip_id, frames, lo, hi)
        assert _image(ds.path(sample.initial)).shape[0] == 32  # short side
    b3 = next(s for s in ds if s.id == "b3")  # listed out of time order: sorted by start
    assert [ds.clips[c].label for c in b3.clips] == ["b3 step 1", "b3 step 2", "b3 step 0"]


def test_clip_frames_are_seeded_per_clip_not_per_shard(coin, built, tmp_path):
    out, _ = built
    other = build_dataset(_config(coin, tiny_candidates=6, shard_size=1, limit=3),
                          tmp_path / "one", progress=False)  # fmt: skip
    assert other.built == 3
    for clip in open_dataset(tmp_path / "one").clips.values():
        for rel in clip.frames:
            assert (tmp_path / "one" / rel).read_bytes() == (out / rel).read_bytes()
    reseeded = build_dataset(_config(coin, seed=1, limit=4, frames_per_clip=5),
                             tmp_path / "seed1", progress=False)  # fmt: skip
    ds = open_dataset(tmp_path / "seed1")
    assert reseeded.built == 4 and ds.frames_per_clip == 5
    different = [
        c for c in ds.clips.values()
        if [(tmp_path / "seed1" / f).read_bytes() for f in c.frames[:3]]
        != [(out / f).read_bytes() for f in open_dataset(out).clips[c.id].frames]
    ]  # fmt: skip
    assert different  # another seed draws other frames


def test_a_rerun_builds_only_missing_shards_and_refuses_another_config(coin, tmp_path):
    out = tmp_path / "ds"
    build_dataset(_config(coin), out, progress=False)
    files = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    for p in (out / "shards" / "shard-00001").iterdir():
        p.unlink()
    (out / "shards" / "shard-00001").rmdir()
    (out / "dataset.json").unlink()
    build_dataset(_config(coin), out, progress=False)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == files
    with pytest.raises(UserError, match=r"another config.*differs in seed"):
        build_dataset(_config(coin, seed=3), out, progress=False)


def test_the_split_has_table2_proportions_by_length_seeded_and_order_free():
    rng = np.random.default_rng(0)
    lengths = rng.choice(np.arange(2, 8), size=11105, p=[0.285, 0.289, 0.215, 0.108, 0.065, 0.038])
    samples = [(f"v{i:05d}", int(k)) for i, k in enumerate(lengths)]
    split = split_samples(samples, TABLE2_SPLIT, seed=0)
    counts = Counter(split.values())
    assert (counts["train"], counts["val"], counts["test"]) == TABLE2_SPLIT
    for k in range(2, 8):
        of_k = [split[i] for i, n in samples if n == k]
        want = [len(of_k) * w / sum(TABLE2_SPLIT) for w in TABLE2_SPLIT]
        got = [of_k.count(s) for s in ("train", "val", "test")]
        assert all(abs(g - w) <= 1.5 for g, w in zip(got, want, strict=True)), (k, got, want)
    assert split_samples(samples[::-1], TABLE2_SPLIT, seed=0) == split
    other = split_samples(samples, TABLE2_SPLIT, seed=1)
    assert Counter(other.values()) == counts and other != split
    assert allocate(7, TABLE2_SPLIT) == [5, 1, 1] and allocate(0, TABLE2_SPLIT) == [0, 0, 0]


def test_stats_table_sets_ours_beside_table2(built):
    stats = dataset_stats(open_dataset(built[0]))
    assert stats["total"]["samples"] == 7
    assert stats["total"]["by_length"] == {2: 2, 3: 2, 4: 1, 5: 1, 6: 0, 7: 1}
    lines = stats_lines(stats)
    test_rows = [line.split() for line in lines if line.startswith("test")]
    assert test_rows[1][:4] == ["test", "Table", "2", "1430"]
    assert test_rows[1][-6:] == ["432", "425", "279", "154", "87", "53"]
    assert test_rows[0][2] == str(stats["test"]["samples"])


def test_build_options_are_checked(coin, tmp_path):
    with pytest.raises(UserError, match="no such file"):
        build_dataset(BuildConfig(str(tmp_path / "nope.json"), str(coin[1])), tmp_path / "x")
    with pytest.raises(UserError, match="frames_per_clip"):
        build_dataset(_config(coin, frames_per_clip=0), tmp_path / "x")
    with pytest.raises(UserError, match="no video with 9 to 12 steps"):
        build_dataset(_config(coin, min_steps=9, max_steps=12), tmp_path / "x", progress=False)


def test_cli_build_stats_baseline_evaluate_chain(coin, tmp_path, capsys):
    out = tmp_path / "ds"
    assert main(["tranco", "build", "--coin", str(coin[0]), "--videos", str(coin[1]), "--out",
                 str(out), "--image-size", "24", "--tiny-candidates", "5", "--quiet"]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "skipped: 3 videos" in text and "Table 2" in text and "1430" in text
    assert main(["tranco", "stats", "--data", str(out)]) == 0
    assert "total  Table 2" in capsys.readouterr().out
    predictions = tmp_path / "random.jsonl"
    assert main(["tranco", "baseline", "random", "--data", str(out / "val.jsonl"),
                 "--out", str(predictions)]) == 0  # fmt: skip
    assert main(["tranco", "evaluate", "--data", str(out / "val.jsonl"), "--predictions",
                 str(predictions), "--candidates", "full"]) == 0  # fmt: skip
    assert "full candidates" in capsys.readouterr().out
    code = main(["tranco", "build", "--coin", str(tmp_path / "none.json"), "--videos",
                 str(coin[1]), "--out", str(tmp_path / "y"), "--quiet"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "no such file" in err and len(err.strip().splitlines()) == 1
