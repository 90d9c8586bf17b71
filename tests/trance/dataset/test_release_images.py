"""Export a store split to the release layout with images and import it back: same content, pixels."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("moderngl")
pytest.importorskip("PIL")

from tvr.cli import main
from tvr.core.errors import InputError, UserError
from tvr.trance.data.release import read_release
from tvr.trance.data.store import open_dataset
from tvr.trance.world.vocab import IMAGE_SLOTS


def _content(sample):
    d = sample.to_dict()
    for key in ("id", "seed", "shard", "index", "order_sensitive"):
        d.pop(key, None)
    return d


@pytest.mark.parametrize("setting", ["event", "view"])
def test_round_trip_keeps_content_and_pixels(tmp_path, capsys, setting):
    src = tmp_path / "src"
    assert main(["generate", "--setting", setting, "--split-sizes", "train=2,val=0,test=5",
                 "--out", str(src), "--preset", "preview", "--image-size", "96x72",
                 "--small-size", "48x36", "--shard-size", "3", "--quiet"]) == 0  # fmt: skip
    rel = tmp_path / "release"
    assert main(["convert", "--to-release", str(src), "--split", "test", "--out", str(rel)]) == 0
    assert not list(rel.glob("*.png"))  # the images go to image/, as the original code reads them
    names = sorted(p.name for p in (rel / "image").glob("*.png"))
    assert len(names) == 20 and "img_000004-fin.R.png" in names and "img_000000-init.C.png" in names
    test = open_dataset(src).split("test")
    ids = [test.sample(i).id for i in range(5)]
    assert [s.id for s in read_release(rel / "data.jsonl")] == ids  # the ids come back
    back = tmp_path / "back"
    assert main(["convert", "--from-release", str(rel), "--out", str(back), "--split", "test",
                 "--setting", setting, "--shard-size", "2", "--small-size", "48x36"]) == 0  # fmt: skip
    a, b = open_dataset(src).split("test"), open_dataset(back).split("test")
    assert open_dataset(back).config["source"] == "release" and len(b) == 5
    open_dataset(back).verify()
    for i in range(5):
        assert _content(a.sample(i)) == _content(b.sample(i))
        x, y = a.sample(i), b.sample(i)
        assert (x.id, x.seed, x.shard, x.index, x.order_sensitive) == (
            y.id, y.seed, y.shard, y.index, y.order_sensitive
        )
        if setting == "view":
            assert b.sample(i).extra["view"] in ("L", "C", "R")
        for stage, view in IMAGE_SLOTS:
            assert np.array_equal(a.image(i, stage, view, "full"), b.image(i, stage, view, "full"))
            assert np.array_equal(a.image(i, stage, view), b.image(i, stage, view))


def test_import_names_a_missing_image(tmp_path):
    from tvr.trance.generate.release_images import import_release

    rel = tmp_path / "rel"
    rel.mkdir()
    src = tmp_path / "src"
    assert main(["generate", "--split-sizes", "train=1,val=0,test=1", "--out", str(src),
                 "--preset", "preview", "--image-size", "64x48", "--small-size", "32x32",
                 "--quiet"]) == 0  # fmt: skip
    from tvr.trance.generate.release_images import export_release

    export_release(open_dataset(src).split("train"), rel)
    (rel / "image" / "img_000000-fin.L.png").unlink()
    with pytest.raises(InputError, match=r"data.jsonl, line 1.*img_000000-fin.L.png not found"):
        import_release(rel, tmp_path / "x", small_size=(32, 32))
    with pytest.raises(UserError, match=r"no data\.jsonl"):
        import_release(tmp_path / "src", tmp_path / "y")
    assert json.loads((rel / "data.jsonl").read_text())["idx"] == 0
