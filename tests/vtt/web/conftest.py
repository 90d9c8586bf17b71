"""Fixtures of the VTT rating pages' tests: a tiny release, two models' predictions, clients."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")
pytest.importorskip("PIL")

from fastapi.testclient import TestClient

from tests.vtt.release import make_release
from tests.vtt.samples import sample_id
from tvr.web.config import ServeConfig
from tvr.web.factory import create_app

PREDICTIONS = {
    "model-a": {sample_id(0): ["put steak on grill", "flip steak", "remove steak"],
                sample_id(1): ["add cream", "pour coffee"], sample_id(2): ["cut mango"]},
    "model-b": {sample_id(0): ["grill", "grill"], sample_id(1): ["", "pour"],
                sample_id(2): ["cut mango", "eat mango"]},
}  # fmt: skip


@pytest.fixture
def release(tmp_path) -> Path:
    return make_release(tmp_path / "rel")


@pytest.fixture
def prediction_files(tmp_path) -> dict[str, str]:
    out = {}
    for name, preds in PREDICTIONS.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"id": k, "transformations": v}) + "\n"
                                for k, v in preds.items()))  # fmt: skip
        out[name] = str(path)
    return out


@pytest.fixture
def make_config(release, prediction_files, tmp_path):
    """make_config(**extra) -> the ServeConfig of a rating server on this test's database."""

    def make(**extra) -> ServeConfig:
        options = {"predictions": prediction_files, "subset": None, **extra}
        return ServeConfig(data=(release,), db_url=f"sqlite:///{tmp_path / 'ratings.sqlite'}",
                           extra=options)  # fmt: skip

    return make


@pytest.fixture
def make_client(make_config):
    """make_client(**extra) -> a TestClient of a new app (the same database each time)."""

    def make(**extra) -> TestClient:
        return TestClient(create_app(make_config(**extra), "vtt"), base_url="http://localhost")

    return make
