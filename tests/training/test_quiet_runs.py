"""A training run prints its own lines only: no Lightning advertisement ("💡 Tip ... litlogger"),
hardware lines ("GPU available: ..."), "`Trainer.fit` stopped" or Lightning's own deprecations."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("lightning")

# what Lightning says on every run that a tvr run must not show
NOISE = ("💡", "Tip:", "litlogger", "litmodels", "GPU available:", "TPU available:",
         "LOCAL_RANK", "`Trainer.fit` stopped", "LeafSpec", "build time")  # fmt: skip


def test_lightnings_adverts_and_hardware_lines_are_dropped_and_its_other_notes_pass():
    from lightning.pytorch.utilities.rank_zero import rank_zero_info

    import tvr.training.runs  # noqa: F401  (installs the filters)

    cuda = logging.getLogger("lightning.pytorch.accelerators.cuda")
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    keep, top = Keep(), logging.getLogger("lightning.pytorch")
    top.addHandler(keep)  # Lightning's records do not reach the root logger
    level, top.level = top.level, logging.INFO
    try:
        rank_zero_info("💡 Tip: For seamless cloud logging and experiment tracking, try "
                       "installing [litlogger](https://pypi.org/project/litlogger/)")  # fmt: skip
        rank_zero_info("💡 Tip: For seamless cloud uploads and versioning, try installing "
                       "[litmodels](https://pypi.org/project/litmodels/)")  # fmt: skip
        rank_zero_info("GPU available: True (cuda), used: True")
        rank_zero_info("TPU available: False, using: 0 TPU cores")
        cuda.info("LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0]")
        rank_zero_info("`Trainer.fit` stopped: `max_epochs=3` reached.")
        rank_zero_info("Time limit reached. Signaling Trainer to stop.")
    finally:
        top.removeHandler(keep)
        top.level = level
    assert seen == ["Time limit reached. Signaling Trainer to stop."]


def test_a_tiny_training_run_shows_none_of_lightnings_lines(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "tvr", "train", "--source", "synthetic", "--model", "cnn+-g",
         "--setting", "event", "--image-size", "40x30", "--split-sizes",
         "train=16,val=8,test=8", "--batch-size", "8", "--epochs", "1", "--log-every-n-steps",
         "1", "--output-dir", str(tmp_path), "--run-name", "run", "--quiet"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "epoch 1/1: train loss" in done.stdout
    for noise in NOISE:
        assert noise not in done.stdout + done.stderr, noise
