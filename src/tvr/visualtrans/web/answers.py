"""What a verifier may answer to an item, in the label's own form, and whether it agrees.

A verifier answers with the widgets of the item's answer format (`widget`): a letter among the
question's options (`choice`), a whole number (`count`), or objects of the question's object
list, none of them meaning `none` (`set`). `canonical_answer` turns what a page or a script sent
into the form the release writes labels in ("B", "2", "green block, white block" in the
question's order, "none"), refusing anything else with a message for the verifier. Agreement is
read as `tvr visualtrans evaluate --mode normalized` reads a reply (`agrees`). No HTTP here.
"""

from __future__ import annotations

from typing import Any

from tvr.visualtrans.data import extract as ex
from tvr.visualtrans.data.dataset import CHOICE_LETTERS, Item, question_options
from tvr.visualtrans.eval.scoring import known_objects, normalized_label
from tvr.web.errors import Refusal

#: what a verifier may flag, and how the pages say it
FLAGS: dict[str, str] = {
    "missing_option": "the correct option is missing",
    "wrong_answer": "the generated answer is wrong",
    "ambiguous": "the question is ambiguous",
    "insufficient_evidence": "not enough visual evidence in the images",
}
MAX_COUNT = 999
MAX_NOTE = 1000  # characters of a verifier's note


class VerifyError(Refusal):
    """A bad request of a verifier: the message is shown; nothing is stored."""


def widget(item: Item) -> dict[str, Any]:
    """How the pages ask for an answer: {"kind": "choice", "options": [(letter, text), ...]},
    {"kind": "count"} or {"kind": "set", "options": [name, ...]} (no options: a text field)."""
    if item.answer_format == "choice":
        texts = question_options(item) or [""] * len(CHOICE_LETTERS)
        return {"kind": "choice", "options": list(zip(CHOICE_LETTERS, texts, strict=False))}
    if item.answer_format == "count":
        return {"kind": "count", "options": []}
    return {"kind": "set", "options": question_options(item)}


def canonical_answer(item: Item, raw: Any, what: str = "answer") -> str:
    """`raw` (a string, or for a set a list of names) as the release writes a label; a
    VerifyError naming `what` when it is not an answer to this item."""
    kind = widget(item)
    if item.answer_format == "set":
        names = raw if isinstance(raw, list) else None
        if isinstance(raw, str):
            names = [] if raw.strip().lower() == "none" else raw.split(",")
        if names is None or not all(isinstance(n, str) for n in names):
            raise VerifyError(f"the {what} is a list of objects (or 'none')")
        picked = {ex.normalize_object_name(n) for n in names} - {"", "none"}
        options = kind["options"]
        if options:
            by_name = {ex.normalize_object_name(o): o for o in options}
            unknown = sorted(picked - set(by_name))
            if unknown:
                raise VerifyError(f"the {what} names objects the question does not list: "
                                  f"{', '.join(unknown)}")  # fmt: skip
            chosen = [o for o in options if ex.normalize_object_name(o) in picked]
        else:  # no object list in the question: the names as typed
            chosen = sorted(picked)
        return ", ".join(chosen) if chosen else "none"
    if not isinstance(raw, str) or not raw.strip():
        raise VerifyError(f"give an {what}" if what[0] in "aeiou" else f"give a {what}")
    text = raw.strip()
    if item.answer_format == "count":
        if not (text.isascii() and text.isdigit()) or int(text) > MAX_COUNT:
            raise VerifyError(f"the {what} is a whole number 0-{MAX_COUNT}")
        return str(int(text))
    letters = [letter for letter, _ in kind["options"]]
    if text.upper() not in letters:
        raise VerifyError(f"the {what} is one of the letters {', '.join(letters)}")
    return text.upper()


def agrees(item: Item, answer: str) -> bool:
    """Whether a canonical answer equals the item's label, read as the normalized scorer does."""
    label = normalized_label(item)
    if item.answer_format == "choice":
        return answer.upper() == label
    if item.answer_format == "count":
        return ex.read_count(answer) == label
    return ex.read_set(answer, known_objects(item)) == label


def check_flags(raw: Any) -> list[str]:
    """The flags of a review, known names only, each once, in FLAGS' order."""
    if not isinstance(raw, list) or not all(isinstance(f, str) for f in raw):
        raise VerifyError("flags is a list of names: " + ", ".join(FLAGS))
    unknown = sorted(set(raw) - set(FLAGS))
    if unknown:
        raise VerifyError(f"unknown flag(s) {', '.join(unknown)}; known: {', '.join(FLAGS)}")
    return [f for f in FLAGS if f in raw]
