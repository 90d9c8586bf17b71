"""`tvr vlm --task trance --data DIR`: a `tvr generate` dataset folder (issue 29) is read as it
is, its split's images found in their shard folders and its setting read from its config."""

from __future__ import annotations

import json

from tvr.cli import main
from tvr.trance.vlm_task import TranceTask


def test_a_generated_split_is_asked_with_images_from_its_shards(tmp_path, capsys):
    data = tmp_path / "gen"
    assert main(["generate", "--setting", "view", "--split-sizes", "train=2,val=2,test=4",
                 "--shard-size", "2", "--out", str(data), "--preset", "preview",
                 "--image-size", "96x72", "--small-size", "48x36", "--quiet"]) == 0  # fmt: skip
    task = TranceTask(data)  # no --images, no --setting: the data says both
    assert task.setting == "view"
    items = task.items()
    assert len(items) == 4  # four test samples, each at its own final view
    for item in items:
        assert all(p.is_file() for p in item.images), item.images
        assert {p.parent.parent.name for p in item.images} <= {"shard-00000", "shard-00001"}
    capsys.readouterr()
    assert main(["vlm", "prompt", "--task", "trance", "--data", str(data), "--split", "val",
                 "--item", "0"]) == 0  # fmt: skip
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert all(p.startswith(str(data / "val" / "shards")) for p in json.loads(last)["images"])
