"""The TRANCE scene parser (issue 31): labels from the renderer's masks, a few training steps on
tiny data through the CLI (train, predict, evaluate), the parse in the solver's format, and the
solver on images never reading the reference."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tvr.cli import main
from tvr.trance.data.store import open_dataset
from tvr.trance.perception.geometry import centre_height, pixel_to_grid, project_centre
from tvr.trance.perception.labels import COL, image_labels
from tvr.trance.perception.metrics import ImageParse, score_image
from tvr.trance.world.camera import CAMERA_BASE


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("parser") / "data"
    assert main(["generate", "--out", str(out), "--setting", "view", "--split-sizes",
                 "train=6,val=2,test=3", "--seed", "5", "--preset", "preview",
                 "--quiet"]) == 0  # fmt: skip
    return out


def test_centre_projection_and_back():
    obj = {"shape": "cube", "size": "large", "color": "red", "material": "metal",
           "position": [12, -7], "rotation": 10.0}  # fmt: skip
    for view in ("L", "C", "R"):
        u, v = project_centre(obj, CAMERA_BASE[view])
        x, y = pixel_to_grid(u, v, centre_height("large", "cube"), CAMERA_BASE[view])
        assert abs(x - 12) < 1e-6 and abs(y + 7) < 1e-6


def test_labels_agree_with_the_masks(dataset):
    store = open_dataset(dataset).split("train")
    labels = image_labels(store.sample(0))
    assert labels.shape == (4, 10, len(COL))
    from tvr.trance.render.images import make_renderer, render_sample

    rendered = render_sample(store.sample(0), make_renderer("raster", "preview"), images=False)
    for slot, r in enumerate(rendered):
        for i in range(10):
            row = labels[slot, i]
            pixels = int((r.mask == i).sum())
            assert int(row[COL["pixels"]]) == pixels
            if row[COL["present"]] and pixels > 600:  # a well visible object: its centroid
                ys, xs = np.nonzero(r.mask == i)
                assert abs(xs.mean() - row[COL["u"]]) < 8 and abs(ys.mean() - row[COL["v"]]) < 8


def test_scores_of_an_image():
    labels = np.zeros((10, len(COL)), dtype=np.float32)
    labels[0] = (1, 100, 100, 0, 1, 2, 0, 2000, 5, 5)
    labels[1] = (1, 200, 150, 2, 3, 0, 1, 900, -5, 3)
    labels[2] = (1, 50, 60, 1, 1, 1, 1, 30, 0, 0)  # barely visible: neither counted nor extra
    centres = np.array([[101.0, 99.0], [52.0, 60.0], [300.0, 20.0]])
    classes = np.array([[0, 1, 2, 0], [1, 1, 1, 1], [0, 0, 0, 0]])
    grid = np.array([[5.2, 4.9], [0.0, 0.0], [0.0, 0.0]])
    t = score_image(ImageParse("fin.C", centres, classes, labels, grid))
    s = t.summary()
    assert (s["objects"], s["found"], s["missed"], s["extra"]) == (2, 1, 1, 1)
    assert s["all_attributes_acc"] == 1.0 and s["position_exact"] == 1.0
    assert s["object_acc"] == pytest.approx(1 / 3)


def test_train_predict_evaluate_solve(dataset, tmp_path, capsys):
    runs = tmp_path / "runs"
    assert main(["trance", "parser", "train", "--data", str(dataset), "--epochs", "1",
                 "--width", "4", "--batch-size", "8", "--output-dir", str(runs),
                 "--accelerator", "cpu", "--quiet"]) == 0  # fmt: skip
    run = runs / "scene-parser"
    assert (run / "checkpoints" / "best.ckpt").is_file()
    scores = json.loads((run / "eval" / "val" / "parser_eval.json").read_text())
    assert scores["images"] == 8 and set(scores["view"]) == {"init.C", "fin.L", "fin.C", "fin.R"}

    out = tmp_path / "parses.jsonl"
    assert main(["trance", "parser", "predict", "--run", str(run), "--data", str(dataset),
                 "--out", str(out), "--quiet"]) == 0  # fmt: skip
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 12 and rows[0]["image"].endswith("-init.C.png")
    for row in rows:
        for o in row["objects"]:  # the sample format's names, an integer grid point
            assert {"shape", "size", "color", "material", "position", "score"} <= set(o)
            assert all(isinstance(p, int) for p in o["position"])
    scores = run / "eval" / "data-test" / "parser_eval.json"
    assert json.loads(scores.read_text())["samples"] == 3
    assert "fin.L" in capsys.readouterr().out  # the table: a row per image

    assert main(["trance", "parser", "predict", "--run", str(run), "--data", str(dataset),
                 "--json", "--quiet", "--limit", "2"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["samples"] == 2

    pred = tmp_path / "pred.jsonl"
    assert main(["solve", "--data", str(dataset), "--run", str(run), "--out", str(pred),
                 "--quiet"]) == 0  # fmt: skip
    preds = [json.loads(x) for x in pred.read_text().splitlines()]
    assert len(preds) == 3 and all("steps" in p and p["view"] in "LCR" for p in preds)
    assert main(["evaluate", "--data", str(dataset), "--predictions", str(pred)]) == 0

    # the same from a folder of PNGs named as the release names them, and a samples file
    import shutil

    folder = tmp_path / "images"
    folder.mkdir()
    for png in (dataset / "test" / "shards").glob("shard-*/images/*.png"):
        shutil.copy(png, folder / png.name)
    pred2 = tmp_path / "pred2.jsonl"
    assert main(["solve", "--data", str(dataset / "test" / "samples.jsonl"), "--images",
                 str(folder), "--run", str(run), "--out", str(pred2), "--quiet"]) == 0  # fmt: skip
    assert len(pred2.read_text().splitlines()) == 3
    next(folder.glob("*-fin.C.png")).unlink()
    assert main(["solve", "--data", str(dataset / "test" / "samples.jsonl"), "--images",
                 str(folder), "--run", str(run), "--out", str(tmp_path / "p3.jsonl"),
                 "--quiet"]) != 0  # fmt: skip
    assert "no such image" in capsys.readouterr().err


def test_solver_on_images_never_reads_the_reference(dataset, tmp_path):
    import torch

    from tests.trance.solver.test_solver import _Guarded
    from tvr.trance.perception.model import SceneParserNet
    from tvr.trance.perception.predict import SceneParser
    from tvr.trance.solver import solve
    from tvr.trance.solver.images import ImagePerception

    torch.manual_seed(0)
    perception = ImagePerception(SceneParser(SceneParserNet(width=4)), dataset, "test")
    lines = [json.loads(x) for x in (dataset / "test" / "samples.jsonl").read_text().splitlines()]
    for d in lines:
        sol = solve(_Guarded(d), perception, setting="view", view="R")
        assert sol.prediction["id"] == d["id"] and isinstance(sol.prediction["steps"], list)


def test_a_folder_without_a_parser_is_one_line(tmp_path, capsys):
    assert main(["trance", "parser", "predict", "--run", str(tmp_path), "--data",
                 str(tmp_path)]) != 0  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no scene parser checkpoint" in err[0]


def test_rendering_before_importing_torch_compilers_does_not_crash():
    """A raster context made before triton is imported must not crash the process when triton
    comes (torchvision and Lightning import it): Mesa's LLVM and triton's clash in that order."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("triton") is None:
        pytest.skip("triton is not installed")
    code = ("from tvr.trance.render.raster import RasterRenderer\n"
            "RasterRenderer('preview')\nimport triton\nprint('ok')\n")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-500:]
