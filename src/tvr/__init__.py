"""tvr: transformation-driven visual reasoning (TRANCE world, data, models and evaluation)."""

__version__ = "0.1.0"
