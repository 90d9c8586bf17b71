"""Issue 38.3: a checkpoint file of random bytes is one line naming it, never an unpickling
traceback, for every loader of a checkpoint (TranceNet, the TRANCE scene parser, CLEVRER's
models, VTT, TRANCO) and the commands that read one."""

from __future__ import annotations

import importlib
import random
from pathlib import Path

import pytest

from tvr.cli import main
from tvr.core.errors import UserError


@pytest.fixture
def junk(tmp_path: Path) -> Path:
    path = tmp_path / "junk.ckpt"
    path.write_bytes(random.Random(0).randbytes(4096))  # an UnpicklingError for torch.load
    return path


MODULES = [
    ("tvr.trance.perception.module", "SceneParserModule"),
    ("tvr.clevrer.models.parser.module", "ParserModule"),
    ("tvr.clevrer.models.dynamics.module", "DynamicsModule"),
    ("tvr.clevrer.models.baselines.module", "BaselineModule"),
    ("tvr.clevrer.models.perception.module", "FrameParserModule"),
]


@pytest.mark.parametrize("module, name", MODULES)
def test_load_run_module_of_random_bytes_is_one_line(module, name, junk):
    from tvr.training.runs import load_run_module

    cls = getattr(importlib.import_module(module), name)
    with pytest.raises(UserError, match=r"junk\.ckpt: not a .*checkpoint"):
        load_run_module(cls, junk, "model")


def test_benchmark_loaders_of_random_bytes_are_one_line(junk, tmp_path):
    from tvr.trance.train.checkpoint import read_checkpoint as trance_checkpoint
    from tvr.tranco.train.checkpoint import load_trained
    from tvr.vtt.train.predict import load_module

    for load in (trance_checkpoint, load_trained, load_module):
        with pytest.raises(UserError, match=r"junk\.ckpt: not a checkpoint"):
            load(junk)


def test_cnn_weights_and_feature_caches_of_random_bytes(junk, tmp_path, caplog):
    from tvr.clevrer.models.baselines.model import load_cnn_weights
    from tvr.training.checkpoints import load_torch

    with pytest.raises(UserError, match=r"--cnn-weights .*junk\.ckpt: not a torch state dict"):
        load_cnn_weights(None, junk)  # type: ignore[arg-type]
    with pytest.raises(UserError, match=r"junk\.ckpt: not a feature part"):
        load_torch(junk, "a feature part")


def _fail(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def test_commands_reading_a_checkpoint_of_random_bytes(junk, tmp_path, capsys):
    samples = tmp_path / "s"
    assert main(["sample", "--out", str(samples), "--num", "2", "--quiet"]) == 0
    images = tmp_path / "images"
    images.mkdir()
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "best.ckpt").write_bytes(junk.read_bytes())
    data = ["--data", str(samples / "samples.jsonl")]
    out = ["--out", str(tmp_path / "out.jsonl")]
    for argv, name in [
        (["solve", *data, "--images", str(images), *out, "--checkpoint", str(junk)], "junk.ckpt"),
        (["solve", *data, "--images", str(images), *out, "--run", str(run)], "best.ckpt"),
        (["trance", "parser", "predict", "--checkpoint", str(junk), *data], "junk.ckpt"),
        (["predict", "--checkpoint", str(junk)], "junk.ckpt"),
        (["vtt", "predict", "--checkpoint", str(junk), *out], "junk.ckpt"),
        (["tranco", "predict", "--checkpoint", str(junk), "--data", str(tmp_path), *out],
         "junk.ckpt"),
    ]:
        line = _fail(argv, capsys)
        assert name in line and "not a" in line and "checkpoint" in line, (argv, line)
    assert not (tmp_path / "out.jsonl").exists()
