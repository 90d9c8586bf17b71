"""The viewer: predictions belong to a setting (not only to sample ids), datasets that share
scenes are reported, and the red marks are the cells the distance counts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from tests.trance.web.helpers import right_steps, wrong_steps
from tvr.cli import main
from tvr.core.errors import UserError
from tvr.trance.data.store import open_dataset
from tvr.trance.generate.config import DatasetConfig
from tvr.trance.generate.job import generate_dataset
from tvr.trance.web.app import create_app
from tvr.trance.world import simulator, vocab
from tvr.web.config import ServeConfig


@pytest.fixture(scope="module")
def same_seed(tmp_path_factory) -> dict[str, Path]:
    """Basic, Event and View made with the same seed: the same sample ids and scenes."""
    root = tmp_path_factory.mktemp("same-seed")
    out = {}
    for setting in ("basic", "event", "view"):
        config = DatasetConfig(
            setting=setting, split_sizes={"test": 3}, seed=7, backend="raster", preset="preview"
        )
        generate_dataset(config, root / setting, progress=False)
        out[setting] = root / setting
    return out


def write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def catalog_of(data, preds, tmp_path):
    config = ServeConfig(
        data=tuple(data),
        predictions=tuple(preds),
        db_url=f"sqlite:///{tmp_path}/v.sqlite",
        viewer=True,
    )
    return create_app(config)


# --- 5. a predictions file belongs to a setting ------------------------------------------------------
def test_predictions_go_to_their_setting_not_only_to_their_ids(same_seed, tmp_path):
    samples = open_dataset(same_seed["view"]).split("test").samples()
    view = write(
        tmp_path / "view-random.jsonl",
        [{"id": s.id, "view": s.extra["view"], "steps": right_steps(s)} for s in samples],
    )
    event = write(
        tmp_path / "event-model.jsonl",
        [{"id": s.id, "steps": right_steps(s)} for s in samples],
    )
    app = catalog_of([same_seed["event"], same_seed["view"]], [view, event], tmp_path)
    cat = app.state.catalog
    assert [p.name for p in cat.predictions_for("view", "test")] == ["view-random"]
    assert [p.name for p in cat.predictions_for("event", "test")] == ["event-model"]


def test_a_run_folder_says_its_setting(same_seed, tmp_path):
    samples = open_dataset(same_seed["event"]).split("test").samples()
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"setting": "event", "model": "m"}))
    write(run / "predictions.jsonl", [{"id": s.id, "steps": right_steps(s)[:1]} for s in samples])
    app = catalog_of(list(same_seed.values()), [run], tmp_path)
    assert [p.name for p in app.state.catalog.predictions_for("event", "test")] == ["run (m)"]
    with pytest.raises(UserError, match=r"config.json says setting 'event', but no event dataset"):
        catalog_of([same_seed["view"]], [run], tmp_path)


def test_a_file_that_fits_two_settings_must_be_named(same_seed, tmp_path):
    samples = open_dataset(same_seed["basic"]).split("test").samples()
    one_step = write(
        tmp_path / "one.jsonl", [{"id": s.id, "steps": right_steps(s)} for s in samples]
    )
    data = [same_seed["basic"], same_seed["event"]]
    with pytest.raises(UserError, match=r"one.jsonl: .*basic and event.*--predictions basic="):
        catalog_of(data, [one_step], tmp_path)
    app = catalog_of(data, [Path(f"event={one_step}")], tmp_path)
    assert [p.name for p in app.state.catalog.predictions_for("event", "test")] == ["one"]
    assert app.state.catalog.predictions_for("basic", "test") == []


def test_view_lines_need_a_view_dataset(same_seed, tmp_path):
    samples = open_dataset(same_seed["view"]).split("test").samples()
    view = write(
        tmp_path / "v.jsonl", [{"id": s.id, "view": "L", "steps": right_steps(s)} for s in samples]
    )
    with pytest.raises(UserError, match=r'v.jsonl: its lines carry "view".* no view dataset'):
        catalog_of([same_seed["event"]], [view], tmp_path)


def test_datasets_that_share_scenes_are_reported(
    same_seed, datasets, tmp_path, capsys, monkeypatch
):
    app = catalog_of([same_seed["event"], same_seed["view"]], [], tmp_path)
    assert len(app.state.warnings) == 1
    assert "event and view hold the same scenes" in app.state.warnings[0]
    assert catalog_of(list(datasets.values()), [], tmp_path).state.warnings == []
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)
    args = ["serve", "--data", str(same_seed["event"]), str(same_seed["view"])]
    assert main([*args, "--db", f"sqlite:///{tmp_path}/w.sqlite"]) == 0
    err = capsys.readouterr().err
    assert "tvr serve: warning: event and view hold the same scenes" in err


# --- 6. the red marks are what the distance counts ----------------------------------------------------
def test_attribute_differences_sum_to_the_distance():
    rng = np.random.default_rng(0)
    for _ in range(300):
        a = np.zeros((10, 6), dtype=np.int16)
        a[:, :2] = rng.integers(-45, 46, size=(10, 2))  # visible, hidden and off the plane
        a[:, 2:] = rng.integers(0, 2, size=(10, 4))
        b = a.copy()
        change = rng.random((10, 6)) < 0.3
        b[change] = rng.integers(-45, 46, size=int(change.sum()))
        b[:, 2:] = np.clip(b[:, 2:], 0, 1)
        diff = simulator.attribute_differences(a, b)
        assert diff.shape == (10, len(simulator.DIFF_ATTRIBUTES)) and diff.dtype == bool
        assert int(diff.sum()) == simulator.distance(a, b)
    assert simulator.DIFF_ATTRIBUTES == ("position", "size", "color", "material", "shape")


def hidden_to_hidden(sample):
    """The reference plus one move of an object that stays hidden: a distance of 0 on a state that
    differs from the true final one in a position."""
    base = [(s.obj, s.value) for s in sample.steps]
    if len(base) == vocab.MAX_STEPS:
        return None
    final, _ = simulator.apply_steps(sample.initial_array, base)
    for obj in range(vocab.NUM_OBJECTS):
        if simulator.is_visible(int(final[obj, 0]), int(final[obj, 1])):
            continue
        for v in range(vocab.NUM_VALUES):
            if vocab.value_attribute(v) != "position":
                continue
            state, results = simulator.apply_steps(sample.initial_array, [*base, (obj, v)])
            x, y = int(state[obj, 0]), int(state[obj, 1])
            if (
                all(r.valid for r in results)
                and simulator.on_plane(x, y)
                and not simulator.is_visible(x, y)
            ):
                return [*right_steps(sample), {"obj": obj, "value": vocab.VALUES[v]}]
    return None


def marked_cells(html: str) -> int:
    return len(re.findall(r'class="[^"]*\bdiff\b', html))


def test_the_viewer_marks_the_cells_the_distance_counts(make_client, datasets, tmp_path):
    samples = open_dataset(datasets["event"]).split("test").samples()
    lines, expect_zero = [], 0
    for s in samples:
        steps = hidden_to_hidden(s)
        if steps is not None:
            expect_zero += 1
        lines.append({"id": s.id, "steps": steps or wrong_steps(s)})
    assert expect_zero, "no sample lets an object move from hidden to hidden"
    preds = write(tmp_path / "m.jsonl", lines)
    client = make_client(viewer=True, predictions=(preds,))
    for k in range(len(samples)):
        page = client.get(f"/viewer/event/test/{k}").text
        card = page[page.index('<div class="card prediction') :]
        distance = int(re.search(r"<th>distance</th><td>(\d+)</td>", card).group(1))
        table = card[card.index("Simulated final state") :]
        assert marked_cells(table[: table.index("</table>")]) == distance, k
