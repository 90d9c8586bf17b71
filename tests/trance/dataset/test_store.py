"""The dataset store and `tvr generate`: the contract, configs, bad options, integrity checks."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

pytest.importorskip("moderngl")
pytest.importorskip("PIL")

from PIL import Image

from tvr.cli import main
from tvr.core.errors import UserError
from tvr.trance.data.files import check_consistent, read_samples
from tvr.trance.data.store import open_dataset
from tvr.trance.generate.config import DatasetConfig
from tvr.trance.generate.job import generate_dataset


def _config(**kw) -> DatasetConfig:
    base = {"setting": "event", "split_sizes": {"train": 5, "val": 2, "test": 2},
            "shard_size": 2, "preset": "preview"}  # fmt: skip
    return DatasetConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def event_ds(tmp_path_factory):
    out = tmp_path_factory.mktemp("store") / "event"
    return generate_dataset(_config(), out, progress=False)


def test_contract(event_ds):
    ds = open_dataset(event_ds.root)
    assert ds.setting == "event" and ds.splits == ("train", "val", "test")
    assert ds.config["split_sizes"] == {"train": 5, "val": 2, "test": 2}
    assert json.loads((ds.root / "config.json").read_text()) == ds.config
    sp = ds.split("train")
    assert sp.name == "train" and len(sp) == 5 and len(sp.samples()) == 5
    assert sp.ids == [s.id for s in sp.samples()] and len(set(sp.ids)) == 5
    assert sp.index_of(sp.ids[3]) == 3 and sp.sample(3).id == sp.ids[3]
    with pytest.raises(KeyError):
        sp.index_of("nope")
    with pytest.raises(UserError, match="no split 'dev'"):
        ds.split("dev")
    # the splits draw from different streams
    assert not set(sp.ids) & set(ds.split("test").ids)
    for i in range(len(sp)):
        s = sp.sample(i)
        assert 1 <= len(s.steps) <= 4 and check_consistent(s) is None
        for stage, view in (("init", "C"), ("fin", "L"), ("fin", "C"), ("fin", "R")):
            small = sp.image(i, stage, view)
            full = sp.image(i, stage, view, size="full")
            assert small.shape == (120, 160, 3) and small.dtype == np.uint8
            assert full.shape == (240, 320, 3)
            assert sp.image_path(i, stage, view).is_file()
            # the small copy is the area average of the full PNG
            box = np.asarray(Image.fromarray(full).resize((160, 120), Image.Resampling.BOX))
            assert np.array_equal(small, box)
        assert not np.array_equal(sp.image(i, "init", "C"), sp.image(i, "fin", "C"))
    with pytest.raises(ValueError):
        sp.image(0, "init", "L")
    assert [s.id for s in read_samples(sp.samples_path)] == sp.ids
    ds.verify()


def test_rerun_same_config_keeps_the_data_and_other_config_is_refused(event_ds):
    before = (event_ds.root / "train" / "samples.jsonl").read_bytes()
    generate_dataset(_config(), event_ds.root, progress=False)
    assert (event_ds.root / "train" / "samples.jsonl").read_bytes() == before
    with pytest.raises(UserError, match=r"another config.*seed"):
        generate_dataset(_config(seed=1), event_ds.root, progress=False)


def test_view_and_basic_settings(tmp_path):
    sizes = {"train": 4, "val": 1, "test": 1}
    view = generate_dataset(
        _config(setting="view", split_sizes=sizes, image_width=64, image_height=48,
                small_width=32, small_height=32), tmp_path / "v", progress=False,
    )  # fmt: skip
    views = [s.extra["view"] for s in view.split("train").samples()]
    assert set(views) <= {"L", "C", "R"} and len(views) == 4
    assert view.split("train").image(0, "fin", "R").shape == (32, 32, 3)
    # the view is stored in the split's samples.jsonl too (what `tvr evaluate` reads)
    lines = view.split("train").samples_path.read_text().splitlines()
    assert [json.loads(line)["view"] for line in lines] == views
    basic = generate_dataset(
        _config(setting="basic", split_sizes=sizes, image_width=64, image_height=48,
                small_width=32, small_height=32), tmp_path / "b", progress=False,
    )  # fmt: skip
    assert all(len(s.steps) == 1 for s in basic.split("train").samples())
    assert basic.config["sampler"]["max_steps"] == 1


def test_num_is_divided_like_the_release():
    assert DatasetConfig(num=530_000).resolved_sizes() == {
        "train": 500_000, "val": 10_000, "test": 20_000}  # fmt: skip
    assert DatasetConfig(num=24).resolved_sizes() == {"train": 22, "val": 1, "test": 1}
    assert DatasetConfig(num=1).resolved_sizes() == {"train": 1, "val": 0, "test": 0}


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--setting", "story", "--num", "4"], "setting"),
        (["--num", "0"], "num"),
        (["--num", "-3"], "num"),
        (["--num", "4", "--small-size", "31x24"], "small_width"),
        (["--num", "4", "--image-size", "320x20"], "image_height"),
        (["--num", "4", "--backend", "povray"], "backend"),
        (["--num", "4", "--preset", "ultra"], "preset"),
        (["--split-sizes", "train=4,dev=1"], "split_sizes"),
        (["--num", "4", "--shard-size", "0"], "shard_size"),
        (["--num", "4", "--workers", "0"], "workers"),
    ],
)
def test_bad_options_fail_before_any_work(tmp_path, capsys, argv, named):
    out = tmp_path / "ds"
    assert main(["generate", "--out", str(out), *argv]) == 2
    err = capsys.readouterr().err
    assert f"'{named}'" in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "flag"),
    [(["--small-size", "31x24"], "--small-size"), (["--image-size", "320x20"], "--image-size")],
)
def test_bad_size_names_the_flag_the_user_typed(tmp_path, capsys, argv, flag):
    assert main(["generate", "--out", str(tmp_path / "ds"), "--num", "4", *argv]) == 2
    err = capsys.readouterr().err
    assert f"({flag})" in err and "--small-width" not in err and "--image-height" not in err


def test_config_file_json_and_toml(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"num": 4, "colour": "red"}))
    assert main(["generate", "--out", str(tmp_path / "a"), "--config", str(bad)]) == 2
    assert "colour" in capsys.readouterr().err and not (tmp_path / "a").exists()
    bad.write_text(json.dumps({"num": 4, "sampler": {"max_step": 2}}))
    assert main(["generate", "--out", str(tmp_path / "a"), "--config", str(bad)]) == 2
    assert "max_step" in capsys.readouterr().err
    good = tmp_path / "c.toml"
    good.write_text(
        'setting = "event"\nnum = 3\npreset = "preview"\nimage_width = 64\nimage_height = 48\n'
        "small_width = 32\nsmall_height = 32\n[sampler]\nmax_steps = 2\n"
    )
    out = tmp_path / "t"
    assert main(["generate", "--out", str(out), "--config", str(good), "--seed", "5",
                 "--quiet"]) == 0  # fmt: skip
    config = json.loads((out / "config.json").read_text())
    assert config["seed"] == 5 and config["sampler"]["max_steps"] == 2
    assert config["split_sizes"] == {"train": 1, "val": 1, "test": 1}
    ds = open_dataset(out)
    assert all(len(s.steps) <= 2 for s in ds.split("train").samples())
    assert main(["generate", "--verify", str(out)]) == 0


# --- integrity ------------------------------------------------------------------------------------
@pytest.fixture
def copy_ds(event_ds, tmp_path):
    dst = tmp_path / "copy"
    shutil.copytree(event_ds.root, dst)
    return dst


def test_a_symbolic_folder_is_not_a_dataset(tmp_path):
    assert main(["sample", "--out", str(tmp_path / "s"), "--num", "2", "--quiet"]) == 0
    with pytest.raises(UserError, match="not a tvr image dataset"):
        open_dataset(tmp_path / "s")
    with pytest.raises(UserError, match=r"no config\.json"):
        open_dataset(tmp_path)


def test_half_written_shard_is_named(copy_ds):
    shard = copy_ds / "train" / "shards" / "shard-00001"
    tmp = shard.with_name(".shard-00001.tmp-123-abc")
    shard.rename(tmp)
    with pytest.raises(UserError, match=r"shard-00001\.tmp-123-abc: half-written"):
        open_dataset(copy_ds)
    shutil.rmtree(tmp)
    with pytest.raises(UserError, match="shard-00001: missing"):
        open_dataset(copy_ds)


def test_shard_without_manifest_is_named(copy_ds):
    (copy_ds / "val" / "shards" / "shard-00000" / "manifest.json").unlink()
    with pytest.raises(UserError, match=r"val/shards/shard-00000: half-written or damaged"):
        open_dataset(copy_ds)


def test_changed_samples_file_is_named(copy_ds):
    path = copy_ds / "train" / "shards" / "shard-00000" / "samples.jsonl"
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"red"', b'"tan"', 1) if b'"red"' in data
                     else data.replace(b'"large"', b'"small"', 1))  # fmt: skip
    with pytest.raises(UserError, match=r"shard-00000: samples.jsonl is corrupted \(sha256"):
        open_dataset(copy_ds)


def test_truncated_small_array_is_named(copy_ds):
    path = copy_ds / "test" / "shards" / "shard-00000" / "small.npy"
    data = path.read_bytes()
    path.write_bytes(data[:-100])
    with pytest.raises(UserError, match=r"test/shards/shard-00000: small.npy is corrupted"):
        open_dataset(copy_ds)


def test_flipped_pixel_and_png_found_by_verify(copy_ds, capsys):
    path = copy_ds / "train" / "shards" / "shard-00002" / "small.npy"
    arr = np.load(path, mmap_mode="r+")
    arr[0, 1, 5, 5, 0] ^= 1
    arr.flush()
    del arr
    ds = open_dataset(copy_ds)  # same size and shape: the fast checks pass
    with pytest.raises(UserError, match=r"shard-00002: small.npy is corrupted \(sha256"):
        ds.verify()
    assert main(["generate", "--verify", str(copy_ds)]) == 2
    assert "small.npy is corrupted" in capsys.readouterr().err


def test_changed_png_found_by_verify(copy_ds):
    ds = open_dataset(copy_ds)
    png = ds.split("val").image_path(1, "fin", "L")
    png.write_bytes(png.read_bytes()[:-10])
    with pytest.raises(UserError, match=r"images/.*fin\.L\.png is corrupted"):
        open_dataset(copy_ds).verify()


def test_rerun_cleans_leftovers_and_finishes(copy_ds, event_ds):
    shard = copy_ds / "train" / "shards" / "shard-00001"
    shutil.rmtree(shard)
    (shard.parent / ".shard-00001.tmp-1-x").mkdir()
    (copy_ds / "train" / "split.json").unlink()
    with pytest.raises(UserError):
        open_dataset(copy_ds)
    ds = generate_dataset(_config(), copy_ds, progress=False)
    assert len(ds.split("train")) == 5 and not list(shard.parent.glob(".shard-*"))
    ds.verify()
    # the remade shard is the same data
    a, b = ds.split("train"), event_ds.split("train")
    assert a.samples_path.read_bytes() == b.samples_path.read_bytes()
    assert np.array_equal(a.shards[1].small, b.shards[1].small)
