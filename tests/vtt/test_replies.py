"""Reading VTT replies: JSON (also fenced, with trailing commas), numbered lines, turns; missing
descriptions are empty and counted."""

from __future__ import annotations

import pytest

from tvr.vtt.replies import clean, parse_turn_replies, parse_vtt_reply, turn_description

STEAK = ("put steak on grill", "flip steak", "remove steak")


@pytest.mark.parametrize(
    "reply",
    [
        '{"topic": "Grill Steak", "transformations": ["put steak on grill", "flip steak", '
        '"remove steak"]}',
        'Here it is:\n```json\n{\n  "topic": "Grill Steak",\n  "transformations": [\n'
        '    "Put steak on grill.",\n    "flip steak",\n    "remove steak",\n  ]\n}\n```\nDone.',
        '<think>maybe {"transformations": ["x"]}</think>\n{"topic": "Grill Steak", '
        '"transformations": ["put steak on grill", "**flip steak**", "\\"remove steak\\""]}',
    ],
    ids=["plain", "fenced-trailing-commas", "think-markdown-quotes"],
)
def test_json_replies(reply):
    found = parse_vtt_reply(reply)
    assert found is not None and found.form == "json"
    assert [t.lower() for t in found.transformations] == list(STEAK)
    assert found.topic == "Grill Steak"
    assert found.missing(3) == 0 and found.extra(3) == 0


def test_the_last_json_object_wins_and_bare_lists_count():
    reply = 'Example: {"transformations": ["a"]}\nAnswer: {"transformations": ["b", "c"]}'
    assert parse_vtt_reply(reply).transformations == ("b", "c")
    assert parse_vtt_reply('["cut mango", "eat mango"]').transformations == (
        "cut mango",
        "eat mango",
    )


def test_numbered_lines_go_to_their_numbers():
    reply = "Topic: grilling\n1. put steak on grill\n**3)** remove steak.\n- 5: serve\n"
    found = parse_vtt_reply(reply)
    assert found.form == "numbered"
    assert found.transformations == ("put steak on grill", "", "remove steak", "", "serve")
    assert found.missing(3) == 1  # number 2 never appears
    assert found.extra(3) == 2  # 4 (empty) and 5 come after N = 3
    found = parse_vtt_reply("Transformation 1: add tea powder\nTransformation 2: brew tea")
    assert found.transformations == ("add tea powder", "brew tea")


def test_short_lists_and_odd_entries_are_missing_descriptions():
    found = parse_vtt_reply('{"transformations": ["cut", null, {"transformation": "peel"}, 7, ""]}')
    assert found.transformations == ("cut", "", "peel", "7", "")
    assert found.missing(5) == 2
    short = parse_vtt_reply('{"transformations": ["cut"]}')
    assert short.missing(3) == 2 and short.extra(3) == 0


@pytest.mark.parametrize("reply", ["", None, "I cannot tell what happens.", '{"topic": "x"}'])
def test_unreadable_replies(reply):
    assert parse_vtt_reply(reply) is None


def test_turns_of_a_conversation():
    replies = ["The event is making coffee.", "No.1 transformation: Pour espresso.",
               '"Add whipped cream"\nBecause the cup is white.']  # fmt: skip
    found = parse_turn_replies(replies, 3)
    assert found.form == "turns" and found.topic == "The event is making coffee"
    assert found.transformations == ("Pour espresso", "Add whipped cream", "")
    assert found.missing(3) == 1
    assert parse_turn_replies(None, 2) is None
    assert turn_description("The No.2 transformation between No.2 and No.3 states: flip it") == (
        "flip it"
    )
    assert turn_description("<think>hmm</think>\n\n  stir the tea  ") == "stir the tea"


def test_clean():
    assert clean("  “Pour milk.”  ") == "Pour milk"
    assert clean("__stir__") == "stir"
    assert clean(3) == "3" and clean(True) == "" and clean(None) == ""
