"""A Java metric that fails or stalls ends the command with one line and exit 2, leaves no output
folder and never hangs the exit (issue 28: `tvr vtt evaluate` hung forever after METEOR failed)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.vtt.samples import needs_java, sample_id, small_records, write_lines

ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}

KILLED_METEOR = """
from tvr.core.errors import UserError
from tvr.vtt.eval.metrics import coco
scorer = coco._meteor()
scorer.meteor_p.kill()
scorer.meteor_p.wait()
try:
    coco.meteor(["a red cube"], ["a red ball"])
except UserError as err:
    print(err)
"""


@needs_java
def test_a_dead_meteor_is_one_message_and_the_process_still_exits():
    """coco-caption's wrapper keeps its lock when an exchange fails; its __del__ then waited on
    it forever at exit. The process must end, printing the one message."""
    done = subprocess.run([sys.executable, "-c", KILLED_METEOR], capture_output=True, text=True,
                          timeout=120, env=ENV)  # fmt: skip
    assert done.returncode == 0, done.stderr[-1000:]
    assert done.stdout.startswith("METEOR (Java, meteor-1.5.jar) failed: ")
    assert "Exception ignored" not in done.stderr


@needs_java
def test_a_java_tool_past_its_time_limit_ends_the_command_in_one_line(tmp_path):
    records = write_lines(tmp_path / "vtt.jsonl", small_records())
    predictions = write_lines(tmp_path / "p.jsonl", [
        {"id": sample_id(i), "transformations": ["cut the mango"]} for i in range(3)])  # fmt: skip
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "tvr", "vtt", "evaluate", "--data", str(records),
         "--predictions", str(predictions), "--no-bertscore", "--out", str(out), "--quiet"],
        capture_output=True, text=True, timeout=120,
        env={**ENV, "TVR_JAVA_TIMEOUT_S": "1"},
    )  # fmt: skip
    assert done.returncode == 2, (done.stdout[-500:], done.stderr[-1000:])
    err = done.stderr.strip().splitlines()
    assert len(err) == 1 and "no answer within 1 s" in err[0], err
    assert not out.exists()
