"""The job engine alone, on a tiny task that is not TRANCE: every shard built once and published,
in this process, on a pool of 2 processes, after a dead worker, on a resume, and on Ray."""

from __future__ import annotations

import os
import shutil
import signal
import uuid
from collections import Counter
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

import pytest

from tvr.core import jobs
from tvr.core.jobs import pending, run_shards

N = 10


@dataclass
class Job:
    key: int
    before: int  # the sum of the values of all earlier shards: a chain made in the driver


def value(k: int) -> int:
    return 3 * k + 1


class TextWorker:
    """Writes shard k: a file (even k) or a folder with a file in a subfolder (odd k)."""

    def __init__(self, task: TextTask, threads: int | None) -> None:
        self.task = task
        made = task.root / "log" / "workers"
        made.mkdir(parents=True, exist_ok=True)
        (made / f"{os.getpid()}-{uuid.uuid4().hex}").write_text(str(threads))

    def build(self, job: Job, dest: Path, progress) -> None:
        root = self.task.root
        (root / "log" / "builds" / f"{job.key}-{os.getpid()}-{uuid.uuid4().hex}").touch()
        text = f"shard {job.key}: value {value(job.key)}, after {job.before}\n"
        if job.key % 2:
            (dest / "sub").mkdir(parents=True)
            (dest / "a.txt").write_text(text)
            (dest / "sub" / "b.txt").write_text(str(job.key))
        else:
            dest.write_text(text)
        if job.key == self.task.fail_on:
            raise ValueError(f"cannot build shard {job.key}")
        marker = root / "log" / "crashed"
        if job.key == self.task.crash_on and (self.task.crash_always or not marker.exists()):
            marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)  # built, not published: a native crash
        progress(value(job.key))

    def close(self) -> None:
        (self.task.root / "log" / "closed").touch()


@dataclass
class TextTask:
    root: Path
    crash_on: int | None = None
    crash_always: bool = False
    fail_on: int | None = None
    name = "text job"

    def plan(self) -> list[int]:
        return list(range(N))

    def path(self, key: int) -> Path:
        return self.root / "shards" / f"s{key:02d}{'' if key % 2 else '.txt'}"

    def is_built(self, key: int) -> bool:
        return self.path(key).exists()

    def label(self, key: int) -> str:
        return f"s{key:02d}"

    def prepare(self) -> None:
        (self.root / "shards").mkdir(parents=True, exist_ok=True)
        (self.root / "log" / "builds").mkdir(parents=True, exist_ok=True)

    def jobs(self, todo: list[int]):
        before = 0
        for k in range(max(todo) + 1):
            if k in todo:
                # how many shards were published when the engine drew job k
                published = sum(self.is_built(j) for j in self.plan())
                with open(self.root / "log" / "draws", "a") as f:
                    f.write(f"{k} {published}\n")
                yield Job(k, before)
            else:  # read back from the finished shard, as a resumed chain does
                text = (self.path(k) / "a.txt" if k % 2 else self.path(k)).read_text()
                assert text.startswith(f"shard {k}: value {value(k)},")
            before += value(k)

    def make_worker(self, threads: int | None) -> TextWorker:
        return TextWorker(self, threads)


def contents(root: Path) -> dict[str, bytes]:
    shards = root / "shards"
    return {p.relative_to(shards).as_posix(): p.read_bytes() for p in shards.rglob("*")
            if p.is_file()}  # fmt: skip


def expected() -> dict[str, bytes]:
    out, before = {}, 0
    for k in range(N):
        text = f"shard {k}: value {value(k)}, after {before}\n".encode()
        if k % 2:
            out[f"s{k:02d}/a.txt"] = text
            out[f"s{k:02d}/sub/b.txt"] = str(k).encode()
        else:
            out[f"s{k:02d}.txt"] = text
        before += value(k)
    return out


def builds(root: Path) -> Counter:
    return Counter(int(p.name.split("-")[0]) for p in (root / "log" / "builds").iterdir())


def workers_made(root: Path) -> list[tuple[int, str]]:
    return [(int(p.name.split("-")[0]), p.read_text()) for p in (root / "log" / "workers").iterdir()]


def draws(root: Path) -> dict[int, int]:
    lines = (root / "log" / "draws").read_text().split("\n")
    return {int(a): int(b) for a, b in (line.split() for line in lines if line)}


def run(task: TextTask, **kw) -> list[int]:
    units: list[int] = []
    run_shards(task, progress=units.append, **kw)
    return units


def no_temporaries(root: Path) -> bool:
    return not [p for p in (root / "shards").iterdir() if jobs.TEMP_MARK in p.name]


def test_in_process_builds_each_shard_once_lazily(tmp_path):
    task = TextTask(tmp_path)
    assert pending(task) == list(range(N))
    units = run(task)
    assert contents(tmp_path) == expected()
    assert builds(tmp_path) == Counter(range(N))
    assert sum(units) == sum(value(k) for k in range(N)) and len(units) == N
    assert workers_made(tmp_path) == [(os.getpid(), "None")]  # one worker, no thread limit
    assert (tmp_path / "log" / "closed").exists()
    # one job drawn at a time: job k after shards 0..k-1 were published
    assert draws(tmp_path) == {k: k for k in range(N)}
    assert pending(task) == [] and no_temporaries(tmp_path)


def test_a_pool_of_two_makes_the_same_shards(tmp_path):
    task = TextTask(tmp_path)
    units = run(task, workers=2)
    assert contents(tmp_path) == expected()
    assert builds(tmp_path) == Counter(range(N))
    assert sum(units) == sum(value(k) for k in range(N))
    made = workers_made(tmp_path)
    pids = Counter(pid for pid, _ in made)
    assert os.getpid() not in pids and 1 <= len(pids) <= 2
    assert all(n == 1 for n in pids.values())  # one worker per process, made once
    assert {threads for _, threads in made} == {str(max(1, (os.cpu_count() or 1) // 2))}
    # drawn lazily, two per worker ahead: job k (k >= 4) only after k - 3 shards were published
    drawn = draws(tmp_path)
    assert sorted(drawn) == list(range(N))
    assert all(drawn[k] >= k - 3 for k in range(4, N)), drawn
    assert no_temporaries(tmp_path)


def test_a_dead_worker_is_replaced_and_its_shard_built_again(tmp_path, caplog):
    task = TextTask(tmp_path, crash_on=3)
    with caplog.at_level("WARNING", logger="tvr.core.jobs"):
        units = run(task, workers=2)
    assert (tmp_path / "log" / "crashed").exists()
    assert "text job: a worker process died; new workers build the unfinished shards" in caplog.text
    assert "s03" in caplog.text and "restart 1 of 3" in caplog.text
    assert contents(tmp_path) == expected()  # shard 3's unpublished copy was not kept
    assert builds(tmp_path)[3] == 2 and set(builds(tmp_path)) == set(range(N))
    assert no_temporaries(tmp_path)
    # every shard's progress is reported once: the dead worker's shard 3 never reported
    assert Counter(units)[value(3)] == 1


def test_a_worker_that_always_dies_ends_the_job_naming_its_shard(tmp_path, monkeypatch):
    monkeypatch.setattr(jobs, "POOL_RESTARTS", 1)
    task = TextTask(tmp_path, crash_on=3, crash_always=True)
    with pytest.raises(RuntimeError, match=r"a worker process died 2 times \(unfinished: .*s03"):
        run(task, workers=2)
    assert builds(tmp_path)[3] == 2
    assert not task.is_built(3) and task.is_built(0)  # finished shards are kept
    assert no_temporaries(tmp_path)
    # a rerun without the crash finishes the job with the same data
    run(TextTask(tmp_path))
    assert contents(tmp_path) == expected()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_worker_error_stops_the_job_and_leaves_no_temporary(tmp_path, workers):
    task = TextTask(tmp_path, fail_on=2)
    with pytest.raises(ValueError, match="cannot build shard 2"):
        run(task, workers=workers)
    assert not task.is_built(2) and (task.is_built(0) or task.is_built(1))
    assert no_temporaries(tmp_path)


def test_a_resume_builds_only_the_missing_shards(tmp_path):
    task = TextTask(tmp_path)
    run(task)
    (tmp_path / "shards" / "s04.txt").unlink()
    shutil.rmtree(tmp_path / "shards" / "s07")
    (tmp_path / "log" / "draws").unlink()
    # leftovers of a killed run: a half-written file and folder
    (tmp_path / "shards" / ".s04.txt.tmp-1-deadbeef").write_text("half")
    (tmp_path / "shards" / ".s07.tmp-1-deadbeef" / "sub").mkdir(parents=True)
    assert pending(task) == [4, 7]
    units = run(task)
    assert units == [value(4), value(7)]
    assert builds(tmp_path) == Counter(range(N)) + Counter([4, 7])
    assert sorted(draws(tmp_path)) == [4, 7]
    assert contents(tmp_path) == expected()  # the chain continued from the finished shards
    assert no_temporaries(tmp_path)
    # nothing left to do: prepared, nothing built
    assert run(task, workers=2) == [] and builds(tmp_path) == Counter(range(N)) + Counter([4, 7])


class _PoolThatBreaksOnSubmit:
    """ProcessPoolExecutor's stand-in, in this process: a job runs when submitted, except shard
    2, whose "worker dies" once: its future fails with BrokenProcessPool and so does every later
    submit to that pool, as with a real broken pool."""

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
        if self.broken:
            raise BrokenProcessPool("a child process terminated abruptly")
        fut = Future()
        if job.key == 2 and not type(self).crashed:
            type(self).crashed = self.broken = True
            fut.set_exception(BrokenProcessPool("a child process terminated abruptly"))
        else:
            fut.set_result(fn(job))
        return fut


def test_a_pool_broken_while_submitting_loses_no_shard(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(jobs, "ProcessPoolExecutor", _PoolThatBreaksOnSubmit)
    with caplog.at_level("WARNING", logger="tvr.core.jobs"):
        run(TextTask(tmp_path), workers=2)
    assert _PoolThatBreaksOnSubmit.crashed
    # 4 jobs taken (2 per worker): 0 and 1 built, 2 failed, and 3, whose submit failed
    assert "(s02, s03; restart 1 of 3)" in caplog.text
    assert contents(tmp_path) == expected()
    assert builds(tmp_path) == Counter(range(N))


@pytest.mark.slow
def test_ray_local_makes_the_same_shards(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    # the actors import this test module
    root = str(Path(__file__).resolve().parents[2])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    task = TextTask(tmp_path)
    units = run(task, workers=2, ray="local")
    assert contents(tmp_path) == expected()
    assert sorted(units) == sorted(value(k) for k in range(N))  # reported by the driver
    assert os.getpid() not in {pid for pid, _ in workers_made(tmp_path)}
    assert no_temporaries(tmp_path)


def test_atomic_writes_make_files_as_open_would(tmp_path):
    """Files written through a temporary file get the mode `open` would give them (mkstemp's
    are 0600: a dataset made by one user was unreadable to the others)."""
    from tvr.core.jsonl import write_file_bytes, write_json, write_jsonl, write_text

    write_json(tmp_path / "a.json", {"a": 1})
    write_jsonl(tmp_path / "b.jsonl", [{"b": 2}])
    write_text(tmp_path / "c.txt", "c")
    write_file_bytes(tmp_path / "d.bin", b"d")
    with open(tmp_path / "e.txt", "w") as f:  # what open makes under this umask
        f.write("e")
    expected = (tmp_path / "e.txt").stat().st_mode & 0o777
    for name in ("a.json", "b.jsonl", "c.txt", "d.bin"):
        assert (tmp_path / name).stat().st_mode & 0o777 == expected, name
