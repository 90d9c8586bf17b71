"""TRANCE's per-epoch line: the shared one of `tvr.training.progress` (kept here for old imports)."""

from tvr.training.progress import EpochLine, epoch_line

__all__ = ["EpochLine", "epoch_line"]
