"""The old import paths of moved modules still import for one release, with a DeprecationWarning."""

from __future__ import annotations

import importlib
import sys

import pytest

from tvr._moved import MOVED

# modules whose import needs an extra (torch, fastapi, ...) are checked only when it is installed
_NEEDS = {"tvr.models": "torch", "tvr.training.": "lightning", "tvr.web.": "fastapi"}


def _skip_without_extra(old: str) -> None:
    for prefix, module in _NEEDS.items():
        if old.startswith(prefix):
            pytest.importorskip(module)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_is_the_new_module_and_warns(old: str) -> None:
    _skip_without_extra(old)
    new = MOVED[old]
    module = importlib.import_module(new)
    sys.modules.pop(old, None)  # as if the old path were imported for the first time
    with pytest.warns(DeprecationWarning) as caught:
        assert importlib.import_module(old) is module
    messages = [str(w.message) for w in caught]
    assert f"{old} moved to {new}; the old path will be removed in the next release" in messages


def test_a_package_that_took_a_modules_path_resolves_its_old_names_with_a_warning() -> None:
    world = importlib.import_module("tvr.trance.world")
    from tvr.trance.world import simulator

    with pytest.warns(DeprecationWarning, match=r"tvr\.trance\.world\.apply_step moved to"):
        assert world.apply_step is simulator.apply_step
    report = importlib.import_module("tvr.trance.report")
    from tvr.trance.sampling.stats import balance_stats

    with pytest.warns(DeprecationWarning, match="tvr.trance.sampling.stats.balance_stats"):
        assert report.balance_stats is balance_stats
    with pytest.raises(AttributeError):
        _ = world.no_such_name
    with pytest.raises(AttributeError):  # submodules are not forwarded as names
        _ = world._private


def test_names_that_moved_between_modules_resolve_on_the_old_module() -> None:
    from tvr.core.stats import mcnemar_exact
    from tvr.trance.world.vocab import VIEWS

    camera = importlib.import_module("tvr.trance.world.camera")
    paired = importlib.import_module("tvr.results.paired")
    with pytest.warns(DeprecationWarning, match="tvr.trance.world.vocab.VIEWS"):
        assert camera.VIEWS is VIEWS
    with pytest.warns(DeprecationWarning, match="tvr.core.stats.mcnemar_exact"):
        assert paired.mcnemar_exact is mcnemar_exact
