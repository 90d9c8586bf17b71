"""`tvr vtt build`: states extracted at the documented times, the filtering rules, missing and
broken videos skipped and counted, the split, resuming, the layout read back by the loader."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from tests.video.conftest import frame_number, write_video
from tvr.cli import main
from tvr.core.errors import InputError, UserError
from tvr.video.records import Step, VideoRecord
from tvr.vtt.data.build import (
    BuildConfig,
    build,
    drop_reason,
    plan_samples,
    sample_id,
    table1_fractions,
)
from tvr.vtt.data.records import check_states, read_records
from tvr.vtt.data.taxonomy import category_of, split_camel_case, topic_name

pytest.importorskip("av")
Image = pytest.importorskip("PIL.Image")


def _step(start, end, label="step"):
    return {"id": "1", "segment": [start, end], "label": label}


#: 20-frame videos at 10 fps (frame i at i / 10 s, solid grey so that its mean says i)
COIN = {
    "vidA": {"class": "MakeSandwich", "subset": "training", "recipe_type": 7, "duration": 2.0,
             "annotation": [_step(0.0, 0.3, "cut bread"), _step(0.5, 0.9, "spread butter"),
                            _step(1.2, 1.5, "put ham on bread")]},
    "vidB": {"class": "MakeSandwich", "subset": "testing", "recipe_type": 7, "duration": 2.0,
             "annotation": [_step(1.0, 1.4, "put ham on bread"), _step(0.2, 0.5, "cut bread")]},
    "vidC": {"class": "MakeSandwich", "subset": "training", "recipe_type": 7,
             "annotation": [_step(0.0, 0.6), _step(0.5, 0.9)]},
    "vidD": {"class": "MakeSandwich", "subset": "training", "recipe_type": 7,
             "annotation": [_step(0.1 * i, 0.1 * i + 0.05) for i in range(13)]},
    "vidE": {"class": "MakeSandwich", "subset": "training", "recipe_type": 7, "annotation": []},
    "vidF": {"class": "AttendNBASkillsChallenge", "subset": "training", "recipe_type": 9,
             "annotation": [_step(0.0, 1.0, "dribble")]},
    "vidG": {"class": "MakeSandwich", "subset": "training", "recipe_type": 7,
             "annotation": [_step(0.0, 1.0, "cut bread")]},
    "vidH": {"class": "MakeSandwich", "subset": "training", "recipe_type": 7,
             "annotation": [_step(0.0, 1.0, "cut bread"), _step(1.0, 5.0, "eat")]},
}  # fmt: skip
PRIMARY = "105222\nGrill Steak\nhttp://example.org/steak\n2\nput steak on grill,flip steak\n\n"


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """COIN.json, a CrossTask release and a video folder (vidF missing, vidG broken)."""
    root = tmp_path_factory.mktemp("vtt-sources")
    coin = root / "COIN.json"
    coin.write_text(json.dumps({"database": COIN}))
    ct = root / "crosstask"
    (ct / "annotations").mkdir(parents=True)
    (ct / "tasks_primary.txt").write_text(PRIMARY)
    (ct / "videos.csv").write_text("105222,vidX,https://www.youtube.com/watch?v=vidX\n")
    (ct / "annotations" / "105222_vidX.csv").write_text("1,0.2,0.4\n2,0.6,1.1\n")
    videos = root / "videos"
    (videos / "sub").mkdir(parents=True)
    for vid in ("vidA", "vidB", "vidH"):
        write_video(videos / f"{vid}.mp4")
    write_video(videos / "sub" / "Grilling a steak [vidX].mp4")
    (videos / "vidG.mp4").write_text("not a video")
    return {"coin": coin, "crosstask": ct, "videos": videos, "root": root}


def _config(sources, **kw):
    return BuildConfig(coin=str(sources["coin"]), crosstask=str(sources["crosstask"]), **kw)


@pytest.fixture(scope="module")
def built(sources, tmp_path_factory):
    out = tmp_path_factory.mktemp("built") / "vtt"
    result = build(_config(sources, shard_size=3), [sources["videos"]], out, progress=False)
    return out, result


def _states(out, record):
    n = len(record["annotation"])
    return [Image.open(out / "states" / f"{record['id']}_{n + 1}_{i}.jpg") for i in range(n + 1)]


def test_states_are_the_frames_at_the_start_of_step_1_and_the_end_of_each_step(built):
    out, _ = built
    records = {r.youtube_id: r for r in read_records(out / "meta" / "vtt.jsonl")}
    import numpy as np

    # vidA: steps [0, .3], [.5, .9], [1.2, 1.5] -> times 0, .3, .9, 1.5 -> frames 0, 3, 9, 15
    # vidB: listed out of order, sorted: [.2, .5], [1.0, 1.4] -> frames 2, 5, 14
    # vidX (CrossTask): [.2, .4], [.6, 1.1] -> frames 2, 4, 11
    want = {"vidA": [0, 3, 9, 15], "vidB": [2, 5, 14], "vidX": [2, 4, 11]}
    for vid, frames in want.items():
        rec = json.loads((out / "meta" / "vtt.jsonl").read_text().splitlines()[
            records[vid].line - 1])  # fmt: skip
        images = _states(out, rec)
        assert [frame_number(np.asarray(im)) for im in images] == frames, vid
        assert all(im.size == (427, 256) for im in images)  # 80x48 -> 256 on the short side
    assert records["vidB"].labels == ["cut bread", "put ham on bread"]
    assert records["vidA"].state_names()[0] == f"{records['vidA'].id}_4_0.jpg"


def test_layout_reads_back_with_the_loader_and_every_state_image_exists(built):
    out, result = built
    records = read_records(out / "meta" / "vtt.jsonl")
    assert check_states(records, out / "states", out / "meta" / "vtt.jsonl", verify=True) == 10
    assert [r.youtube_id for r in records] == ["vidA", "vidB", "vidX"]
    a, _, x = records
    assert (a.ori, a.topic, a.category) == ("coin", "Make Sandwich", "Dish")
    assert (x.ori, x.topic, x.category) == ("cross", "Grill Steak", "Dish")
    assert a.id == hashlib.sha256(b"coin/7/vidA").hexdigest()[:16] == sample_id("coin", "7", "vidA")
    assert x.duration == pytest.approx(2.0, abs=0.11)  # CrossTask has no duration: probed
    assert a.duration == 2.0
    assert result.records == 3


def test_report_counts_each_drop_reason_and_each_video_problem(built):
    out, result = built
    report = result.report
    assert report["dropped"] == {"no steps": 1, "more than 12 steps": 1, "overlapping steps": 1}
    assert report["planned"] == 6 and report["reordered"] == 1
    assert report["videos"]["missing"] == 1 and report["videos"]["broken"] == 2
    skipped = {s["youtube_id"]: s for s in map(json.loads,
               (out / "meta" / "skipped.jsonl").read_text().splitlines())}  # fmt: skip
    assert skipped["vidF"]["problem"] == "missing"
    assert skipped["vidG"]["problem"] == "broken" and "cannot read" in skipped["vidG"]["reason"]
    assert skipped["vidH"]["problem"] == "broken" and "ends at" in skipped["vidH"]["reason"]
    assert json.loads((out / "report.json").read_text()) == report
    assert json.loads((out / "config.json").read_text())["short_side"] == 256


def test_a_rerun_resumes_and_builds_again_a_shard_whose_missing_video_appeared(sources, tmp_path):
    out = tmp_path / "vtt"
    videos = tmp_path / "videos"
    shutil.copytree(sources["videos"], videos)
    config = _config(sources, shard_size=3)
    first = build(config, [videos], out, progress=False)
    lines = (out / "meta" / "vtt.jsonl").read_text()
    (out / "shards" / "shard-00001.jsonl").unlink()  # as if killed before shard 1 was published
    assert build(config, [videos], out, progress=False).report == first.report
    assert (out / "meta" / "vtt.jsonl").read_text() == lines
    shard1 = (out / "shards" / "shard-00001.jsonl").stat().st_mtime_ns  # vidG, vidH, vidX
    extra = tmp_path / "more"
    extra.mkdir()
    write_video(extra / "vidF.webm", codec="libvpx-vp9")
    again = build(config, [videos, extra], out, progress=False)
    assert again.report["videos"]["missing"] == 0 and again.records == 4
    assert (out / "shards" / "shard-00001.jsonl").stat().st_mtime_ns == shard1  # not redone
    f = next(r for r in read_records(out / "meta" / "vtt.jsonl") if r.youtube_id == "vidF")
    assert (f.topic, f.category) == ("Attend N B A Skills Challenge", "Sport")
    with pytest.raises(UserError, match="another config"):
        build(_config(sources, shard_size=3, short_side=128), [videos], out, progress=False)


def test_drop_rules():
    def steps(*spans):
        return tuple(Step("x", s, e, "1") for s, e in spans)

    assert drop_reason((), 12) == "no steps"
    assert drop_reason(steps(*[(i, i + 1) for i in range(13)]), 12) == "more than 12 steps"
    assert drop_reason(steps(*[(i, i + 1) for i in range(12)]), 12) is None  # touching is kept
    assert drop_reason(steps((5, 9), (0, 6)), 12) == "overlapping steps"  # in any listed order
    assert drop_reason(steps((5, 9), (0, 5)), 12) is None


def _videos(n, topic="MakeSandwich", subset="training"):
    return [VideoRecord(f"v{i:03d}", "coin", topic, "7", subset, (Step("a", 0, 1, "1"),))
            for i in range(n)]  # fmt: skip


def test_paper_split_follows_table1_within_each_topic_and_ignores_which_videos_exist():
    config = BuildConfig(coin="COIN.json", seed=3)
    plan = plan_samples(config, _videos(200), lambda vid: None)
    splits = [s.split for s in plan.samples]
    val, test = table1_fractions()
    assert (splits.count("val"), splits.count("test")) == (round(200 * val), round(200 * test))
    assert (round(200 * val), round(200 * test)) == (20, 21)
    found = plan_samples(config, _videos(200), lambda vid: f"/v/{vid}.mp4")
    assert [s.split for s in found.samples] == splits
    assert [s.split for s in plan_samples(BuildConfig(coin="x", seed=3), _videos(200)[::-1],
                                          lambda v: None).samples][::-1] == splits  # fmt: skip
    other = plan_samples(BuildConfig(coin="COIN.json", seed=4), _videos(200), lambda v: None)
    assert [s.split for s in other.samples] != splits
    assert [s.split for s in plan_samples(config, _videos(1), lambda v: None).samples] == [
        "train"]  # fmt: skip


def test_source_split_maps_the_sources_subsets():
    config = BuildConfig(coin="COIN.json", split="source")
    coin = plan_samples(config, _videos(2, subset="testing"), lambda v: None)
    assert [s.split for s in coin.samples] == ["test", "test"]
    cross = [VideoRecord("c", "crosstask", "Grill Steak", "105222", "validation",
                         (Step("a", 0, 1, "1"),))]  # fmt: skip
    assert plan_samples(config, cross, lambda v: None).samples[0].split == "test"


def test_topics_and_categories_come_from_table6():
    assert split_camel_case("MakeRJ45Cable") == "Make RJ45 Cable"
    assert split_camel_case("ReplaceCDDriveWithSSD") == "Replace CD Drive With SSD"
    assert topic_name("CleanBathtub") == "Clean Bath tub"
    assert category_of("Make a Latte") == "Drink and Snack"
    assert category_of("Jack Up a Car") == "Vehicle"
    plan = plan_samples(BuildConfig(coin="x"), _videos(1, topic="JuggleFire"), lambda v: None)
    assert (plan.samples[0].topic, plan.samples[0].category) == ("Juggle Fire", "Unknown")
    assert plan.unknown_topics == ["Juggle Fire"]


def test_cli_prints_the_report_and_table1(sources, tmp_path, capsys):
    out = tmp_path / "vtt"
    argv = ["vtt", "build", "--coin", str(sources["coin"]), "--videos", str(sources["videos"]),
            "--out", str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "COIN: 8 videos read" in text
    assert "dropped 3: no steps 1, more than 12 steps 1, overlapping steps 1" in text
    assert "1 missing, 2 broken" in text
    assert "built 2 samples" in text and "ours (paper:" in text
    assert main(["vtt", "stats", "--data", str(out / "meta" / "vtt.jsonl"),
                 "--images", str(out / "states"), "--verify-images"]) == 0  # fmt: skip


def test_bad_annotation_files_are_named_by_file_line_and_field(sources, tmp_path, capsys):
    coin = tmp_path / "COIN.json"
    bad = json.loads(json.dumps(COIN))
    bad["vidB"]["annotation"][1]["segment"] = [0.5, 0.2]
    coin.write_text(json.dumps({"database": bad}))
    with pytest.raises(InputError) as err:
        build(BuildConfig(coin=str(coin)), [sources["videos"]], tmp_path / "a", progress=False)
    assert err.value.field == 'database["vidB"].annotation[1].segment'
    ct = tmp_path / "ct"
    shutil.copytree(sources["crosstask"], ct)
    (ct / "annotations" / "105222_vidX.csv").write_text("1,0.2,0.4\n2,0.6,x\n")
    argv = ["vtt", "build", "--crosstask", str(ct), "--videos", str(sources["videos"]),
            "--out", str(tmp_path / "b"), "--quiet"]  # fmt: skip
    assert main(argv) == 2
    message = capsys.readouterr().err.strip()
    assert message.endswith(f"{ct / 'annotations' / '105222_vidX.csv'}, line 2, field 'end': "
                            "expected a time >= start (0.6) in seconds, got 'x'")  # fmt: skip
    assert main(["vtt", "build", "--videos", str(tmp_path), "--out", str(tmp_path / "c")]) == 2
    assert "give --coin COIN.json, --crosstask DIR or both" in capsys.readouterr().err
