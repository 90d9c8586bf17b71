"""The web app's shared layer: options, the results database; benchmarks plug their pages (`tvr serve`)."""

from tvr.web.config import ServeConfig

__all__ = ["ServeConfig"]
