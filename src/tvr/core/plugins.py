"""Benchmark plugins: each benchmark's plugin module registers its parts with the shared layers.

A benchmark names its plugin module in the `tvr.benchmarks` entry-point group (pyproject.toml):
`trance = "tvr.trance.plugin"`. Shared layers keep registries (VLM tasks, result tables, web
pages) and call `load_benchmarks()` before they look a name up, so they never import a benchmark
themselves, and a benchmark installed as another package plugs in the same way.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import entry_points

ENTRY_POINT_GROUP = "tvr.benchmarks"

_loaded: set[str] = set()


def load_benchmarks() -> tuple[str, ...]:
    """Import every benchmark's plugin module (once); returns the benchmark names."""
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in _loaded:
            import_module(ep.value.split(":")[0])
            _loaded.add(ep.name)
    return tuple(sorted(_loaded))
