"""Final-answer extraction and the normalized readers, on hand-written model outputs."""

import pytest

from tvr.visualtrans.data.extract import (
    extract_normalized,
    extract_official,
    objects_in_question,
    read_choice,
    read_count,
    read_set,
)

# --- official extraction: every rule, in the published order ------------------------------


@pytest.mark.parametrize(
    "reply,text,rule",
    [
        ("<think>x</think>\n<answer> B </answer>", "B", "answer_tag"),
        # the first tag wins in the official rules
        ("<answer>A</answer> then <answer>C</answer>", "A", "answer_tag"),
        ("<ANSWER>2</ANSWER>", "2", "answer_tag"),
        ("**Final answer**: <|begin_of_box|>C<|end_of_box|>", "C", "glm_box"),
        ("blah\n**Final answer**: D", "D", "final_answer_bold"),
        # "Final Answer:" takes everything after it, new lines included
        ("Thinking.\nFinal answer: 3\nBecause three cups moved.", "3\nBecause three cups moved.",
         "final_answer"),
        ("Final Anser: A", "A", "final_answer_typo"),
        ("<start bbox>red block</start bbox>", "red block", "bbox_tag"),
        # an <answer> tag beats a "Final answer:" before it
        ("Final answer: A\n<answer>B</answer>", "B", "answer_tag"),
        # fallback: a short last line that is digits, a letter A-D, or has a comma
        ("Long reasoning here.\n4", "4", "last_line"),
        ("Long reasoning here.\nc", "c", "last_line"),
        ("Long reasoning here.\nred, blue", "red, blue", "last_line"),
        # fallback refused: too long, or not of those shapes
        ("Long reasoning.\nThe answer is B", "", "none"),
        ("Long reasoning.\ntwo", "", "none"),
        ("", "", "none"),
    ],
)  # fmt: skip
def test_official_extraction(reply, text, rule):
    found = extract_official(reply)
    assert (found.text, found.rule) == (text, rule)


def test_official_empty_tag_stops_the_search():
    # the published code returns the first match even when it is empty
    found = extract_official("<answer></answer>\nFinal answer: B")
    assert found.text == "" and found.rule == "answer_tag" and not found.found


def test_official_boxed_latex_is_not_read():
    assert extract_official("so \\boxed{B} is the answer").rule == "none"


# --- normalized extraction ----------------------------------------------------------------


@pytest.mark.parametrize(
    "reply,text,rule",
    [
        ("<answer>A</answer> wait <answer>C</answer>", "C", "answer_tag"),
        # an <answer> inside the thinking is ignored
        ("<think>format: <answer>X</answer></think>\n<answer>B</answer>", "B", "answer_tag"),
        ("<think>the answer is A</think>", "", "none"),
        ("reasoning...\n<answer>2", "2", "answer_tag_unclosed"),
        ("so the result is $\\boxed{3}$.", "3", "boxed"),
        ("\\boxed{\\text{red block}, \\text{blue block}}", "red block, blue block", "boxed"),
        ("<|begin_of_box|>D<|end_of_box|>", "D", "glm_box"),
        ("Final answer: 3\nBecause three cups moved.", "3", "final_answer"),
        ("**Final Answer:** B", "B", "final_answer"),
        ("The final answer is C.", "C.", "final_answer"),
        ("Final answer:\n\nred block, blue block", "red block, blue block", "final_answer"),
        ("Final Anser: A", "A", "final_answer"),
        ("Some reasoning.\nAnswer: 4", "4", "answer_line"),
        ("Some reasoning.\nSo it is B.", "So it is B.", "last_line"),
        ("x" * 101, "", "none"),
    ],
)  # fmt: skip
def test_normalized_extraction(reply, text, rule):
    found = extract_normalized(reply)
    assert (found.text, found.rule) == (text, rule)


# --- readers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,letter",
    [
        ("B", "B"), ("b", "B"), ("(c)", "C"), ("D.", "D"), ("**A**", "A"), ("[B]", "B"),
        ("B. the middle of the bookend", "B"), ("C) Yes", "C"), ("b) yes", "B"),
        ("Option D", "D"), ("The correct option is (a)", "A"), ("So it is B.", "B"),
        ("Because the bowl moved", None), ("Door", None), ("A or B", None), ("", None),
        ("none of them", None),
    ],
)  # fmt: skip
def test_read_choice(text, letter):
    assert read_choice(text) == letter


@pytest.mark.parametrize(
    "text,value",
    [
        ("2", 2), ("2.", 2), (" 13 ", 13), ("Two", 2), ("zero", 0), ("3 items", 3),
        ("three cups", 3), ("There are 4 new groups", 4), ("none", 0),
        ("2 or 3", None), ("2.5", None), ("many", None), ("", None),
    ],
)  # fmt: skip
def test_read_count(text, value):
    assert read_count(text) == value


def test_read_set_case_brackets_punctuation_and_dedup():
    assert read_set("[Red Block, blue block., red block]") == {"red block", "blue block"}
    assert read_set("- red block\n- the blue block") == {"red block", "blue block"}


def test_read_set_splits_and_unless_the_piece_is_a_known_object():
    known = {"brown and beige bacon strip", "red tomato slice"}
    assert read_set("red block and blue block") == {"red block", "blue block"}
    assert read_set("red, blue, and green block") == {"red", "blue", "green block"}
    assert read_set("brown and beige bacon strip and red tomato slice", known) == {
        "brown", "beige bacon strip", "red tomato slice",
    }  # fmt: skip
    assert read_set("brown and beige bacon strip, red tomato slice", known) == known


def test_read_set_none_is_the_empty_set_and_empty_text_is_no_answer():
    assert read_set("None") == frozenset()
    assert read_set("nothing.") == frozenset()
    assert read_set("  ") is None


def test_objects_in_question():
    q = ("List all objects. Only select from the given object list:green block, White Block, "
         "red block. Do not add or infer any new objects. ")  # fmt: skip
    assert objects_in_question(q) == {"green block", "white block", "red block"}
    assert objects_in_question("How many cups?") == set()
