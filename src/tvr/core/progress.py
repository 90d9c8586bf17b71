"""Progress bars of long steps: tqdm on stderr (stdout stays the command's result), off with
`enabled=False` (the commands' `--quiet`).

- `step_bar(total, desc)`: a bar over the `total` units of one named step; `update(n)` as they
  finish.
- `DoneTotalBar(desc)`: the same, driven by `(done, total)` callbacks (the convention of
  `tvr.vtt.models.features.FeatureCache.get`); it appears on the first call, so a step with
  nothing to do (everything cached) shows nothing.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any


def step_bar(total: int, desc: str, unit: str = "it", enabled: bool = True) -> Any:
    """A tqdm bar of `total` units named `desc`, on stderr, hidden unless `enabled`."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not enabled,
                dynamic_ncols=True)  # fmt: skip


class DoneTotalBar:
    """A `step_bar` fed by `(done, total)` calls; a context manager that closes it."""

    def __init__(self, desc: str, unit: str = "it", enabled: bool = True) -> None:
        self.desc, self.unit, self.enabled = desc, unit, enabled
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = step_bar(total, self.desc, self.unit, self.enabled)
        self.bar.update(max(0, done - self.bar.n))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> DoneTotalBar:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
