"""The VTT task of `tvr vlm`: panel order of the event strip, Sep and multiturn items, prompts."""

from __future__ import annotations

import pytest

pytest.importorskip("PIL")

from PIL import Image

from tests.vtt.release import make_release, state_colour
from tests.vtt.samples import record
from tvr.core.errors import UserError
from tvr.vlm.images import ComposedImage, image_ref_data_url
from tvr.vlm.tasks import build_messages, check_images, followup_fields, followup_message
from tvr.vlm.templates import load_followup_template, load_template, shipped_template
from tvr.vtt.strip import GAP, strip_image, strip_jpeg
from tvr.vtt.vlm_task import VttTask, answer_slots, ordinal

TWELVE = [f"step {k}" for k in range(11)]  # N = 11: 12 states, where name order is not state order


@pytest.fixture
def release(tmp_path):
    return make_release(tmp_path / "rel")


def test_strip_panels_are_in_state_order_and_numbered(tmp_path):
    root = make_release(tmp_path / "rel", [record(0, TWELVE)], size=(40, 30))
    task = VttTask(root, root / "states")
    (item,) = task.items()
    (strip,) = item.images
    assert isinstance(strip, ComposedImage)
    names = [p.name for p in strip.sources]
    assert names == [f"{task.records[0].id}_12_{i}.jpg" for i in range(12)]
    assert names != sorted(names)  # a directory listing would put _10 and _11 before _2
    image = strip_image(strip.sources)
    assert image.size == (12 * 40 + 11 * GAP, 30)
    for i in range(12):
        x0 = i * (40 + GAP)
        centre = image.getpixel((x0 + 30, 25))  # right of the number box, inside the panel
        assert all(abs(a - b) <= 6 for a, b in zip(centre, state_colour(0, i), strict=True))
        assert image.getpixel((x0 + 1, 1)) == (0, 0, 0)  # the number box's corner
    if GAP:
        assert image.getpixel((40, 15)) == (255, 255, 255)  # the gap after panel 1
    data = strip_jpeg(strip.sources)
    assert data.startswith(b"\xff\xd8\xff") and strip_jpeg(strip.sources) == data
    assert image_ref_data_url(strip).startswith("data:image/jpeg;base64,")


def test_strip_scales_panels_to_one_height(tmp_path):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    Image.new("RGB", (60, 40), "red").save(a)
    Image.new("RGB", (40, 20), "blue").save(b)
    image = strip_image([a, b])
    assert image.size == (60 * 20 // 40 + GAP + 40, 20)


def test_strip_of_a_broken_image_is_one_line(tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"not an image")
    with pytest.raises(UserError, match=r"bad\.jpg: not a readable image"):
        strip_jpeg([bad])


def test_sep_sends_every_state_in_order(release):
    task = VttTask(release, release / "states", variant="sep")
    items = task.items()
    assert [it.meta["n"] for it in items] == [3, 2, 1]  # the test split only
    first = items[0]
    assert [p.name for p in first.images] == [f"{first.id}_4_{i}.jpg" for i in range(4)]
    assert not first.followups
    content = build_messages(first, load_template(None, task))[0]["content"]
    assert [part["type"] for part in content] == ["text"] + ["image_url"] * 4
    assert content[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")


def test_multiturn_is_the_event_then_one_turn_per_pair(release):
    task = VttTask(release, release / "states", variant="multiturn")
    item = task.items()[0]
    assert len(item.images) == 4 and len(item.followups) == 3
    followup = load_followup_template(None, task)
    followup.check_fields(set(followup_fields(task)))
    for k, turn in enumerate(item.followups, start=1):
        assert [p.name for p in turn.images] == [f"{item.id}_4_{k - 1}.jpg", f"{item.id}_4_{k}.jpg"]
        text = followup_message(item, turn, followup)["content"][0]["text"]
        assert text.strip() == (f"Describe the No.{k} transformation between No.{k} and "
                                f"No.{k + 1} states with a phrase:")  # fmt: skip
    first = load_template(None, task).render(dict(item.fields))
    assert first.startswith("There are 4 pictures of an event strip")
    assert first.rstrip().endswith("Describe the event in the pictures:")


def test_fig8_prompt_with_and_without_topic(release):
    plain = VttTask(release, release / "states")
    item = plain.items()[0]
    text = load_template(None, plain).render(dict(item.fields))
    assert "There are 4 pictures of an event strip" in text
    assert "Write 3 transformations between every two adjacent panels" in text
    assert '"put steak on grill", "release liquid", "add whipped cream"' in text
    assert "topic" not in text
    assert text.count("transformation you wrote>") == 3
    topical = VttTask(release, release / "states", topic=True)
    text = load_template(None, topical).render(dict(item.fields))
    assert "Write the topic of this event strip, and 3 transformations" in text
    assert '"topic": <the topic you wrote>,' in text


def test_answer_slots_and_ordinals():
    assert [ordinal(k) for k in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd"]  # fmt: skip
    assert answer_slots(2) == ("    <the 1st transformation you wrote>,\n"
                               "    <the 2nd transformation you wrote>")  # fmt: skip


def test_every_shipped_template_fills_from_the_task_fields():
    for name in ("vtt.txt", "vtt_topic.txt", "vtt_multiturn.txt"):
        assert shipped_template(name, "tvr.vtt").placeholders <= set(VttTask.fields)
    pair = shipped_template("vtt_multiturn_pair.txt", "tvr.vtt")
    assert pair.placeholders <= set(VttTask.fields | VttTask.followup_fields)


def test_task_errors_are_one_line(release, tmp_path):
    with pytest.raises(UserError, match="topic prompt is for strip and sep"):
        VttTask(release, release / "states", variant="multiturn", topic=True)
    with pytest.raises(UserError, match="no val samples"):
        VttTask(release, release / "states", split="val")
    with pytest.raises(UserError, match="no such records file"):
        VttTask(tmp_path / "nowhere", release / "states")
    with pytest.raises(UserError, match="a VTT release folder has one"):
        VttTask(tmp_path, release / "states")
    task = VttTask(release, release / "states")
    (release / "states" / f"{task.records[0].id}_4_2.jpg").unlink()
    with pytest.raises(UserError, match=r"1 image\(s\) not found: .*_4_2\.jpg"):
        check_images(task.items())
