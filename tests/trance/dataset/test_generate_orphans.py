"""`tvr generate --workers 2` killed with SIGKILL leaves no worker or resource tracker behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("moderngl")

import tvr

if not sys.platform.startswith("linux"):  # pragma: no cover
    pytest.skip("reads /proc", allow_module_level=True)


def _env() -> dict[str, str]:
    src = str(Path(tvr.__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


def _group_members(pgid: int) -> list[tuple[int, str]]:
    """(pid, command line) of each live process of process group `pgid` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            state, group = fields[0], int(fields[2])
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        if group == pgid and state not in ("Z", "X"):
            found.append((int(entry.name), cmd.strip()))
    return found


def test_workers_exit_when_generate_is_killed(tmp_path):
    out = tmp_path / "data"
    cmd = [sys.executable, "-m", "tvr", "generate", "--out", str(out), "--setting", "event",
           "--split-sizes", "train=40,val=0,test=0", "--shard-size", "1", "--workers", "2",
           "--backend", "raster", "--preset", "preview", "--image-size", "64x48",
           "--small-size", "32x32", "--quiet"]  # fmt: skip
    proc = subprocess.Popen(
        cmd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: pgid == proc.pid
    )  # fmt: skip
    pgid = proc.pid
    try:
        shards = out / "train" / "shards"
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if shards.is_dir() and any(p.name.startswith("shard-") for p in shards.iterdir()):
                break
            time.sleep(0.01)
        assert proc.poll() is None, proc.stderr.read().decode()  # still running: kill it mid-job
        workers = [pid for pid, _ in _group_members(pgid) if pid != proc.pid]
        assert workers, "no worker processes seen"
        os.kill(proc.pid, signal.SIGKILL)  # the main process only
        proc.wait()
        deadline = time.monotonic() + 20
        left = _group_members(pgid)
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = _group_members(pgid)
        assert not left, f"processes left after the main process was killed: {left}"
        done = [p for p in shards.iterdir() if p.name.startswith("shard-")]
        assert len(done) < 40  # killed mid-run, not after the job was done
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)  # whatever a failing run left behind
        if proc.poll() is None:
            proc.kill()
            proc.wait()
