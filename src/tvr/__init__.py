"""tvr: transformation-driven visual reasoning: five benchmarks' data, models and evaluation."""

from tvr import _gym

__version__ = "0.1.0"

_gym.install()
