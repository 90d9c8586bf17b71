"""tvr: transformation-driven visual reasoning: five benchmarks' data, models and evaluation."""

from tvr import _moved

__version__ = "0.1.0"

_moved.install()
