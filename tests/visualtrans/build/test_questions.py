"""The question families on hand-made metadata: each answer is the truth worked out by hand, the
answer letters are balanced, and every generated question is matched back to its family."""

from __future__ import annotations

from collections import Counter

import pytest

pytest.importorskip("pydantic")

from tvr.visualtrans.build.questions import (
    BY_NAME,
    FAMILIES,
    assemble,
    drafts_of,
    match_family,
)
from tvr.visualtrans.build.questions.base import EpisodeView
from tvr.visualtrans.build.schemas import validate_metadata
from tvr.visualtrans.data.dataset import infer_answer_format

STACK = {"direction": "stack", "objects": ["red block", "blue block", "green block"],
         "spread_order": ["red block", "blue block", "green block"], "closest": "blue block",
         "stack": ["green block", "red block", "blue block"],
         "steps": [{"object": "green block", "onto": "surface"},
                   {"object": "red block", "onto": "green block"},
                   {"object": "blue block", "onto": "red block"}]}  # fmt: skip


def view(scene: str, n: int, meta: dict, mediums: int = 1) -> EpisodeView:
    ep = f"{scene}_{n}"
    frames = {"start": f"{scene}/{ep}_start.jpg", "medium": f"{scene}/{ep}_medium.jpg",
              "end": f"{scene}/{ep}_end.jpg"}  # fmt: skip
    return EpisodeView(ep, scene, validate_metadata({**meta}, scene, ep), frames)


def answers(drafts, family):
    return {d.key.split("|", 2)[2] if d.key.count("|") >= 2 else "": d.answer
            for d in drafts[family]}


def test_stack_families_answer_from_the_stack():
    d = drafts_of([view("build_unstack_lego", 0, STACK)], seed=0)
    layer = answers(d, "fine.layer_absolute")
    # red (leftmost) is layer 2, green (rightmost) layer 1, blue (closest) layer 3
    assert layer == {"leftmost": "Layer 2 (from the bottom)", "rightmost": "Layer 1 (from the bottom)",
                     "closest": "Layer 3 (from the bottom)"}  # fmt: skip
    rel = answers(d, "fine.layer_relative")
    assert rel["to the left of blue block"] == "Layer 2 (from the bottom)"  # red
    assert rel["to the right of blue block"] == "Layer 1 (from the bottom)"  # green
    sets = answers(d, "fine.set_absolute")
    assert sets["above|leftmost"] == "blue block"
    assert sets["below|leftmost"] == "green block"
    assert sets["above|rightmost"] == "red block, blue block"
    assert "below|rightmost" not in sets  # nothing below the bottom: no question
    plan = answers(d, "plan.step")
    assert plan == {"first": "Put the green block on the surface",
                    "last": "Place the blue block on the red block"}  # fmt: skip
    assert answers(d, "plan.object") == {"first": "green block", "last": "blue block"}
    causal = {x.correct for x in d["causal.stack"]}
    assert len(causal) == 2  # one per placement: red on green, blue on red
    for c in causal:
        assert ("red" in c and "green" in c) or ("blue" in c and "red" in c)


def test_unstacking_episode_shows_the_images_in_building_order():
    d = drafts_of([view("build_unstack_lego", 1, {**STACK, "direction": "unstack"})], seed=0)
    first = d["fine.layer_absolute"][0]
    assert first.images == ["build_unstack_lego/build_unstack_lego_1_end.jpg",
                            "build_unstack_lego/build_unstack_lego_1_start.jpg"]  # fmt: skip


def test_row_rack_count_families():
    row = {"objects": ["red book", "blue book", "green book"],
           "initial_order": ["red book", "blue book", "green book"],
           "final_order": ["blue book", "red book", "green book"]}  # fmt: skip
    rack = {"objects": ["a cup", "b cup", "c cup", "d cup"],
            "before": {"top-left": "a cup", "top-right": "b cup", "bottom-right": "c cup",
                       "bottom-left": "d cup"},
            "after": {"top-left": "b cup", "top-right": "c cup", "bottom-right": "d cup",
                      "bottom-left": "a cup"}}  # fmt: skip
    food = {"plate_before": ["red apple"], "plate_after": ["red apple", "green cake", "plum"],
            "basket_before": ["green cake", "plum"], "basket_after": []}  # fmt: skip
    views = [view("insert_remove_bookshelf", 0, row), view("insert_remove_cups_from_rack", 0, rack),
             view("pick_place_food", 0, food),
             view("sort_beads", 0, {"colors": ["red"], "groups_before": 1, "groups_after": 3}),
             view("add_remove_lid", 0, {"cups": [{"name": "l", "lid_before": True, "lid_after": False},
                                                 {"name": "r", "lid_before": True, "lid_after": True}]})]  # fmt: skip
    d = drafts_of(views, seed=0)
    pos = answers(d, "fine.row_position")
    assert pos == {"leftmost": "the middle of the bookend", "middle": "the far left of the bookend",
                   "rightmost": "the far right of the bookend"}  # fmt: skip
    assert d["global.row_order"][0].answer.startswith("Yes")
    assert "red book, blue book, green book to blue book, red book, green book" in d["global.row_order"][0].answer
    assert d["global.quadrant"][0].answer.startswith("Yes")
    # a rotation by one place keeps the cyclic order
    assert all(x.answer.startswith("No") for x in d["global.cyclic"])
    assert d["count.plate_new"][0].label == "2"
    assert d["count.bead_groups"][0].label == "2"
    assert d["count.lids"][0].label == "1"


def test_intermediate_distractors_are_other_episodes_frames():
    views = [view("build_unstack_lego", i, STACK) for i in range(4)]
    d = drafts_of(views, seed=0)
    for x in d["interm.candidates"]:
        assert x.correct == f"build_unstack_lego/{x.episode}_medium.jpg"
        assert all(x.episode not in o for o in x.distractors)
        assert len(x.distractors) == 3


def _many_stacks(n: int):
    import itertools

    names = ["red block", "blue block", "green block", "yellow block"]
    out = []
    for i, perm in enumerate(itertools.islice(itertools.permutations(names), n)):
        out.append(view("assemble_disassemble_legos", i, {
            "direction": "stack", "objects": names, "spread_order": names, "closest": names[1],
            "stack": list(perm), "steps": [{"object": perm[0], "onto": "surface"}]
            + [{"object": perm[j], "onto": perm[j - 1]} for j in range(1, 4)]}))  # fmt: skip
    return out


def test_letters_are_balanced_and_seeded():
    views = _many_stacks(24)
    items = assemble(drafts_of(views, 3), 3)
    again = assemble(drafts_of(views, 3), 3)
    assert [i for i, _ in items] == [i for i, _ in again]
    for family in ("causal.stack", "plan.step", "plan.object", "interm.candidates"):
        letters = Counter(i["label"] for i, d in items if d.family == family)
        assert set(letters) == set("ABCD"), family
        assert max(letters.values()) - min(letters.values()) <= 1, (family, letters)
    other = assemble(drafts_of(views, 4), 4)
    assert [i["question"] for i, _ in other] != [i["question"] for i, _ in items]


def test_the_label_points_at_the_correct_option():
    views = _many_stacks(8)
    for item, d in assemble(drafts_of(views, 0), 0):
        if d.answer_format != "choice" or d.image_options:
            continue
        letter = item["label"]
        nxt = chr(ord(letter) + 1)
        text = item["question"].split(f"{letter}. ", 1)[1].split(f" {nxt}. ")[0].split(f"\n{nxt}. ")[0]
        assert text.strip() == d.correct, (d.family, item["question"])


def test_every_generated_question_matches_its_own_family():
    views = [*_many_stacks(6), view("insert_remove_bookshelf", 0, {"objects": ["a", "b", "c"], "initial_order": ["a", "b", "c"], "final_order": ["a", "b", "c"]})]
    for item, d in assemble(drafts_of(views, 0), 0, low_count_keep=1.0):
        fmt = infer_answer_format(item["task_type"], item["label"])
        assert fmt == BY_NAME[d.family].answer_format
        assert match_family(item["task_type"], item["scene"], item["question"], fmt) == (d.family, "")


def test_low_counts_are_subsampled():
    views = [view("sort_beads", i, {"colors": ["red"], "groups_before": 0, "groups_after": i % 2})
             for i in range(40)]  # fmt: skip
    def counts(keep):
        return [i for i, d in assemble(drafts_of(views, 0), 0, low_count_keep=keep)
                if d.family == "count.bead_groups"]

    assert 3 <= len(counts(0.3)) <= 25
    assert len(counts(1.0)) == 40


def test_family_table_covers_the_six_subtasks():
    assert {f.task_type for f in FAMILIES} == {"spatial_fine_grained", "spatial_global",
                                              "procedural_interm", "procedural_causal",
                                              "procedural_plan", "count"}  # fmt: skip


def test_relative_questions_have_one_object_that_fits():
    """A relative question ("the object originally to the left of X") names one object only:
    with X further right, several objects fit, each in its own layer, and the question has more
    than one right answer."""
    import re

    names = ["red block", "blue block", "green block", "yellow block", "white block"]
    views = [view("build_unstack_lego", n, {
        "direction": "stack", "objects": names[:k], "spread_order": names[:k],
        "closest": names[0], "stack": list(reversed(names[:k])),
        "steps": [{"object": names[k - 1], "onto": "surface"}]
        + [{"object": names[j], "onto": names[j + 1]} for j in range(k - 2, -1, -1)]})
        for n, k in enumerate((2, 3, 4, 5))]  # fmt: skip
    d = drafts_of(views, seed=0)
    seen = 0
    for family in ("fine.layer_relative", "fine.set_relative"):
        for draft in d[family]:
            meta = next(v.meta for v in views if v.episode == draft.episode)
            side, ref = re.search(r"originally to the (left|right) of (.+?)(?: move to\?|,)",
                                  draft.stem).groups()  # fmt: skip
            i = meta.spread_order.index(ref)
            fits = meta.spread_order[:i] if side == "left" else meta.spread_order[i + 1 :]
            # every object that fits is an answer of its own: one layer, or one set above/below
            answers_of_fits = set()
            for obj in fits:
                j = meta.stack.index(obj)
                if family == "fine.layer_relative":
                    answers_of_fits.add(f"Layer {j + 1} (from the bottom)")
                else:
                    where = "above" if " above the object" in draft.stem else "below"
                    names_ = meta.stack[j + 1 :] if where == "above" else meta.stack[:j]
                    answers_of_fits.add(", ".join(names_))
            assert len(fits) == 1, (family, draft.stem[:120], fits)
            assert answers_of_fits == {draft.answer}
            seen += 1
    assert seen >= 8
