"""One writer per output: a second run into an output another process writes is refused in one
line naming the holder's PID, before it writes anything; a killed holder's lock is gone."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.hang import no_hang
from tvr.cli import main
from tvr.core.errors import UserError
from tvr.core.output_lock import (
    LOCK_SUFFIX,
    holds,
    lock_output,
    lock_path,
    release,
    release_all,
)

HOLD = (
    "import sys, time\n"
    "from tvr.core.output_lock import lock_output\n"
    "lock_output(sys.argv[1])\n"
    "print('held', flush=True)\n"
    "time.sleep(120)\n"
)


class Holder:
    """Another process holding the lock of an output until killed."""

    def __init__(self, folder: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)],
                                     stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert self.proc.stdout.readline().strip() == "held"

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)


@pytest.fixture
def holder(tmp_path):
    made: list[Holder] = []

    def hold(folder: Path) -> Holder:
        made.append(Holder(folder))
        return made[-1]

    yield hold
    for h in made:
        if h.proc.poll() is None:
            h.kill()


def test_a_second_writer_is_refused_and_a_killed_holders_lock_is_gone(tmp_path, holder):
    folder = tmp_path / "out"
    h = holder(folder)
    with pytest.raises(UserError, match=rf"another tvr run is writing it \(PID {h.proc.pid}\)"):
        lock_output(folder)
    assert not holds(folder) and not folder.exists()
    h.kill()  # kill -9: the kernel releases the lock, nothing to clean
    lock_output(folder)
    assert holds(folder)
    assert lock_path(folder) == tmp_path / ".out.tvr-lock"
    assert lock_path(folder).read_text().strip() == str(os.getpid())
    lock_output(folder)  # re-entrant within a process
    release(folder)
    assert not holds(folder)
    assert not lock_path(folder).exists()  # no output was made: no lock file is left


def _lock_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob(f"*{LOCK_SUFFIX}"))


def test_no_lock_file_is_left_beside_an_output_that_exists(tmp_path):
    """Issue 42 point 13: the lock file went only when no output was made."""
    for out in (tmp_path / "folder", tmp_path / "file.jsonl"):
        lock_output(out)
        out.mkdir() if out.name == "folder" else out.write_text("{}\n")
        assert lock_path(out).exists()  # while held
    release_all()
    assert not _lock_files(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.jsonl", "folder"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork")
def test_a_forked_child_never_removes_its_parents_lock_file(tmp_path):
    out = tmp_path / "out"
    lock_output(out)
    pid = os.fork()
    if pid == 0:  # the child: what a worker's clean-up would do
        release_all()
        os._exit(0)
    os.waitpid(pid, 0)
    assert holds(out) and lock_path(out).exists()
    proc = subprocess.run([sys.executable, "-c", HOLD, str(out)], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert "another tvr run is writing it" in proc.stderr  # still locked, by this process
    release(out)
    assert not _lock_files(tmp_path)


def test_a_taker_that_opened_the_file_just_before_the_holder_removed_it_locks_a_new_one(
    tmp_path, monkeypatch
):
    """The unlink race: B opens the lock file, A unlinks and closes it, B's flock succeeds on
    the unlinked file. B must see that and lock the file the path names, else a third run
    would lock a new file beside B: two writers."""
    import tvr.core.output_lock as module

    out = tmp_path / "out"
    lock_output(out)  # A (this process) holds
    stale = os.open(lock_path(out), os.O_RDWR)  # B's open, before A's release
    release(out)  # A: unlink, close
    assert not lock_path(out).exists()
    real_open, opened = os.open, []

    def open_first_the_stale(path, flags, mode=0o777):
        opened.append(path)
        return stale if len(opened) == 1 else real_open(path, flags, mode)

    monkeypatch.setattr(module.os, "open", open_first_the_stale)
    lock_output(out)  # B: locks the unlinked file, sees it is gone, locks a new one
    monkeypatch.undo()
    assert len(opened) == 2 and holds(out)  # the stale file, then the path again
    assert lock_path(out).read_text().strip() == str(os.getpid())
    proc = subprocess.run([sys.executable, "-c", HOLD, str(out)], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert proc.returncode == 1 and "another tvr run is writing it" in proc.stderr  # C refused
    release(out)
    assert not _lock_files(tmp_path)


def test_the_lock_is_per_output_and_released_by_release_all(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b.jsonl"
    lock_output(a)
    lock_output(b)
    assert holds(a) and holds(b)
    release_all()
    assert not holds(a) and not holds(b)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "d"
    assert main(["demo", "--out", str(out), "--num", "20", "--workers", "1"]) == 0
    release_all()
    return out


JOBS = {
    "sample": ["sample", "--out", "{X}", "--num", "8"],
    "generate": ["generate", "--setting", "event", "--split-sizes", "train=2,val=1,test=1",
                 "--out", "{X}", "--preset", "preview", "--image-size", "48x36", "--small-size",
                 "32x32", "--quiet"],
    "clevrer generate": ["clevrer", "generate", "--out", "{X}", "--num", "2", "--backend", "none",
                         "--no-dynamics", "--no-masks", "--quiet"],
    "tranco testbed": ["tranco", "testbed", "--out", "{X}", "--split-sizes", "train=2,val=1,test=1",
                       "--image-size", "48x36", "--preset", "preview", "--quiet"],
    "vtt testbed": ["vtt", "testbed", "--out", "{X}", "--num", "3", "--image-size", "64x48",
                    "--preset", "preview", "--quiet"],
    "demo": ["demo", "--out", "{X}", "--num", "8", "--workers", "1"],
    "evaluate": ["evaluate", "--data", "{D}/samples/samples.jsonl",
                 "--predictions", "{D}/predictions-oracle.jsonl", "--out", "{X}"],
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(JOBS))
def test_every_job_command_is_refused_while_another_run_writes_its_folder(
    name, tmp_path, holder, demo, capsys
):
    folder = tmp_path / "job"
    h = holder(folder)
    argv = [a.replace("{X}", str(folder)).replace("{D}", str(demo)) for a in JOBS[name]]
    with no_hang(30):
        assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert f"another tvr run is writing it (PID {h.proc.pid})" in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".job.tvr-lock"]  # nothing written


@pytest.mark.parametrize("name", sorted(JOBS))
def test_every_job_command_leaves_no_lock_file(name, tmp_path, demo):
    """Issue 42 point 13: `.job.tvr-lock` (and `.eval.tvr-lock`, ...) stayed beside every output."""
    folder = tmp_path / "job"
    argv = [a.replace("{X}", str(folder)).replace("{D}", str(demo)) for a in JOBS[name]]
    with no_hang(120):
        assert main(argv) == 0
    assert folder.exists()
    assert not _lock_files(tmp_path) and not _lock_files(demo.parent)


RACES = {
    "tranco testbed": (["tranco", "testbed", "--out", "{X}", "--split-sizes", "train=4,val=2,test=2",
                        "--image-size", "48x36", "--preset", "preview", "--workers", "2",
                        "--shard-size", "2", "--quiet"],
                       ["tranco", "stats", "--data", "{X}", "--json"]),
    "vtt testbed": (["vtt", "testbed", "--out", "{X}", "--num", "6", "--image-size", "64x48",
                     "--preset", "preview", "--shard-size", "2", "--workers", "2",
                     "--quiet"],
                    ["vtt", "stats", "--data", "{X}/meta/vtt.jsonl", "--images", "{X}/states",
                     "--verify-images", "--json"]),
    "clevrer generate": (["clevrer", "generate", "--out", "{X}", "--num", "6", "--backend",
                          "none", "--no-masks", "--shard-size", "2", "--workers", "2",
                          "--quiet"],
                         ["clevrer", "evaluate", "--data", "{X}/questions/train.json",
                          "--predictions", "{X}/questions/train.json"]),
    "sample": (["sample", "--out", "{X}", "--num", "40", "--shard-size", "10", "--workers", "2"],
               ["stats", "--data", "{X}/samples.jsonl"]),
    "generate": (["generate", "--setting", "event", "--split-sizes", "train=8,val=4,test=4",
                  "--out", "{X}", "--preset", "preview", "--image-size", "64x48",
                  "--small-size", "32x32", "--shard-size", "4", "--workers", "2", "--quiet"],
                 ["report", "--data", "{X}", "--out", "{X}-report"]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(RACES))
def test_two_runs_at_once_one_is_refused_the_other_finishes_and_the_folder_verifies(
    name, tmp_path
):
    """The defect of issue 28: two `tranco testbed` runs into one folder left it broken for
    every later run (`clevrer generate`: both failed). Now, whenever the second starts, it is
    refused in one line or finds the work done; the folder verifies, and a third run is a
    no-op that succeeds."""
    out = tmp_path / "out"
    job, verify = ([a.replace("{X}", str(out)) for a in argv] for argv in RACES[name])
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "tvr", *job]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env)  # fmt: skip
    deadline = time.monotonic() + 60
    while first.poll() is None and not lock_path(out).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    second = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    _, first_err = first.communicate(timeout=300)
    assert first.returncode == 0, first_err[-2000:]
    if second.returncode != 0:  # it started while the first one ran
        assert second.returncode == 2, second.stderr[-2000:]
        assert second.stderr.count("\n") == 1, second.stderr
        assert f"another tvr run is writing it (PID {first.pid})" in second.stderr
    third = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert third.returncode == 0, third.stderr[-2000:]
    checked = subprocess.run([sys.executable, "-m", "tvr", *verify], capture_output=True,
                             text=True, env=env, timeout=300)  # fmt: skip
    assert checked.returncode == 0, checked.stderr[-2000:]
    assert not _lock_files(tmp_path)  # however the runs ended, no lock file is left


def _leaf_parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command words, parser) of every sub-command that runs something."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, sub in subs[0].choices.items():
        yield from _leaf_parsers(sub, (*path, name))


def _dummy(action: argparse.Action, tmp: Path) -> list[str]:
    """A value the parser accepts for a required argument (the command never reads it)."""
    if action.choices:
        value = str(next(iter(action.choices)))
    elif action.type in (int, float) or getattr(action.type, "__name__", "").endswith(
        ("_int", "_float")
    ):
        value = "1"
    else:
        value = str(tmp / "input")
    n = action.nargs
    count = n if isinstance(n, int) else 1
    return [value] * count


def _argv(command: tuple[str, ...], parser: argparse.ArgumentParser, tmp_path: Path) -> list[str]:
    """The command with dummy required arguments, writing to tmp_path/out."""
    dests = {a.dest for a in parser._actions}
    out = tmp_path / "out"
    argv = [*command]
    for action in parser._actions:
        if action.dest in ("help", "out", "output_dir", "run_name") or not (
            action.required or not action.option_strings
        ) or action.help == argparse.SUPPRESS:  # a hidden former name
            continue
        argv += [*(action.option_strings[-1:]), *_dummy(action, tmp_path)]
    for group in parser._mutually_exclusive_groups:
        if group.required:
            action = group._group_actions[0]
            argv += [action.option_strings[-1], *_dummy(action, tmp_path)]
    if "out" in dests:
        argv += ["--out", str(out)]
    else:
        argv += ["--output-dir", str(tmp_path), "--run-name", "out"]
    return argv


def _commands_writing(dests: set[str]) -> list[tuple[str, ...]]:
    from tvr.cli import build_parser

    return [path for path, p in _leaf_parsers(build_parser())
            if dests <= {a.dest for a in p._actions}]  # fmt: skip


@pytest.mark.parametrize("command", [*_commands_writing({"out"}),
                                     *_commands_writing({"output_dir", "run_name"})],
                         ids=" ".join)  # fmt: skip
def test_every_command_with_an_output_is_refused_before_it_reads_anything(
    command, tmp_path, holder, capsys
):
    """The whole class: whatever a command writes (an --out folder or file, a training run's
    OUTPUT_DIR/RUN_NAME), a second run into it is refused in one line, exit 2, and nothing is
    written (its inputs here do not even exist)."""
    from tvr.cli import build_parser

    parser = dict(_leaf_parsers(build_parser()))[command]
    h = holder(tmp_path / "out")
    argv = _argv(command, parser, tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"another tvr run is writing it (PID {h.proc.pid})" in err[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.tvr-lock"]  # the holder's


@pytest.mark.parametrize("command", [*_commands_writing({"out"}),
                                     *_commands_writing({"output_dir", "run_name"})],
                         ids=" ".join)  # fmt: skip
def test_a_refused_out_leaves_no_lock_file(command, tmp_path, capsys):
    """Issue 38 point 10: every command with an output, refused (its inputs do not exist) while
    its --out is a file already there, leaves that file as it was and no lock file."""
    from tvr.cli import build_parser

    parser = dict(_leaf_parsers(build_parser()))[command]
    argv = _argv(command, parser, tmp_path)
    out = tmp_path / "out"
    out.write_text("not yours\n")
    assert main(argv) != 0
    capsys.readouterr()
    assert out.read_text() == "not yours\n"
    assert not _lock_files(tmp_path)
