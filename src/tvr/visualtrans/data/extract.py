"""Find the final answer in a model's free-text reply and read it as a letter, a count or a set.

Two rule sets, named by the scoring modes that use them (docs/visualtrans.md lists each rule):

* `official` reproduces the extraction of the benchmark's published scorer, quirks included:
  the first `<answer>...</answer>`, then a GLM `<|begin_of_box|>` box, then `**Final answer**:`
  / `Final Answer:` / `Final Anser:` (everything after the marker, to the end of the reply),
  then `<start bbox>...</start bbox>`; failing those, the last line if it is at most 10
  characters and is all digits, a letter A-D, or contains a comma.
* `normalized` first drops `<think>...</think>` blocks, then takes the *last* `<answer>` tag
  (or an unclosed one at the end), the last `\\boxed{...}`, the last GLM box, the last
  "final answer" line, the last "Answer:" line, and finally the last non-empty line when it is
  at most 100 characters. The readers below then interpret that text for the item's format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CHOICE_LETTERS = ("A", "B", "C", "D")
NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
#: whole answers that mean "no object" in a set answer (normalized mode)
NONE_ANSWERS = ("none", "no objects", "no object", "nothing", "empty", "n/a", "no")
LAST_LINE_MAX_CHARS = 100
OFFICIAL_LAST_LINE_MAX_CHARS = 10

_IS = re.IGNORECASE | re.DOTALL


@dataclass(frozen=True)
class Extraction:
    """The final-answer text found in a reply ("" if none) and the name of the rule that found it."""

    text: str
    rule: str

    @property
    def found(self) -> bool:
        return bool(self.text)


# --- official ---------------------------------------------------------------------------------

_OFFICIAL_PATTERNS = (
    ("answer_tag", re.compile(r"<answer>\s*(.*?)\s*</answer>", _IS)),
    ("glm_box", re.compile(r"<\|begin_of_box\|>\s*(.*?)\s*<\|end_of_box\|>", _IS)),
    # the published list also has "**Final answer**: <|begin_of_box|>..." and
    # "**Final answer**: <start bbox>...", which can never win over the patterns before them
    ("final_answer_bold", re.compile(r"\*\*Final answer\*\*:\s*(.*)", _IS)),
    ("final_answer", re.compile(r"Final Answer:\s*(.*)", _IS)),
    ("final_answer_typo", re.compile(r"Final Anser:\s*(.*)", _IS)),
    ("bbox_tag", re.compile(r"<start bbox>\s*(.*?)\s*</start bbox>", _IS)),
)


def extract_official(reply: str | None) -> Extraction:
    """The official scorer's extraction: first matching pattern, else the short-last-line rule."""
    text = reply or ""
    for rule, pattern in _OFFICIAL_PATTERNS:
        match = pattern.search(text)
        if match:
            return Extraction(match.group(1).strip(), rule)
    last = text.strip().split("\n")[-1].strip()
    if len(last) <= OFFICIAL_LAST_LINE_MAX_CHARS and (
        last.isdigit() or last.upper() in CHOICE_LETTERS or "," in last
    ):
        return Extraction(last, "last_line")
    return Extraction("", "none")


# --- normalized -------------------------------------------------------------------------------

_THINK_BLOCK = re.compile(r"<think>.*?</think>", _IS)
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", _IS)
_ANSWER_TAG_UNCLOSED = re.compile(r"<answer>((?:(?!</answer>).)*)\Z", _IS)
_GLM_BOX = re.compile(r"<\|begin_of_box\|>(.*?)<\|end_of_box\|>", _IS)
_FINAL_ANSWER_LINE = re.compile(
    r"final[ \t]+answ?er[ \t]*(?:\*\*)?[ \t]*(?:is\b)?[ \t]*(?:\*\*)?[ \t]*[:：]?[ \t]*(.*)$",
    re.IGNORECASE | re.MULTILINE,
)
_ANSWER_LINE = re.compile(
    r"^[ \t>#*_-]*answer[ \t]*(?:\*\*)?[ \t]*[:：][ \t]*(.+)$", re.IGNORECASE | re.MULTILINE
)
_BOXED_START = re.compile(r"\\boxed\s*\{")
_LATEX_TEXT = re.compile(r"\\text(?:bf|rm|it)?\s*\{([^{}]*)\}")


def _last_nonempty(values: list[str]) -> str:
    for value in reversed(values):
        if value.strip():
            return value.strip()
    return ""


def _boxed_contents(text: str) -> list[str]:
    """The contents of every `\\boxed{...}`, braces balanced, in order."""
    out = []
    for match in _BOXED_START.finditer(text):
        depth, start = 1, match.end()
        for pos in range(start, len(text)):
            if text[pos] == "{":
                depth += 1
            elif text[pos] == "}":
                depth -= 1
                if depth == 0:
                    out.append(_LATEX_TEXT.sub(r"\1", text[start:pos]))
                    break
    return out


def _final_answer_lines(text: str) -> list[str]:
    """The rest of each "final answer" line; the next non-empty line when the rest is empty."""
    out = []
    for match in _FINAL_ANSWER_LINE.finditer(text):
        value = match.group(1).strip().strip("*").strip()
        if not value:
            following = text[match.end() :].lstrip("\n").split("\n")
            value = next((line.strip() for line in following if line.strip()), "")
        out.append(value)
    return out


def extract_normalized(reply: str | None) -> Extraction:
    """tvr's extraction: explicit final-answer forms (last one wins), then the short last line."""
    text = _THINK_BLOCK.sub("\n", reply or "")
    finders = (
        ("answer_tag", lambda t: _last_nonempty(_ANSWER_TAG.findall(t))),
        ("answer_tag_unclosed", lambda t: _last_nonempty(_ANSWER_TAG_UNCLOSED.findall(t))),
        ("boxed", lambda t: _last_nonempty(_boxed_contents(t))),
        ("glm_box", lambda t: _last_nonempty(_GLM_BOX.findall(t))),
        ("final_answer", lambda t: _last_nonempty(_final_answer_lines(t))),
        ("answer_line", lambda t: _last_nonempty(_ANSWER_LINE.findall(t))),
    )
    for rule, find in finders:
        value = find(text)
        if value:
            return Extraction(value, rule)
    last = _last_nonempty(text.split("\n"))
    if last and len(last) <= LAST_LINE_MAX_CHARS:
        return Extraction(last, "last_line")
    return Extraction("", "none")


def extract(reply: str | None, mode: str) -> Extraction:
    """The extraction of `mode` ("official" or "normalized")."""
    if mode == "official":
        return extract_official(reply)
    if mode == "normalized":
        return extract_normalized(reply)
    raise ValueError(f"unknown mode {mode!r}")


# --- readers (normalized mode) ----------------------------------------------------------------

_MARKUP = re.compile(r"\*\*|__|`|\$")
_SURROUNDING = " \t\r\n\"'“”‘’.,;:!?*_()[]{}<>"
_LEADING_CHOICE = re.compile(
    r"^(?i:the\s+)?(?i:(?:correct|final)\s+)?(?i:option|choice|answer)?\s*(?i:is\s*)?[:\-]?\s*"
    r"[(\[]?(?:([A-D])(?=([).:\],]|\s|$))|([a-d])(?=([).\]]|$)))"
)
_STANDALONE_LETTER = re.compile(r"(?<![A-Za-z0-9])([A-D])(?![A-Za-z0-9])")
_INTEGER = re.compile(r"(?<![\w.])\d+(?!\w|\.\d)")
_WORD = re.compile(r"[a-z]+")
_LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_OBJECT_LIST = re.compile(r"object list\s*:\s*(.*?)(?:\.\s*Do not|\.\s*$|$)", _IS)


def clean_answer(text: str) -> str:
    """Text without markdown emphasis, code ticks, dollar signs and surrounding punctuation."""
    return _MARKUP.sub("", text).strip(_SURROUNDING)


def read_choice(text: str) -> str | None:
    """The option letter of an answer, or None.

    Accepted: the letter alone in any case with brackets or punctuation ("b", "(C)", "D."); a
    leading upper-case letter followed by a separator ("B. the middle", "C) Yes", "A: ..."), or
    by a space when no other capital A-D stands alone in the text; a lower-case letter followed
    by ")" or "."; the same after "option", "choice" or "answer (is)"; else the only
    stand-alone capital A-D in the text. A word that merely starts with a letter ("Because
    ...") is not a letter.
    """
    raw = _MARKUP.sub("", text).strip()
    bare = raw.strip(_SURROUNDING)
    if len(bare) == 1 and bare.upper() in CHOICE_LETTERS:
        return bare.upper()
    letters = set(_STANDALONE_LETTER.findall(raw))
    match = _LEADING_CHOICE.match(raw.lstrip(" \t\"'“‘"))
    if match:
        letter = (match.group(1) or match.group(3)).upper()
        separator = match.group(2) if match.group(1) else match.group(4)
        # "B. ..." or "B) ..." is a choice; "A bowl ..." only when no other letter stands alone
        if separator.strip() or letters <= {letter}:
            return letter
        return None
    return letters.pop() if len(letters) == 1 else None


def read_count(text: str) -> int | None:
    """The whole number of an answer, or None.

    Accepted: digits ("2", "2."), a number word zero-twenty ("Two"), "none" (0), else the only
    number, in digits or words, in the text ("3 items", "There are two"); "2 or 3" is no answer.
    """
    bare = clean_answer(text).lower()
    if bare.isdigit():
        return int(bare)
    if bare in NUMBER_WORDS:
        return NUMBER_WORDS[bare]
    if bare == "none":
        return 0
    values = {int(n) for n in _INTEGER.findall(bare)}
    values |= {NUMBER_WORDS[w] for w in _WORD.findall(bare) if w in NUMBER_WORDS}
    return values.pop() if len(values) == 1 else None


def normalize_object_name(name: str) -> str:
    """Lower case, single spaces, no surrounding punctuation, no leading "the"."""
    name = _LIST_MARKER.sub("", name)
    name = " ".join(name.lower().split()).strip(_SURROUNDING + "-")
    name = name.removeprefix("and ").removeprefix("& ").strip()
    return name.removeprefix("the ").strip()


def objects_in_question(question: str) -> set[str]:
    """The normalized names of the question's "object list: a, b, c." (empty if it has none)."""
    match = _OBJECT_LIST.search(question)
    if not match:
        return set()
    return {n for part in match.group(1).split(",") if (n := normalize_object_name(part))}


def read_set(
    text: str, known_objects: set[str] | frozenset[str] = frozenset()
) -> frozenset[str] | None:
    """The set of object names of an answer (empty for "none"), or None if the text is empty.

    Case, brackets, quotes, list markers, surrounding punctuation and a leading "the" are
    ignored; items are separated by commas, semicolons or new lines, and also by "and" / "&"
    unless the piece is itself a known object name (e.g. "brown and beige bacon strip" when the
    question's object list or the label names it).
    """
    body = re.sub(r"[\[\]{}()\"“”]", "", _MARKUP.sub("", text))
    if not body.strip(_SURROUNDING):
        return None
    if body.strip(_SURROUNDING).lower() in NONE_ANSWERS:
        return frozenset()
    names: set[str] = set()
    for piece in re.split(r"[,;\n]", body):
        name = normalize_object_name(piece)
        if not name:
            continue
        if name in known_objects or not re.search(r"\s(?:and|&)\s", name):
            names.add(name)
            continue
        names.update(
            n for part in re.split(r"\s+(?:and|&)\s+", name) if (n := normalize_object_name(part))
        )
    if names == {"none"}:
        return frozenset()
    return frozenset(names)
