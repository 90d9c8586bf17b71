"""The run config base: the run options it gives every config, which of them a resumed run may
change, how a run folder is opened, and how a run's checkpoint is found."""

from __future__ import annotations

import dataclasses
import json
from typing import ClassVar

import pytest

from tvr.core.errors import UserError
from tvr.training.run_config import RESUMABLE_RUN_FIELDS, RunConfig
from tvr.training.runs import RunOptions, open_run, run_checkpoint


@dataclasses.dataclass
class ToyConfig(RunConfig):
    RESUMABLE_FIELDS: ClassVar[frozenset[str]] = RESUMABLE_RUN_FIELDS | {"cache"}
    PATH_FIELDS: ClassVar[tuple[str, ...]] = ("data",)

    data: str = ""
    width: int = 8
    cache: str | None = None
    epochs: int = 3  # another default for a run option
    devices: int | str = 1

    def default_run_name(self) -> str:
        return f"toy-{self.width}"

    def validate(self) -> ToyConfig:
        if not self.data:
            raise UserError("data is required")
        return self


def test_a_config_has_the_run_options_with_its_own_defaults():
    config = ToyConfig(data="d", output_dir="out")
    names = [f.name for f in dataclasses.fields(ToyConfig)]
    assert names[:3] == ["epochs", "max_minutes", "seed"]  # an overridden default keeps its place
    assert names[-3:] == ["data", "width", "cache"]
    assert (config.epochs, config.devices, config.precision, config.resume) == (3, 1, "auto", True)
    assert config.run_dir.as_posix() == "out/toy-8"
    assert ToyConfig(output_dir="out", run_name="mine").run_dir.as_posix() == "out/mine"
    options = RunOptions.from_config(config, monitor="val/loss", mode="min")
    assert (options.epochs, options.devices, options.seed) == (3, 1, 0)
    assert ToyConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    with pytest.raises(ValueError, match="unknown config keys"):
        ToyConfig.from_dict({**config.to_dict(), "colour": 1})


def test_only_other_fields_than_the_resumable_ones_make_another_run():
    a = ToyConfig(data="d/./x")
    same = ToyConfig(data="d/x", epochs=9, devices="auto", cache="c", run_name="r", resume=False)
    assert a.differences(same) == []
    assert [d.split()[0] for d in a.differences(ToyConfig(data="d/x", width=4, seed=1))] == [
        "seed",
        "width",
    ]


def test_open_run_checks_the_config_then_refuses_a_folder_of_another_run(tmp_path):
    with pytest.raises(UserError, match="data is required"):
        open_run(ToyConfig(output_dir=str(tmp_path)))
    config = ToyConfig(data="d", output_dir=str(tmp_path))
    assert open_run(config) == tmp_path / "toy-8"
    config.run_dir.mkdir()
    config.save(config.run_dir / "config.json")
    assert open_run(dataclasses.replace(config, epochs=10)) == config.run_dir  # a resume
    other = ToyConfig(data="d", output_dir=str(tmp_path), run_name="toy-8", width=16)
    with pytest.raises(UserError, match=r"holds another run .*width"):
        open_run(other)


def test_a_run_checkpoint_is_a_file_or_a_run_folders_best(tmp_path):
    run = tmp_path / "run"
    with pytest.raises(UserError, match="no toy checkpoint"):
        run_checkpoint(run, "toy")
    (run / "checkpoints").mkdir(parents=True)
    with pytest.raises(UserError, match="no toy checkpoint"):
        run_checkpoint(run, "toy")
    best = run / "checkpoints" / "best.ckpt"
    best.write_bytes(b"")
    assert run_checkpoint(run, "toy") == best
    assert run_checkpoint(str(best), "toy") == best
