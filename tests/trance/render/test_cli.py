"""`tvr render`: files written for each sample, --limit, and bad input reported as a message."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tvr.cli import main
from tvr.trance.render.fixtures import random_samples


def test_render_writes_images_and_masks(tmp_path, sample, capsys):
    pytest.importorskip("moderngl")
    from tvr.trance.render.raster import create_context

    try:
        create_context().release()
    except RuntimeError as err:
        pytest.skip(str(err))
    path = tmp_path / "samples.jsonl"
    lines = [sample, *random_samples(2, seed=4)]
    path.write_text("".join(json.dumps(s) + "\n" for s in lines))
    out = tmp_path / "out"
    rc = main(["render", "--data", str(path), "--out", str(out), "--backend", "raster",
               "--preset", "preview", "--limit", "2"])  # fmt: skip
    assert rc == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(
        [f"{i}-{v}.png" for i in ("hand", "s000000") for v in ("init.C", "fin.L", "fin.C", "fin.R")]
        + ["hand.masks.npz", "s000000.masks.npz"]
    )
    masks = np.load(out / "hand.masks.npz")
    assert masks["hand-init.C.png"].shape == (240, 320)
    assert set(np.unique(masks["hand-init.C.png"])) == {-1, 0, 1, 2, 3, 4, 5, 6}
    assert "rendered 2 samples (8 images)" in capsys.readouterr().out


def test_bad_line_is_a_message(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "x", "objects": []}\n')
    assert main(["render", "--data", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "line 1" in err and "final" in err
    assert main(["render", "--data", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path)]) == 2
