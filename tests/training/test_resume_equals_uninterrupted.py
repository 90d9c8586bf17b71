"""Resume equals an uninterrupted run, for every benchmark's training: a tiny run killed with
SIGKILL after its first epoch and run again ends with the same weights, metrics and predictions,
bit for bit on CPU, as the same run never stopped (issue 28: it differed by up to 3.4e-3)."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("lightning")

EPOCHS = 5
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    """Each benchmark's tiny training data, made once (CLEVRER's only if pybullet is there)."""
    from tests.tranco.tiny_dataset import make_tiny_dataset
    from tests.vtt.image_sets import write_image_set

    root = tmp_path_factory.mktemp("resume")
    found = {
        "tranco": make_tiny_dataset(root / "tranco"),
        "vtt": write_image_set(root / "vtt", {"train": 8, "val": 3, "test": 3}),
    }
    try:
        import pybullet  # noqa: F401
    except ImportError:
        return found
    from tvr.clevrer.generate.config import GenerateConfig
    from tvr.clevrer.generate.job import generate

    config = GenerateConfig(num=8, seed=3, shard_size=8, backend="none", masks=False)
    generate(config.validate(), root / "clevrer", progress=False)
    found["clevrer"] = root / "clevrer"
    return found


RUNS = {
    "trance": ["train", "--source", "synthetic", "--model", "cnn+-g", "--setting", "event",
               "--image-size", "40x30", "--split-sizes", "train=16,val=8,test=8",
               "--batch-size", "8", "--accelerator", "cpu", "--quiet"],
    "clevrer": ["clevrer", "train", "lstm", "--data", "{clevrer}", "--embed-dim", "16",
                "--hidden", "24", "--batch-videos", "2", "--accelerator", "cpu", "--threads",
                "1"],
    "vtt": ["vtt", "train", "--data", "{vtt}", "--model-size", "tiny", "--batch-size", "4",
            "--warmup-steps", "2", "--accelerator", "cpu", "--quiet"],
    "tranco": ["tranco", "train", "--data", "{tranco}", "--model", "small-g", "--batch-size",
               "4", "--warmup-steps", "0", "--lr", "1e-3", "--accelerator", "cpu", "--quiet"],
}  # fmt: skip


def _argv(name: str, datasets: dict, out: Path) -> list[str]:
    if name == "clevrer" and "clevrer" not in datasets:
        pytest.skip("pybullet is not installed")
    args = [a.format(**{k: str(v) for k, v in datasets.items()}) for a in RUNS[name]]
    return [sys.executable, "-m", "tvr", *args, "--epochs", str(EPOCHS), "--output-dir",
            str(out), "--run-name", "run"]  # fmt: skip


def _finished_epochs(run: Path) -> int:
    try:
        with (run / "metrics.csv").open(newline="") as f:
            return len(list(csv.DictReader(f)))
    except (OSError, csv.Error):
        return 0


def _weights(run: Path) -> dict:
    ckpt = torch.load(run / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=False)
    return ckpt["state_dict"]


def _outputs(run: Path) -> dict[str, bytes]:
    """The run's prediction and evaluation files (not its logs), with its own path elided."""
    skip = ("tensorboard", "checkpoints")
    here = str(run.parent).encode()
    return {str(p.relative_to(run)): p.read_bytes().replace(here, b"OUT")
            for p in sorted(run.rglob("*"))
            if p.is_file() and p.suffix in (".jsonl", ".json") and p.name != "config.json"
            and not any(part in skip for part in p.relative_to(run).parts)}  # fmt: skip


def _metrics(run: Path) -> list[dict]:
    with (run / "metrics.csv").open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_run_killed_after_epoch_one_and_resumed_equals_one_never_stopped(
    name, datasets, tmp_path
):
    whole = _argv(name, datasets, tmp_path / "whole")
    done = subprocess.run(whole, capture_output=True, text=True, env=ENV, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]

    argv = _argv(name, datasets, tmp_path / "killed")
    run = tmp_path / "killed" / "run"
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    deadline = time.monotonic() + 600
    last = run / "checkpoints" / "last.ckpt"
    while not last.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)  # last.ckpt is written atomically: once there, it is whole
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, f"the run ended before it was killed: {err[-500:]}"
    resumed_from = torch.load(last, map_location="cpu", weights_only=False)["epoch"]
    assert 0 <= resumed_from < EPOCHS - 1  # it resumes from a checkpoint, mid-run
    again = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]

    a, b = _weights(tmp_path / "whole" / "run"), _weights(run)
    assert a.keys() == b.keys()
    differ = [k for k in a if not torch.equal(a[k], b[k])]
    assert not differ, f"weights differ: {differ[:5]}"
    drop = ("time", "lr")  # wall-clock columns differ by nature
    strip = [{k: v for k, v in r.items() if not any(d in k for d in drop)}
             for r in _metrics(tmp_path / "whole" / "run")]  # fmt: skip
    assert strip == [{k: v for k, v in r.items() if not any(d in k for d in drop)}
                     for r in _metrics(run)]  # fmt: skip
    assert _outputs(tmp_path / "whole" / "run") == _outputs(run)
