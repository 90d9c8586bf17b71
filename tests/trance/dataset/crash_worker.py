"""A dataset task whose worker kills its own process once, right after building train shard 1 and
before it is published (a stand-in for a native crash in a renderer or the OOM killer), used by
test_generate_scale.py. It lives in a module of its own so that spawned workers can import it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tvr.trance.generate import job as dataset_generate

MARKER_ENV = "TVR_TEST_CRASH_MARKER"


class CrashOnceWorker(dataset_generate.DatasetWorker):
    def build(self, job, dest, progress):
        super().build(job, dest, progress)
        marker = Path(os.environ[MARKER_ENV])
        if job.split == "train" and job.shard == 1 and not marker.exists():
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)  # the shard is complete in its temporary folder


class CrashOnceTask(dataset_generate.DatasetTask):
    def make_worker(self, threads):
        return CrashOnceWorker(self.config, threads)
