"""External processes (Java metrics) with time limits: nothing tvr starts may hang a command.

`JAVA_TIMEOUT_S` bounds one call to a Java tool (the PTB tokenizer, METEOR, SPICE); the
environment variable `TVR_JAVA_TIMEOUT_S` changes it. `timed_subprocess` is a stand-in for the
`subprocess` module of a library that starts a process without a timeout: its `Popen` objects
wait at most that long in `communicate`, then kill the process and raise `TimeoutExpired`.
`Watchdog` kills a long-lived process (METEOR's) when one exchange with it takes too long.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from types import SimpleNamespace
from typing import Any


def java_timeout_s() -> float:
    """Seconds one call to a Java tool may take (TVR_JAVA_TIMEOUT_S, default 1800)."""
    try:
        return max(float(os.environ.get("TVR_JAVA_TIMEOUT_S", "1800")), 1.0)
    except ValueError:
        return 1800.0


class _TimedPopen(subprocess.Popen):
    def communicate(self, input: Any = None, timeout: float | None = None) -> Any:
        try:
            return super().communicate(input=input, timeout=timeout or java_timeout_s())
        except subprocess.TimeoutExpired:
            self.kill()
            super().communicate()
            raise


#: use as `library_module.subprocess = timed_subprocess`
timed_subprocess = SimpleNamespace(**{k: getattr(subprocess, k) for k in dir(subprocess)
                                      if not k.startswith("_")})  # fmt: skip
timed_subprocess.Popen = _TimedPopen


class Watchdog:
    """Kills `process` if the `with` block takes longer than `seconds`; `fired` says it did."""

    def __init__(self, process: subprocess.Popen, seconds: float | None = None) -> None:
        self.process = process
        self.seconds = seconds or java_timeout_s()
        self.fired = False
        self._timer: threading.Timer | None = None

    def _kill(self) -> None:
        self.fired = True
        with contextlib.suppress(OSError):
            self.process.kill()

    def __enter__(self) -> Watchdog:
        self._timer = threading.Timer(self.seconds, self._kill)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
