"""Ctrl-C while a job's worker processes start: one line, exit 130, no traceback, no process left."""

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.hang import no_hang


def _children(pid: int) -> list[int]:
    try:
        out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    except FileNotFoundError:
        pytest.skip("pgrep is not installed")
    return [int(p) for p in out.split()]


def _group_alive(pgid: int) -> list[str]:
    out = subprocess.run(["ps", "-o", "pid=,stat=", "-g", str(pgid)], capture_output=True,
                         text=True).stdout  # fmt: skip
    return [line for line in out.splitlines() if line.split()[1:2] != ["Z"]]


@pytest.mark.parametrize("after_workers_s", [0.0, 0.4])
def test_ctrl_c_while_workers_start(tmp_path, after_workers_s):
    cmd = [sys.executable, "-m", "tvr", "sample", "--out", str(tmp_path / "s"),
           "--num", "4000", "--shard-size", "100", "--workers", "2", "--balance-scope", "shard"]  # fmt: skip
    with no_hang(60):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip
        while not _children(proc.pid) and proc.poll() is None:  # the pool's first processes
            time.sleep(0.02)
        time.sleep(after_workers_s)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
        out, _ = proc.communicate()
        text = out.decode(errors="replace")
        assert proc.returncode == 130, text
        assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
        assert text.strip().splitlines()[-1] == "tvr sample: interrupted", text
        deadline = time.monotonic() + 10
        while _group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _group_alive(proc.pid)
