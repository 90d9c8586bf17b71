"""Gymnasium finds TRANCE's environments after `import tvr`, at no cost without Gymnasium.

Gymnasium 1.x has no entry-point discovery of environments (0.26's `gymnasium.envs` entry-point
group is gone), so `import tvr` registers them: at once when Gymnasium is already imported,
otherwise right after Gymnasium's own import, through an import hook. `import tvr` never
imports Gymnasium itself, installed or not. The entry points are strings, so registering
imports nothing of `tvr.trance` either (`gymnasium.make` imports `tvr.trance.env` on first use).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from typing import Any

#: environment id -> keyword arguments of tvr.trance.env:TranceEnv
ENVS: dict[str, dict[str, Any]] = {
    "tvr/TRANCE-Basic-v0": {"setting": "basic"},
    "tvr/TRANCE-Event-v0": {"setting": "event"},
    "tvr/TRANCE-View-v0": {"setting": "view"},
}
ENTRY_POINT = "tvr.trance.env:TranceEnv"


def register_envs() -> None:
    """Register the environments with Gymnasium (imports it; again is harmless)."""
    from gymnasium.envs.registration import register, registry

    for env_id, kwargs in ENVS.items():
        if env_id not in registry:
            register(id=env_id, entry_point=ENTRY_POINT, kwargs=dict(kwargs))


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: importlib.abc.Loader) -> None:
        self.inner = inner

    def create_module(self, spec: Any) -> Any:
        return self.inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.inner.exec_module(module)  # type: ignore[attr-defined]
        register_envs()


class _Finder(importlib.abc.MetaPathFinder):
    """Wraps Gymnasium's loader so that its import ends with `register_envs()`."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "gymnasium":
            return None
        sys.meta_path.remove(self)  # once: the first import of gymnasium
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _Loader(spec.loader)
        return spec


def install() -> None:
    """Register now if Gymnasium is imported, else when it is (a missing Gymnasium: never)."""
    if "gymnasium.envs.registration" in sys.modules:
        register_envs()
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
