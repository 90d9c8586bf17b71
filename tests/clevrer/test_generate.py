"""`tvr clevrer generate` end to end: layout, determinism, resume, the oracle at 100%, chance."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tvr.clevrer.data.questions import read_questions
from tvr.clevrer.generate.config import GenerateConfig
from tvr.clevrer.generate.job import generate
from tvr.cli import main

pytest.importorskip("pybullet")


def _digest(root: Path) -> dict[str, str]:
    """sha256 of every file of a set outside shards/ (what a user reads)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "shards" not in p.parts
    }


@pytest.fixture(scope="module")
def symbolic_set(tmp_path_factory) -> tuple[GenerateConfig, Path]:
    out = tmp_path_factory.mktemp("clevrer") / "set"
    config = GenerateConfig(num=6, seed=3, shard_size=2, backend="none").validate()
    generate(config, out, progress=False)
    return config, out


def test_layout_of_a_generated_set(symbolic_set):
    _, out = symbolic_set
    assert json.loads((out / "config.json").read_text())["num"] == 6
    for i in range(6):
        assert (out / "annotations" / "annotation_00000-01000" / f"annotation_{i:05d}.json").is_file()
        assert (out / "dynamics" / f"sim_{i:05d}.json").is_file()
    splits = {s: [v.scene_index for v in read_questions(out / "questions" / f"{s}.json")]
              for s in ("train", "validation", "test")}  # fmt: skip
    assert splits == {"train": [0, 1, 2], "validation": [3, 4], "test": [5]}


def test_same_seed_same_bytes_and_resume_after_a_kill(symbolic_set, tmp_path):
    config, out = symbolic_set
    again = tmp_path / "again"
    generate(config, again, progress=False)
    assert _digest(again) == _digest(out)
    # a killed run: one shard never published, another one's temporary folder left behind
    shutil.rmtree(again / "shards" / "symbolic" / "shard-00001")
    (again / "shards" / "symbolic" / ".shard-00002.tmp-1-abc").mkdir()
    for p in (again / "questions").iterdir():
        p.unlink()
    generate(config, again, progress=False)
    assert _digest(again) == _digest(out)
    assert not list((again / "shards" / "symbolic").glob(".*"))


def test_another_config_in_the_same_folder_is_refused(symbolic_set, capsys):
    _, out = symbolic_set
    code = main(["clevrer", "generate", "--out", str(out), "--num", "7", "--backend", "none",
                 "--quiet"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "config" in err and "Traceback" not in err


def test_oracle_executor_scores_100_and_random_is_at_chance(symbolic_set, tmp_path, capsys):
    _, out = symbolic_set
    questions = out / "questions" / "train.json"
    oracle = tmp_path / "oracle.json"
    assert main(["clevrer", "execute", "--data", str(questions), "--dynamics",
                 str(out / "dynamics"), "--out", str(oracle)]) == 0  # fmt: skip
    assert "(0 program errors)" in capsys.readouterr().out
    assert main(["clevrer", "evaluate", "--data", str(questions), "--predictions",
                 str(oracle), "--json"]) == 0  # fmt: skip
    score = json.loads(capsys.readouterr().out)["score"]
    assert score["descriptive"]["total"] > 0 and score["descriptive"]["accuracy"] == 1.0
    for qtype in ("explanatory", "counterfactual"):
        assert score[qtype]["per_question"]["total"] > 0
        assert score[qtype]["per_question"]["accuracy"] == 1.0
    # the generated questions are balanced, so a random answerer scores near chance
    rnd = tmp_path / "random.json"
    assert main(["clevrer", "baseline", "--data", str(questions), "random",
                 "--out", str(rnd)]) == 0  # fmt: skip
    capsys.readouterr()
    main(["clevrer", "evaluate", "--data", str(questions), "--predictions", str(rnd),
          "--json"])  # fmt: skip
    score = json.loads(capsys.readouterr().out)["score"]
    assert score["descriptive"]["accuracy"] < 0.7


def test_rendered_set_has_videos_and_masks(rendered_set):
    import av

    for i in range(3):
        video = rendered_set / "videos" / "video_00000-01000" / f"video_{i:05d}.mp4"
        with av.open(str(video)) as c:
            frames = list(c.decode(video=0))
        assert len(frames) == 128 and (frames[0].width, frames[0].height) == (480, 320)
        masks = json.loads((rendered_set / "masks" / f"sim_{i:05d}.json").read_text())
        assert len(masks["frames"]) == 128
