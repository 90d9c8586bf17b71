"""Benchmarks register their VLM tasks; the vlm layer finds them through the entry points."""

from __future__ import annotations

import pytest

from tvr.core.errors import UserError
from tvr.core.plugins import load_benchmarks
from tvr.vlm import tasks
from tvr.vlm.tasks import make_adapter, register_task, task_names


def test_the_installed_benchmarks_register_their_tasks():
    assert {"trance", "visualtrans"} <= set(load_benchmarks())
    assert {"trance", "visualtrans"} <= set(task_names())


def test_a_registered_task_is_made_by_its_factory_and_an_unknown_one_is_a_user_error(
    monkeypatch, tmp_path
):
    load_benchmarks()  # the installed benchmarks register now, not into the patched registry
    monkeypatch.setattr(tasks, "_TASKS", dict(tasks._TASKS))
    made = []
    register_task("toy", lambda data, images, **o: made.append((data, images, o)) or "adapter")
    assert make_adapter("toy", tmp_path / "d", tmp_path / "i", setting="x") == "adapter"
    assert made == [(tmp_path / "d", tmp_path / "i", {"setting": "x"})]
    with pytest.raises(UserError, match=r"unknown task 'nope'; expected one of .*toy"):
        make_adapter("nope", tmp_path, tmp_path)
