"""A pool worker ends when its parent dies: by prctl's death signal on Linux, else a watchdog."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

if not sys.platform.startswith("linux"):  # pragma: no cover
    pytest.skip("reads /proc", allow_module_level=True)

# the parent starts a child that calls die_with_parent, prints the child's pid and sleeps
PARENT = textwrap.dedent(
    """
    import subprocess, sys, time
    child = '''
    import os, sys, time
    from tvr.core import jobs
    jobs.WATCHDOG_INTERVAL = 0.05
    jobs.die_with_parent(int(sys.argv[1]), use_prctl=sys.argv[2] == "prctl")
    print("armed", flush=True)
    time.sleep(60)
    '''
    p = subprocess.Popen([sys.executable, "-c", child, str(__import__("os").getpid()),
                          sys.argv[1]], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "armed"
    print(p.pid, flush=True)
    time.sleep(60)
    """
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize("how", ["prctl", "watchdog"])
def test_a_worker_ends_when_its_parent_is_killed(how):
    parent = subprocess.Popen([sys.executable, "-c", PARENT, how], stdout=subprocess.PIPE, text=True)
    child = 0
    try:
        child = int(parent.stdout.readline())
        assert _alive(child)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(child)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if child and _alive(child):
            os.kill(child, 9)
