"""Issues 38.4 and 42.8: one typed check of every config (tvr.core.typed_config). A wrongly typed
value ("four", null, [4], 2.5, true for an int) in a `--config` file or a config.json is one line
naming the file, the key and the expected type, before anything is written; bool is no int."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

import pytest

from tvr.cli import main
from tvr.core.errors import UserError
from tvr.core.typed_config import bounded, build_config, check_value

WRONG_INTS = ["four", None, [4], 2.5, True, {"n": 4}]


@dataclass(frozen=True)
class Inner:
    size: tuple[int, int] = (2, 3)


@dataclass(frozen=True)
class Example:
    steps: int = bounded(4, 1, 10)
    rate: float = 0.5
    name: str | None = None
    flag: bool = False
    kind: Literal["a", "b"] = "a"
    sizes: dict[str, int] = field(default_factory=dict)
    names: tuple[str, ...] = ()
    inner: Inner = field(default_factory=Inner)

    def validate(self) -> Example:
        if self.rate > 1:
            raise UserError(f"rate: at most 1, got {self.rate}")
        return self


@pytest.mark.parametrize("value", WRONG_INTS)
def test_a_wrong_int_names_the_file_the_key_and_the_type(value):
    with pytest.raises(UserError) as err:
        build_config(Example, {"steps": value}, "c.json")
    assert str(err.value) == f"c.json: steps: expected an integer, got {json.dumps(value)}"


def test_types_bounds_and_conversions():
    ok = build_config(Example, {"steps": 10, "rate": 1, "name": None, "names": ["x"],
                                "sizes": {"train": 2}, "inner": {"size": [4, 5]}}, "c.json")  # fmt: skip
    assert (ok.names, ok.inner.size, ok.rate) == (("x",), (4, 5), 1)
    for values, message in [
        ({"steps": 0}, "c.json: steps: expected an integer in 1..10, got 0"),
        ({"rate": True}, "c.json: rate: expected a number, got true"),
        ({"rate": float("nan")}, "c.json: rate: expected a number"),
        ({"flag": 1}, "c.json: flag: expected true or false, got 1"),
        ({"name": 3}, "c.json: name: expected a string or null, got 3"),
        ({"kind": "c"}, 'c.json: kind: expected one of "a", "b", got "c"'),
        ({"sizes": {"train": "2"}}, 'c.json: sizes.train: expected an integer, got "2"'),
        ({"names": "xy"}, "c.json: names: expected a list of strings"),
        ({"inner": {"size": [4]}}, "c.json: inner.size: expected a list of 2 integers, got [4]"),
        ({"inner": {"size": [4, True]}}, "c.json: inner.size[1]: expected an integer, got true"),
        ({"rate": 2}, "c.json: rate: at most 1, got 2"),  # the class's own check, file named
        ({"nope": 1}, "c.json: unknown config option(s): ['nope']"),
    ]:
        with pytest.raises(UserError) as err:
            build_config(Example, values, "c.json")
        assert str(err.value).startswith(message), (values, str(err.value))
    with pytest.raises(UserError):
        check_value(int, False, "k", "w")


def _one_line(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


@pytest.mark.parametrize("value", WRONG_INTS)
def test_sample_config_is_checked_before_anything_is_written(value, tmp_path, capsys):
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"max_steps": value}))
    out = tmp_path / "s"
    line = _one_line(["sample", "--out", str(out), "--num", "3", "--config", str(config),
                      "--quiet"], capsys)  # fmt: skip
    assert "c.json: max_steps: expected an integer" in line, line
    assert not out.exists()
    config.write_text(json.dumps({"max_steps": 2}))  # the valid rerun is not refused
    assert main(["sample", "--out", str(out), "--num", "3", "--config", str(config),
                 "--quiet"]) == 0  # fmt: skip


def test_generate_config_names_the_sampler_key(tmp_path, capsys):
    config = tmp_path / "g.toml"
    for text, key in [("[sampler]\nmax_steps = 2.5\n", "sampler.max_steps"),
                      ("shard_size = true\n", "shard_size"),
                      ("image_width = \"320\"\n", "image_width")]:  # fmt: skip
        config.write_text(text)
        line = _one_line(["generate", "--out", str(tmp_path / "g"), "--num", "3", "--config",
                          str(config), "--quiet"], capsys)  # fmt: skip
        assert f"g.toml: {key}: expected an integer" in line, line
    assert not (tmp_path / "g").exists()


def test_training_configs_of_every_benchmark(tmp_path, capsys):
    pytest.importorskip("torch")
    config = tmp_path / "run.json"
    config.write_text(json.dumps({"epochs": "four"}))
    line = _one_line(["train", "--config", str(config), "--source", "synthetic"], capsys)
    assert "run.json: epochs: expected an integer, got \"four\"" in line
    line = _one_line(["tranco", "train", "--config", str(config), "--data", str(tmp_path)], capsys)
    assert "run.json: epochs: expected an integer" in line
    from tvr.clevrer.models.perception.config import DetectorConfig
    from tvr.trance.perception.config import SceneParserConfig
    from tvr.trance.train.config import TrainConfig
    from tvr.vtt.train.config import VttTrainConfig

    with pytest.raises(UserError, match=r"run\.json: batch_size: expected an integer, got true"):
        TrainConfig.from_dict({"batch_size": True}, "run.json")
    for cls in (VttTrainConfig, DetectorConfig, SceneParserConfig):
        with pytest.raises(UserError, match=r"run\.json: num_workers: expected an integer >= 0"):
            cls.from_dict({"num_workers": -1}, "run.json")
        with pytest.raises(UserError, match=r"run\.json: seed: expected an integer, got 2\.5"):
            cls.from_dict({"seed": 2.5}, "run.json")


def test_job_and_set_configs(tmp_path):
    from tvr.clevrer.generate.config import GenerateConfig
    from tvr.clevrer.models.sets import split_indices
    from tvr.vtt.data.build import BuildConfig

    with pytest.raises(UserError, match=r"OUT/config.json: max_steps: expected an integer"):
        BuildConfig.from_dict({"coin": "c.json", "max_steps": None}, "OUT/config.json")
    assert BuildConfig.from_dict({"coin": "c.json"}).coin == "c.json"
    saved = GenerateConfig(num=4).to_dict()
    saved["world"]["n_objects"] = [4, "6"]
    (tmp_path / "config.json").write_text(json.dumps(saved))
    with pytest.raises(UserError, match=r"config\.json: world\.n_objects\[1\]: expected an integer"):
        split_indices(tmp_path, "train")
    saved["world"]["n_objects"] = [4, 6]
    saved["num"] = True
    (tmp_path / "config.json").write_text(json.dumps(saved))
    with pytest.raises(UserError, match=r"config\.json: num: expected an integer, got true"):
        split_indices(tmp_path, "train")
