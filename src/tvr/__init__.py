"""tvr: transformation-driven visual reasoning: five benchmarks' data, models and evaluation."""

__version__ = "0.1.0"
