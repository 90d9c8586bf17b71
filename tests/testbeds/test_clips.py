"""The TRANCE-clips testbed: the open-world rule, the TRANCO layout, frames that show the change."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tvr.core.errors import UserError
from tvr.testbeds.clips import (
    ClipsConfig,
    OpenWorldSampler,
    frame_times,
    generate_clips,
    held_out_types,
    shard_samples,
    step_types,
    type_name,
    visible_span,
)
from tvr.trance.world import vocab
from tvr.tranco.data.candidates import tiny_candidates
from tvr.tranco.data.dataset import open_dataset

SMALL = ClipsConfig(sizes=(5, 2, 3), width=64, height=48, preset="preview", shard_size=3,
                    tiny_candidates=4)  # fmt: skip


def test_one_shape_per_value_is_held_out_never_a_no_op():
    held = held_out_types(0)
    assert len(held) == vocab.NUM_VALUES == 33
    assert sorted(v for v, _ in held) == list(range(33))
    assert "shape.cube/cube" not in {type_name(*t) for t in held}
    assert not any(vocab.VALUES[v] == f"shape.{vocab.SHAPES[s]}" for v, s in held)
    assert held_out_types(0) == held != held_out_types(1)


def test_training_never_samples_a_held_out_type_and_test_only_those():
    config = ClipsConfig(sizes=(30, 0, 30), shard_size=30)
    train, test = shard_samples(config, "train", 0), shard_samples(config, "test", 0)
    held = held_out_types(config.seed)
    train_types = {t for s in train for t in step_types(s)}
    test_types = {t for s in test for t in step_types(s)}
    assert not train_types & held and test_types <= held
    assert not train_types & test_types
    assert {len(s.steps) for s in train + test} <= {2, 3, 4}
    assert [s.id for s in test[:2]] == ["test00000", "test00001"]
    # each held-out value still occurs in training, on another shape: the test composes
    assert {v for v, _ in test_types} & {v for v, _ in train_types}
    sampler = OpenWorldSampler(config.sampler(), 7, 0, held, use_held_out=True)
    assert all(t in held for i in range(5) for t in step_types(sampler.sample(i)))


def test_frame_times_are_seeded_per_clip():
    sparse = frame_times(SMALL, "train00001_2")
    assert len(sparse) == 3 and all(j / 3 <= t < (j + 1) / 3 for j, t in enumerate(sparse))
    assert sparse == frame_times(SMALL, "train00001_2") != frame_times(SMALL, "train00001_3")
    even = ClipsConfig(frame_times="even", frames_per_clip=4)
    assert frame_times(even, "x_0") == pytest.approx([0, 1 / 3, 2 / 3, 1])


def test_moves_in_and_out_follow_the_visible_stretch_of_the_path():
    assert visible_span([0, 0], [10, -10]) == (0.0, 1.0)  # inner
    assert visible_span([7, 40], [7, 20]) == (1.0, 1.0)  # in, landing on the edge
    assert visible_span([7, 40], [7, 10]) == pytest.approx((2 / 3, 1.0))  # in
    assert visible_span([18, -5], [38, 15]) == pytest.approx((0.0, 0.1))  # out, diagonal
    assert visible_span([30, 30], [30, 10]) is None  # never in view


@pytest.fixture(scope="module")
def testbed(tmp_path_factory) -> Path:
    pytest.importorskip("moderngl")
    out = tmp_path_factory.mktemp("testbed") / "tc"
    generate_clips(SMALL, out, tiny_candidates, progress=False)
    return out


def test_the_testbed_writes_the_tranco_layout_with_an_open_world_split(testbed):
    ds = open_dataset(testbed)  # every file and image checked
    assert ds.source == "trance-clips" and ds.frames_per_clip == 3
    assert {s: len(ds.split(s)) for s in ("train", "val", "test")} == {
        "train": 5,
        "val": 2,
        "test": 3,
    }
    types = {split: {ds.clips[c].extra["type"] for s in ds.split(split) for c in s.clips}
             for split in ("train", "val", "test")}  # fmt: skip
    assert not types["train"] & (types["val"] | types["test"])
    held = {type_name(*t) for t in held_out_types(SMALL.seed)}
    assert types["test"] <= held and not types["train"] & held
    info = json.loads((testbed / "dataset.json").read_text())
    assert sorted(info["open_world"]["held_out"]) == sorted(held)
    for split in ("val", "test"):  # the stored sets are tranco's tiny sets
        samples = ds.split(split)
        want = tiny_candidates([(s.id, list(s.clips)) for s in samples], 4, SMALL.seed)
        assert {s.id: list(s.candidates) for s in samples} == want
    first = ds.split("train")[0]
    assert first.task == "TRANCE Event" and first.extra["trance"]["steps"]
    from PIL import Image

    assert Image.open(ds.path(first.initial)).size == (64, 48)


def test_a_rerun_does_nothing_and_another_config_is_refused(testbed):
    before = {p: p.stat().st_mtime_ns for p in (testbed / "clips").rglob("*.jpg")}
    generate_clips(SMALL, testbed, tiny_candidates, progress=False)
    assert {p: p.stat().st_mtime_ns for p in (testbed / "clips").rglob("*.jpg")} == before
    with pytest.raises(UserError, match="differs in seed"):
        generate_clips(ClipsConfig(**{**SMALL.to_dict(), "sizes": (5, 2, 3), "seed": 1}),
                       testbed, tiny_candidates, progress=False)  # fmt: skip


def _pixels(path: Path) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB"), dtype=np.float32)


def test_even_frames_run_from_the_state_before_to_the_state_after(tmp_path):
    pytest.importorskip("moderngl")
    config = ClipsConfig(sizes=(3, 0, 0), width=64, height=48, preset="preview",
                         frame_times="even", frames_per_clip=3)  # fmt: skip
    generate_clips(config, tmp_path / "even", tiny_candidates, progress=False)
    ds = open_dataset(tmp_path / "even")
    kinds = Counter()
    for sample in ds.split("train"):
        states = [_pixels(ds.path(sample.initial))]
        for c in sample.clips:
            frames = [_pixels(p) for p in ds.frames(c)]
            move = ds.clips[c].extra.get("move")
            if move != "in" and states[-1] is not None:  # t = 0: the state before
                assert np.abs(frames[0] - states[-1]).mean() < 1.0
            assert np.abs(frames[-1] - frames[0]).mean() > 0.05, c  # something changes
            kinds[move or ds.clips[c].extra["type"].split(".")[0]] += 1
            states.append(frames[-1] if move != "out" else None)  # t = 1: the state after
        if states[-1] is not None:
            assert np.abs(states[-1] - _pixels(ds.path(sample.final))).mean() < 1.0
    assert sum(kinds.values()) >= 6


def test_cli_testbed_and_stats(tmp_path, capsys):
    pytest.importorskip("moderngl")
    from tvr.cli import main

    out = tmp_path / "tc"
    assert main(["tranco", "testbed", "--out", str(out), "--split-sizes", "train=2,val=1,test=1",
                 "--image-size", "48x36", "--preset", "preview", "--quiet"]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "train 2 samples" in text and "held-out types (val/test only): 33 of 96" in text
    assert "samples/s" in text and "Table 2" in text
    assert main(["tranco", "stats", "--data", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"]["samples"] == 4
    assert main(["tranco", "testbed", "--out", str(out), "--split-sizes", "train=0,val=1,test=1"]) == 2
    assert "needs training samples" in capsys.readouterr().err


def test_one_worker_or_two_make_the_same_bytes_but_timing(tmp_path):
    """docs/tranco.md: the testbed is byte-identical across runs and worker counts; only each
    shard's timing.json differs (issue 28: the shards' records.jsonl held the seconds)."""
    from tvr.cli import main

    trees = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        assert main(["tranco", "testbed", "--out", str(out), "--split-sizes", "train=4,val=2,test=2",
                     "--image-size", "48x36", "--preset", "preview", "--shard-size", "2",
                     "--workers", str(workers), "--quiet"]) == 0  # fmt: skip
        trees.append({str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
                      if p.is_file() and p.name != "timing.json"})  # fmt: skip
    assert trees[0].keys() == trees[1].keys() and len(trees[0]) > 20
    differ = [k for k in trees[0] if trees[0][k] != trees[1][k]]
    assert not differ, differ[:5]
