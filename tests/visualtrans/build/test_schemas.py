"""Reading a model's reply into the scene family's schema: the reason names the field."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic")

from tvr.visualtrans.build.annotate import parse_metadata
from tvr.visualtrans.build.filter import parse_verdict
from tvr.visualtrans.build.schemas import SCENE_FAMILY, SCHEMAS, parse_reply_json
from tvr.visualtrans.build.vlm_stage import EpisodeRequest
from tvr.visualtrans.data.dataset import SCENES

REQ = EpisodeRequest("sort_beads_3", "sort_beads", ())


def test_every_scene_has_a_schema_and_a_prompt_per_stage():
    from importlib import resources

    assert set(SCENE_FAMILY) == set(SCENES)
    for family in set(SCENE_FAMILY.values()):
        assert family in SCHEMAS
        for stage in ("filter", "annotate"):
            ref = resources.files("tvr.visualtrans").joinpath("prompts", "build",
                                                              f"{stage}_{family}.txt")  # fmt: skip
            text = ref.read_text()
            assert "Episode: $episode" in text and "$retry_note" in text


@pytest.mark.parametrize("reply", ['{"colors": ["red"], "groups_before": 0, "groups_after": 2}',
                                   'Here:\n```json\n{"colors": ["red"], "groups_before": 0, '
                                   '"groups_after": 2}\n```', 'The answer is {"colors": ["red"], '
                                   '"groups_before": 0, "groups_after": 2} as asked.'])  # fmt: skip
def test_the_json_of_a_reply_is_found(reply):
    meta = parse_metadata(REQ, reply)
    assert (meta.episode, meta.groups_after) == ("sort_beads_3", 2)


@pytest.mark.parametrize(("reply", "reason"), [
    ("I see beads.", r"^\(reply\): no JSON"),
    ('{"colors": ["red"], "groups_before": -1, "groups_after": 2}', r"^groups_before: "),
    ('{"colors": ["red"], "groups_before": 0}', r"^groups_after: Field required"),
    ('{"colors": ["red"], "groups_before": 0, "groups_after": 1, "extra": 1}', r"^extra: "),
    ('{"scene": "sort_beads", "episode": "sort_beads_3", "colors": []}', r"^colors: "),
])  # fmt: skip
def test_an_invalid_reply_names_the_field(reply, reason):
    with pytest.raises(ValueError, match=reason):
        parse_metadata(REQ, reply)


def test_a_stack_must_use_the_listed_objects():
    req = EpisodeRequest("build_unstack_lego_0", "build_unstack_lego", ())
    bad = ('{"direction": "stack", "objects": ["a", "b"], "spread_order": ["a", "b"], '
           '"stack": ["a", "c"], "steps": [{"object": "a", "onto": "surface"}]}')  # fmt: skip
    with pytest.raises(ValueError, match=r"stack names .c., not in objects"):
        parse_metadata(req, bad)


def test_filter_verdict():
    assert parse_verdict(REQ, '{"usable": false, "reason": "occlusion"}').usable is False
    with pytest.raises(ValueError, match=r"^usable: "):
        parse_verdict(REQ, '{"usable": "perhaps"}')
    assert parse_reply_json('```\n{"a": 1}\n```') == {"a": 1}


@pytest.mark.parametrize(("meta", "reason"), [
    ('"plate_before": ["plum"], "plate_after": [], "basket_before": [], "basket_after": []',
     r"'plum' is taken from the plate or the basket and placed nowhere"),
    ('"plate_before": ["plum"], "plate_after": ["plum"], "basket_before": [], '
     '"basket_after": ["plum"]', r"'plum' is both on the plate and in the basket after"),
])  # fmt: skip
def test_food_metadata_that_contradicts_itself_is_invalid(meta, reason):
    req = EpisodeRequest("pick_place_food_0", "pick_place_food", ())
    with pytest.raises(ValueError, match=reason):
        parse_metadata(req, "{" + meta + "}")
    ok = parse_metadata(req, '{"plate_before": ["plum"], "plate_after": [], "basket_before": [], '
                             '"basket_after": ["plum"]}')  # fmt: skip
    assert ok.basket_after == ["plum"]
