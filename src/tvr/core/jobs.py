"""The sharded job engine: build shards in this process, a spawn process pool or on Ray; resume.

A job is a list of shards, each built by a worker into a temporary path and renamed into place
when complete. The engine knows nothing of what a shard holds: a benchmark describes its job as
a `ShardTask`, and its workers as `ShardWorker`s.

The contract
------------
`task.name`
    names the job in messages ("generate data/ev").
`task.plan() -> list[key]`
    every shard's key, in order. Keys are hashable and picklable (an int, a tuple).
`task.path(key) -> Path`
    where the finished shard lives: one file or one folder. Its folder holds nothing else whose
    name starts with "." and contains ".tmp-" (the engine's temporary paths).
`task.is_built(key) -> bool`
    whether the shard is finished. A finished shard is never built again.
`task.label(key) -> str`
    the shard in messages ("train/shard-00001").
`task.prepare() -> None`
    called once before any shard is built, after this process's worker started or Ray was
    joined (so a worker that cannot start fails before anything is written): create the output
    folder, write its config.
`task.jobs(todo) -> Iterator[job]`
    one job per key of `todo`, in that order, drawn lazily: two per worker ahead of the
    workers, then one each time a shard is finished. So the driver may make job k from the
    jobs before it (a balance chain over the shards), a few shards ahead of the workers.
    `job.key` is its shard's key. Jobs are pickled to the workers.
`task.make_worker(threads) -> ShardWorker`
    one per worker process (made on its first job), Ray actor (1 thread), or run in this
    process (`threads` None: no limit). A worker holds what is costly to make (a renderer).
    The task is pickled to worker processes and Ray actors (a module-level class).
`worker.build(job, dest, progress) -> None`
    write the shard of `job` at `dest`, which does not exist yet: a file or a folder, as
    `task.path` (on Ray: files only, empty folders are not sent). Call `progress(n)` for n
    units of work done. Must be deterministic from the job alone (a rebuilt shard is the same).
`worker.close() -> None`
    release what the worker holds.

What the engine guarantees
--------------------------
- A shard is built at `.NAME.tmp-PID-RAND` beside its path and renamed into place, so a shard
  path always was complete; a killed job loses at most the shards in progress, and the next
  run removes the temporary leftovers (`remove_temporaries`) and builds only the missing shards.
- Process pool (`workers` > 1): `spawn` workers (native libraries that do not survive a fork),
  each with `cpu_count // workers` threads. A worker that dies (a native crash, the OOM killer)
  breaks the pool; a new pool builds again every shard taken and not yet published, however the
  break met the submitting of jobs, up to `POOL_RESTARTS` times, then a RuntimeError names them.
  The workers end when the driver dies, even by SIGKILL (`die_with_parent`), and with them the
  multiprocessing resource tracker: a killed job leaves no process behind.
- Ray (`ray` = "local", "auto" or an address): one actor per worker (or per CPU of a cluster)
  builds shards in its own temporary folder and sends the files back; the driver writes and
  publishes them, so the machines share no file system.
- At the end every shard of `todo` is built, or a RuntimeError names the missing ones.
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import multiprocessing
import os
import queue as queue_mod
import shutil
import signal
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Protocol

from tvr.core.errors import UserError
from tvr.core.extras import missing_extra
from tvr.core.manifest import save_config

log = logging.getLogger(__name__)

#: how many times a dead worker pool (a native crash, the OOM killer) is replaced before the job
#: gives up; the shards it was building are built again from the same jobs
POOL_RESTARTS = 3

TEMP_MARK = ".tmp-"

Progress = Callable[[int], None]


class ShardWorker(Protocol):
    """Builds shards; made once per worker process, Ray actor or in-process run."""

    def build(self, job: Any, dest: Path, progress: Progress) -> None: ...

    def close(self) -> None: ...


class ShardTask(Protocol):
    """A job of shards, as the engine sees it (the contract is in the module docstring)."""

    name: str

    def plan(self) -> list[Hashable]: ...

    def path(self, key: Any) -> Path: ...

    def is_built(self, key: Any) -> bool: ...

    def label(self, key: Any) -> str: ...

    def prepare(self) -> None: ...

    def jobs(self, todo: list[Any]) -> Iterator[Any]: ...

    def make_worker(self, threads: int | None) -> ShardWorker: ...


# --- temporary paths and publishing ------------------------------------------------------------
def temp_path(final: Path) -> Path:
    """A fresh temporary path beside `final`, for building it."""
    return final.parent / f".{final.name}{TEMP_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}"


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def remove_temporaries(folder: Path, final_name: str = "") -> None:
    """Remove the temporary paths in `folder` (of shard `final_name` only, if given): the
    leftovers of a killed run or a dead worker, never data."""
    folder = Path(folder)
    if folder.is_dir():
        pattern = f".{final_name}{TEMP_MARK}*" if final_name else f".*{TEMP_MARK}*"
        for tmp in folder.glob(pattern):
            _remove(tmp)


def publish(tmp: Path, final: Path) -> bool:
    """Rename a finished temporary shard into place; False if another run got there first (its
    shard is kept and `tmp` removed)."""
    try:
        os.rename(tmp, final)
        return True
    except OSError:
        if final.exists():
            _remove(tmp)
            return False
        raise


def build_and_publish(task: ShardTask, worker: ShardWorker, job: Any, progress: Progress) -> None:
    """Build the shard of `job` at a temporary path and publish it."""
    final = task.path(job.key)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(final)
    try:
        worker.build(job, tmp, progress)
    except BaseException:
        _remove(tmp)
        raise
    publish(tmp, final)


# --- the job -----------------------------------------------------------------------------------
def pending(task: ShardTask) -> list[Any]:
    """The keys of the shards not built yet, in plan order."""
    return [k for k in task.plan() if not task.is_built(k)]


def run_shards(
    task: ShardTask,
    todo: list[Any] | None = None,
    *,
    workers: int = 1,
    ray: str | None = None,
    progress: Progress | None = None,
) -> None:
    """Build the shards of `todo` (default: `pending(task)`): in this process, on `workers`
    spawned processes, or on Ray (`ray`: "local" with `workers` CPUs, "auto", an address);
    `progress(n)` hears of n units of work done. The task is prepared even if nothing is to do."""
    todo = pending(task) if todo is None else list(todo)
    report = progress or _ignore
    if not todo:
        _prepare(task)
        return
    if ray:
        connection = _ray_init(ray, workers)
        try:
            _prepare(task)
        except BaseException:
            if connection[1]:
                connection[0].shutdown()
            raise
        _run_ray(task, todo, connection, ray, workers, report)
    elif workers > 1 and len(todo) > 1:
        _prepare(task)
        _run_pool(task, todo, workers, report)
    else:
        worker = task.make_worker(None)  # before anything is written: it may fail to start
        try:
            _prepare(task)
            for job in task.jobs(todo):
                build_and_publish(task, worker, job, report)
        finally:
            worker.close()
    unbuilt = [task.label(k) for k in todo if not task.is_built(k)]
    if unbuilt:  # never expected; a clear error rather than a job with holes
        raise RuntimeError(
            f"{task.name}: shards not built: {', '.join(unbuilt)}; the finished shards are "
            "kept, rerun to build the rest"
        )


def _ignore(n: int) -> None:
    pass


# --- the bookkeeping of a job's output folder --------------------------------------------------
def run_with_bar(
    task: ShardTask,
    size: Callable[[Any], int],
    total: int,
    *,
    workers: int = 1,
    desc: str,
    unit: str,
    progress: bool = True,
) -> int:
    """Build the pending shards of `task` (`run_shards`) under a tqdm bar of `total` units,
    `size(key)` of them per shard, those of the shards built before counted as done (the bar
    hidden unless `progress`); returns the units this run built."""
    from tqdm import tqdm

    todo = pending(task)
    todo_units = sum(size(k) for k in todo)
    with tqdm(total=total, initial=total - todo_units, unit=unit, desc=desc,
              disable=not progress) as bar:  # fmt: skip
        run_shards(task, todo, workers=workers, progress=bar.update)
    return todo_units


def prepare_job_folder(
    out: Path, config: dict[str, Any], folder: str, leftovers: str | None = None
) -> Path:
    """Save the job's config.json in `out` (`tvr.core.manifest.save_config`) and make OUT/folder;
    remove from it the files matching the glob `leftovers` (what a killed run left half
    written, e.g. the atomic writers' ".*.jpg.*"). Returns OUT/folder."""
    save_config(out, config)
    path = out / folder
    path.mkdir(parents=True, exist_ok=True)
    if leftovers is not None:
        for tmp in path.glob(leftovers):
            tmp.unlink(missing_ok=True)
    return path


def move_shard_folders(shard: Path, out: Path, names: tuple[str, ...]) -> None:
    """Move the entries of each subfolder `names` of a finished shard into OUT/name (an entry
    already there is replaced), then remove the emptied subfolder; idempotent, so an assembly
    killed halfway is finished by a rerun."""
    for sub in names:
        src = shard / sub
        if not src.is_dir():
            continue
        (out / sub).mkdir(parents=True, exist_ok=True)
        for item in sorted(src.iterdir()):
            dst = out / sub / item.name
            if dst.is_dir():
                shutil.rmtree(dst)
            os.replace(item, dst)
        shutil.rmtree(src)


def _prepare(task: ShardTask) -> None:
    task.prepare()
    for folder in dict.fromkeys(task.path(k).parent for k in task.plan()):
        remove_temporaries(folder)


# --- the process pool --------------------------------------------------------------------------
_STATE: dict[str, Any] = {}


def _pool_init(task: ShardTask, progress_queue: Any, threads: int, parent: int) -> None:
    die_with_parent(parent)
    _STATE.update(task=task, queue=progress_queue, threads=threads, worker=None)


#: prctl option: the signal this process gets when its parent dies (linux/prctl.h)
_PR_SET_PDEATHSIG = 1

#: seconds between the watchdog's looks at the parent, where prctl is not available
WATCHDOG_INTERVAL = 1.0


def die_with_parent(parent: int, *, use_prctl: bool = True) -> None:
    """Make this worker process end when its parent `parent` (the job's driver) dies, even by
    SIGKILL: on Linux the kernel sends SIGKILL (prctl PR_SET_PDEATHSIG); elsewhere a daemon
    thread checks the parent's pid every WATCHDOG_INTERVAL seconds. Without it a killed job
    leaves its workers (and so the resource tracker, which waits for them) running forever.
    Nothing to do when called in the driver itself (an in-process stand-in for a pool)."""
    if parent == os.getpid():
        return
    if use_prctl and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    else:
        armed = False
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCHDOG_INTERVAL)
    os._exit(1)  # no cleanup: the driver is gone, the next run removes the temporaries


def _pool_build(job: Any) -> Any:
    """Build and publish one shard in a pool process (its worker made on its first shard)."""
    if _STATE["worker"] is None:
        _STATE["worker"] = _STATE["task"].make_worker(_STATE["threads"])
    q = _STATE["queue"]
    build_and_publish(_STATE["task"], _STATE["worker"], job, q.put)
    return job.key


def _run_pool(task: ShardTask, todo: list[Any], workers: int, report: Progress) -> None:
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    n = min(workers, len(todo))
    threads = max(1, (os.cpu_count() or 1) // n)  # the workers share the machine's cores
    order = {k: i for i, k in enumerate(todo)}
    jobs = task.jobs(todo)
    again: list[Any] = []
    for attempt in range(POOL_RESTARTS + 1):
        try:
            _pool_round(task, ctx, q, n, threads, jobs, again, report)
            break
        except BrokenProcessPool as err:
            again.sort(key=lambda j: order[j.key])
            names = ", ".join(task.label(j.key) for j in again)
            for job in again:  # the dead worker's half-written shard
                final = task.path(job.key)
                remove_temporaries(final.parent, final.name)
            if attempt == POOL_RESTARTS:
                raise RuntimeError(
                    f"{task.name}: a worker process died {POOL_RESTARTS + 1} times (unfinished: "
                    f"{names}); the finished shards are kept, rerun to resume"
                ) from err
            log.warning(
                "%s: a worker process died; new workers build the unfinished shards again "
                "(%s; restart %d of %d)",
                task.name, names, attempt + 1, POOL_RESTARTS,
            )  # fmt: skip
    _drain(q, report)


def _pool_round(task, ctx, q, n, threads, jobs, again: list[Any], report) -> None:
    """Run the jobs of `again` and then of `jobs` on a new pool of n workers. If a worker dies,
    `again` is left holding every job taken from `jobs` (or from `again`) whose shard is not
    built, and BrokenProcessPool is raised.

    A dead worker breaks the whole pool: every pending future fails, and so does any later
    `submit`, also one right after another shard finished. So the jobs to redo are not "the
    failed futures" but every job taken and not yet published."""
    with ProcessPoolExecutor(
        max_workers=n,
        mp_context=ctx,
        initializer=_pool_init,
        initargs=(task, q, threads, os.getpid()),
    ) as pool:
        # a few shards ahead of the workers: the driver may make each job from the ones before
        taken = again + list(itertools.islice(jobs, max(0, 2 * n - len(again))))
        again.clear()
        pending_: dict[Any, Any] = {}
        try:
            for job in taken:
                pending_[_submit(pool, job)] = job
            while pending_:
                finished, _ = wait(pending_, timeout=0.25, return_when=FIRST_COMPLETED)
                _drain(q, report)
                for fut in finished:
                    fut.result()  # re-raise a worker's error
                    taken.remove(pending_.pop(fut))
                    job = next(jobs, None)
                    if job is not None:
                        taken.append(job)
                        pending_[_submit(pool, job)] = job
        except BrokenProcessPool:
            pool.shutdown(wait=True, cancel_futures=True)
            again.extend(j for j in taken if not task.is_built(j.key))
            raise
        except Exception:  # a worker's error: let the shards in flight end, leave no temporary
            pool.shutdown(wait=True, cancel_futures=True)  # finished shards stay on disk
            for job in taken:
                final = task.path(job.key)
                remove_temporaries(final.parent, final.name)
            raise
        except BaseException:  # Ctrl-C: stop now; the next run removes the temporaries
            _stop_workers(pool)
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _submit(pool: ProcessPoolExecutor, job: Any) -> Any:
    """pool.submit, with Ctrl-C held back while it may start worker processes.

    SIGINT is blocked in this thread, and a spawned worker keeps the blocked signal through
    exec, so a Ctrl-C at the terminal (sent to the whole process group) reaches only the driver,
    which stops the workers; without it each worker still importing prints its own
    KeyboardInterrupt traceback. Blocking in this thread is not enough for the driver: the
    kernel may hand the signal to another of its threads (the pool's manager, the queue's
    feeder), and Python would then raise KeyboardInterrupt here between starting a worker and
    writing it its start-up data; that worker then dies on an EOFError traceback. So the Python
    handler only notes the signal meanwhile, and KeyboardInterrupt is raised once the worker
    has what it needs."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not (
        threading.main_thread()
    ):
        return pool.submit(_pool_build, job)
    noted: list[int] = []
    handler = signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return pool.submit(_pool_build, job)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
        signal.signal(signal.SIGINT, handler)
        if noted:  # delivered again, now to the handler that was there (KeyboardInterrupt)
            signal.raise_signal(signal.SIGINT)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Terminate the pool's worker processes (they ignore Ctrl-C, see `_submit`) and reap them,
    so an interrupted job leaves no process behind."""
    procs = list(getattr(pool, "_processes", None) or {})  # CPython: pid -> Process
    procs = [pool._processes[pid] for pid in procs]  # type: ignore[attr-defined]
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(timeout=5)


def _drain(q: Any, report: Progress) -> None:
    """Pass the workers' progress messages on."""
    while True:
        try:
            report(q.get_nowait())
        except (queue_mod.Empty, OSError, ValueError):
            return


# --- Ray ---------------------------------------------------------------------------------------
class RayShardBuilder:
    """A Ray actor: one worker; builds shards in a local temporary folder and returns their files
    (relative path -> bytes; "" for a shard that is one file) and its progress units, so that
    the driver writes them wherever the job's folder lives."""

    def __init__(self, task: ShardTask) -> None:
        self.worker = task.make_worker(1)  # the actor holds one CPU

    def build(self, job: Any) -> tuple[Any, dict[str, bytes], int]:
        units = [0]

        def count(n: int) -> None:
            units[0] += n

        with tempfile.TemporaryDirectory(prefix="tvr-shard-") as tmp:
            dest = Path(tmp) / "shard"
            self.worker.build(job, dest, count)
            if dest.is_file():
                files = {"": dest.read_bytes()}
            else:
                files = {
                    p.relative_to(dest).as_posix(): p.read_bytes()
                    for p in sorted(dest.rglob("*"))
                    if p.is_file()
                }
        return job.key, files, units[0]


def write_shard_files(final: Path, files: dict[str, bytes]) -> None:
    """Write a shard's files (as `RayShardBuilder.build` returns them) and publish it at `final`."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(final)
    try:
        if "" in files:
            tmp.write_bytes(files[""])
        else:
            tmp.mkdir()
            for rel, data in files.items():
                path = tmp / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
    except BaseException:
        _remove(tmp)
        raise
    publish(tmp, final)


def _ray_init(address: str, workers: int) -> tuple[Any, bool]:
    """The ray module, connected; True if this call started the connection."""
    try:
        import ray
    except ImportError as err:
        raise missing_extra(err, "--ray") from None
    if ray.is_initialized():
        return ray, False
    import tvr

    try:
        if address == "local":
            # the local workers import this very tvr (an editable or PYTHONPATH checkout too);
            # on a cluster every machine brings its own install of tvr
            src = str(Path(tvr.__file__).resolve().parents[1])
            path = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)
            ray.init(
                num_cpus=workers,
                include_dashboard=False,
                log_to_driver=False,
                runtime_env={"env_vars": {"PYTHONPATH": path}},
            )
        else:
            ray.init(address=address, log_to_driver=False)
    except Exception as err:  # Ray raises ConnectionError, RuntimeError, ValueError, ...
        raise UserError(
            f"option 'ray' (--ray {address}): cannot start or join Ray: {err}"
        ) from None
    return ray, True


def _run_ray(task: ShardTask, todo, connection, address: str, workers: int, report) -> None:
    ray, started = connection
    from ray.util import ActorPool

    try:
        if workers > 1 or address == "local":
            n_actors = workers
        else:  # one actor per CPU of the cluster
            n_actors = int(ray.cluster_resources().get("CPU", 1))
        n_actors = max(1, min(n_actors, len(todo)))
        actor_cls = ray.remote(num_cpus=1)(RayShardBuilder)
        actors = [actor_cls.remote(task) for _ in range(n_actors)]
        pool = ActorPool(actors)
        jobs = task.jobs(todo)
        # a few shards ahead of the actors: the driver may make each job from the ones before
        for job in itertools.islice(jobs, 2 * n_actors):
            pool.submit(lambda a, j: a.build.remote(j), job)
        while pool.has_next():
            key, files, units = pool.get_next_unordered()
            write_shard_files(task.path(key), files)
            report(units)
            job = next(jobs, None)
            if job is not None:
                pool.submit(lambda a, j: a.build.remote(j), job)
        for a in actors:
            ray.kill(a)
    finally:
        if started:
            ray.shutdown()
