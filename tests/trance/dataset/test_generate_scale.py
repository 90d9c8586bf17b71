"""`tvr generate` at scale: a killed job resumes to the same data; workers and Ray make the same data.

Data is compared by the sha256 of the symbolic content (each split's samples, as canonical JSON)
and by decoded pixels (the PNGs decoded, and the small arrays), never by PNG bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("moderngl")
pytest.importorskip("PIL")

import tvr
from tvr.trance.data.store import open_dataset
from tvr.trance.generate.config import DatasetConfig, split_seed
from tvr.trance.generate.job import generate_dataset
from tvr.trance.sampling.sampler import ShardChain
from tvr.trance.world.vocab import IMAGE_SLOTS

TINY = ["--preset", "preview", "--image-size", "64x48", "--small-size", "32x32"]


def _tiny_config(**kw) -> DatasetConfig:
    return DatasetConfig(preset="preview", image_width=64, image_height=48, small_width=32,
                         small_height=32, **kw)  # fmt: skip


def fingerprint(root: Path) -> tuple[str, dict[str, list[np.ndarray]]]:
    """(sha256 of the symbolic content of every split, decoded pixels per split)."""
    ds = open_dataset(root)
    h = hashlib.sha256()
    pixels = {}
    for name in ds.splits:
        sp = ds.split(name)
        h.update(name.encode())
        for s in sp.samples():
            h.update(json.dumps(s.to_dict(), sort_keys=True).encode())
        pixels[name] = [
            np.stack([sp.image(i, st, v, size) for st, v in IMAGE_SLOTS])
            for i in range(len(sp))
            for size in ("full", "small")
        ]
    return h.hexdigest(), pixels


def assert_same_data(a: Path, b: Path) -> None:
    ha, pa = fingerprint(a)
    hb, pb = fingerprint(b)
    assert ha == hb
    assert pa.keys() == pb.keys()
    for name in pa:
        assert len(pa[name]) == len(pb[name])
        assert all(np.array_equal(x, y) for x, y in zip(pa[name], pb[name], strict=True))


def _env() -> dict[str, str]:
    src = str(Path(tvr.__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


def test_killed_job_resumes_to_the_same_data(tmp_path):
    argv = ["--setting", "event", "--split-sizes", "train=10,val=2,test=2", "--shard-size", "1",
            "--seed", "4", *TINY, "--quiet"]  # fmt: skip
    killed = tmp_path / "killed"
    cmd = [sys.executable, "-m", "tvr", "generate", "--out", str(killed), *argv]
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    first = killed / "train" / "shards" / "shard-00000" / "manifest.json"
    deadline = time.monotonic() + 120
    while not first.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert first.exists(), proc.stderr.read().decode()
    assert proc.returncode == -signal.SIGKILL  # it was really killed mid-run
    done = list((killed / "train" / "shards").glob("shard-*"))
    assert 1 <= len(done) < 10 and not (killed / "test" / "split.json").exists()
    # a rerun finishes it
    assert subprocess.run(cmd, env=_env(), capture_output=True).returncode == 0
    whole = tmp_path / "whole"
    subprocess.run([sys.executable, "-m", "tvr", "generate", "--out", str(whole), *argv],
                   env=_env(), check=True, capture_output=True)  # fmt: skip
    assert_same_data(killed, whole)
    open_dataset(killed).verify()
    # the default is global balance: the resume rebuilt the chain of balance counts
    assert json.loads((killed / "config.json").read_text())["balance_scope"] == "global"


def test_a_dead_worker_is_replaced_and_its_shard_built_again(tmp_path, monkeypatch, caplog):
    """A worker killed by a signal while it holds shard 1 (built in its temporary folder, not
    published; as a segfault in the renderer would) is replaced, shard 1 is built again from the
    same samples, and the data equals a run without the crash; no half-written folder is left."""
    from tests.trance.dataset import crash_worker
    from tvr.trance.generate import job as dataset_generate

    config = _tiny_config(setting="event", split_sizes={"train": 6, "val": 1, "test": 1},
                          shard_size=2, seed=5)  # fmt: skip
    marker = tmp_path / "crash-marker"
    monkeypatch.setenv(crash_worker.MARKER_ENV, str(marker))
    monkeypatch.setattr(dataset_generate, "DatasetTask", crash_worker.CrashOnceTask)
    with caplog.at_level("WARNING", logger="tvr.core.jobs"):
        crashed = generate_dataset(config, tmp_path / "crashed", workers=2, progress=False)
    assert marker.exists(), "the worker of shard 1 was killed"
    assert "a worker process died; new workers build the unfinished shards" in caplog.text
    assert "train/shard-00001" in caplog.text
    assert not list((tmp_path / "crashed").rglob("*.tmp-*"))
    monkeypatch.undo()
    whole = generate_dataset(config, tmp_path / "whole", progress=False)
    assert_same_data(crashed.root, whole.root)
    crashed.verify()


class _PoolThatBreaksOnSubmit:
    """ProcessPoolExecutor's stand-in, in this process: each job runs when it is submitted,
    except train shard 1, whose "worker dies" once: its future fails with BrokenProcessPool and
    every later submit to that pool raises it, as a real broken pool's does. This is the order
    of events that lost shards in a real run: the pool broke while jobs were being submitted."""

    crashed = False

    def __init__(self, max_workers, mp_context, initializer, initargs):
        initializer(*initargs)
        self.broken = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def shutdown(self, wait=True, cancel_futures=False):
        pass

    def submit(self, fn, job):
        from concurrent.futures import Future
        from concurrent.futures.process import BrokenProcessPool

        if self.broken:
            raise BrokenProcessPool("a child process terminated abruptly")
        fut = Future()
        if job.split == "train" and job.shard == 1 and not type(self).crashed:
            type(self).crashed = self.broken = True
            fut.set_exception(BrokenProcessPool("a child process terminated abruptly"))
        else:
            fut.set_result(fn(job))
        return fut


def test_a_pool_broken_while_submitting_loses_no_shard(tmp_path, monkeypatch, caplog):
    """When the pool breaks, every shard taken and not yet on disk is built again, also those
    whose submit failed (before the fix they were dropped and the run ended with a
    FileNotFoundError for their samples.jsonl)."""
    from tvr.core import jobs

    config = _tiny_config(setting="basic", split_sizes={"train": 6, "val": 1, "test": 1},
                          shard_size=2, seed=6)  # fmt: skip
    monkeypatch.setattr(jobs, "ProcessPoolExecutor", _PoolThatBreaksOnSubmit)
    with caplog.at_level("WARNING", logger="tvr.core.jobs"):
        crashed = generate_dataset(config, tmp_path / "crashed", workers=2, progress=False)
    assert _PoolThatBreaksOnSubmit.crashed
    assert "(train/shard-00001, train/shard-00002, val/shard-00000; restart 1 of 3)" in caplog.text
    monkeypatch.undo()
    whole = generate_dataset(config, tmp_path / "whole", progress=False)
    assert_same_data(crashed.root, whole.root)
    crashed.verify()


def test_workers_and_ray_make_the_same_data(tmp_path):
    pytest.importorskip("ray")
    config = _tiny_config(setting="view", split_sizes={"train": 6, "val": 1, "test": 1},
                          shard_size=2, seed=3)  # fmt: skip
    one = generate_dataset(config, tmp_path / "one", progress=False)
    pool = generate_dataset(config, tmp_path / "pool", workers=2, progress=False)
    ray = generate_dataset(config, tmp_path / "ray", workers=2, ray="local", progress=False)
    assert_same_data(one.root, pool.root)
    assert_same_data(one.root, ray.root)
    ray.verify()
    # global balance (the default): the train shards are one chain of balance counts
    assert config.balance_scope == "global"
    chain = ShardChain(config.sampler, split_seed(config.seed, "train"))
    expected = [s for k in range(3) for s in chain.sample(k, 2)]
    made = [s.to_dict() for s in one.split("train").samples()]
    for d in made:
        del d["view"]
    assert made == [s.to_dict() for s in expected]
    # and another seed is other data
    other = generate_dataset(
        _tiny_config(setting="view", split_sizes={"train": 2, "val": 0, "test": 0}, seed=4),
        tmp_path / "other",
        progress=False,
    )
    assert other.split("train").sample(0).objects != one.split("train").sample(0).objects


def test_cycles_backend_makes_the_same_samples(tmp_path):
    pytest.importorskip("bpy")
    kw = {"setting": "event", "split_sizes": {"train": 2, "val": 0, "test": 0}, "seed": 1}
    raster = generate_dataset(_tiny_config(**kw), tmp_path / "r", progress=False)
    cycles = generate_dataset(_tiny_config(backend="cycles", **kw), tmp_path / "c", progress=False)
    a, b = raster.split("train"), cycles.split("train")
    assert [s.to_dict() for s in a.samples()] == [s.to_dict() for s in b.samples()]
    assert cycles.config["backend"] == "cycles"
    for i in range(2):
        for stage, view in IMAGE_SLOTS:
            x = a.image(i, stage, view, "full").astype(float).ravel()
            y = b.image(i, stage, view, "full").astype(float).ravel()
            assert y.shape == (64 * 48 * 3,) and y.std() > 5  # a real picture, not a blank
            assert np.corrcoef(x, y)[0, 1] > 0.5  # the same scene, drawn by two renderers
