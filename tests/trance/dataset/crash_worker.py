"""A shard job for the worker pool that kills its own process on its first shard 1 (a stand-in
for a native crash in a renderer or the OOM killer), used by test_generate_scale.py. It lives in a
module of its own so that spawned workers can import it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tvr.trance.dataset import generate as dataset_generate

MARKER_ENV = "TVR_TEST_CRASH_MARKER"


def crash_once_on_shard_1(job: dataset_generate.ShardJob):
    marker = Path(os.environ[MARKER_ENV])
    if job.split == "train" and job.shard == 1 and not marker.exists():
        marker.write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return dataset_generate._worker_job(job)
