"""A job's config dict round trip (`core.job_config`) and its folder bookkeeping (`core.jobs`)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from tvr.core.errors import UserError
from tvr.core.job_config import JobConfig
from tvr.core.jobs import move_shard_folders, prepare_job_folder


@dataclass(frozen=True)
class SizesConfig(JobConfig):
    OPTION_KIND = "testbed"

    sizes: tuple[int, int] = (3, 1)
    seed: int = 0

    def validate(self) -> SizesConfig:
        if self.seed < 0:
            raise UserError("seed must not be negative")
        return self


@dataclass(frozen=True)
class TaggedConfig(JobConfig):
    FORMAT_TAG = "tvr.test/1"
    OPTION_KIND = "build"

    num: int = 1

    def validate(self) -> TaggedConfig:
        return self


def test_a_config_survives_json_with_its_tuples_and_format_tag():
    config = SizesConfig((5, 2), 7)
    assert config.to_dict() == {"sizes": [5, 2], "seed": 7}  # a list, as config.json has it
    saved = json.loads(json.dumps(config.to_dict()))
    assert SizesConfig.from_dict(saved) == config
    tagged = TaggedConfig(4).to_dict()
    assert list(tagged) == ["format", "num"] and tagged["format"] == "tvr.test/1"
    assert TaggedConfig.from_dict(tagged) == TaggedConfig(4)


def test_unknown_options_and_bad_values_are_one_line_errors():
    with pytest.raises(UserError, match=r"unknown testbed option\(s\): \['colour'\]"):
        SizesConfig.from_dict({"colour": 1})
    with pytest.raises(UserError, match="unknown build option"):  # untagged: "format" is unknown
        TaggedConfig.from_dict({"num": 1, "size": 2})
    with pytest.raises(UserError, match="unknown testbed option"):
        SizesConfig.from_dict({"format": "x"})
    with pytest.raises(UserError, match="negative"):
        SizesConfig.from_dict({"seed": -1})


def test_prepare_saves_the_config_and_removes_half_written_files_only(tmp_path):
    out = tmp_path / "out"
    (out / "states").mkdir(parents=True)
    (out / "states" / ".a.jpg.x1y2").write_bytes(b"half")
    (out / "states" / "a.jpg").write_bytes(b"whole")
    states = prepare_job_folder(out, {"seed": 1}, "states", leftovers=".*.jpg.*")
    assert states == out / "states"
    assert sorted(p.name for p in states.iterdir()) == ["a.jpg"]
    assert json.loads((out / "config.json").read_text()) == {"seed": 1}
    prepare_job_folder(tmp_path / "other", {}, "shards")
    assert (tmp_path / "other" / "shards").is_dir()


def test_moving_a_shards_folders_is_idempotent(tmp_path):
    shard, out = tmp_path / "shard", tmp_path / "out"
    (shard / "states").mkdir(parents=True)
    (shard / "states" / "s.jpg").write_bytes(b"new")
    (shard / "clips" / "c_0").mkdir(parents=True)
    (shard / "clips" / "c_0" / "0.jpg").write_bytes(b"frame")
    (out / "clips" / "c_0").mkdir(parents=True)
    (out / "clips" / "c_0" / "stale.jpg").write_bytes(b"old")  # a killed assembly's copy
    move_shard_folders(shard, out, ("states", "clips"))
    move_shard_folders(shard, out, ("states", "clips"))
    assert (out / "states" / "s.jpg").read_bytes() == b"new"
    assert [p.name for p in (out / "clips" / "c_0").iterdir()] == ["0.jpg"]
    assert not (shard / "states").exists() and not (shard / "clips").exists()
