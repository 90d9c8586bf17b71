"""What a question-only model sees of a CLEVRER question: its template family, its form, its options' kinds.

Used to measure text bias on any question file (tvr's or the release's), where the generator's
own family names (`question_family`) may be absent: the template is read off the words.
"""

from __future__ import annotations

from tvr.clevrer.vocab import COLORS, MATERIALS, SHAPES

_MASK: dict[str, str] = {
    **dict.fromkeys(COLORS, "<C>"),
    **dict.fromkeys(MATERIALS, "<M>"),
    **dict.fromkeys(SHAPES, "<S>"),
    **{f"{s}s": "<Ss>" for s in SHAPES},
}


def text_family(question: str) -> str:
    """The question's template as its words show it: colours, materials and shapes masked, every
    reference to one object ("the red metal cube", "the sphere") one <OBJ>.

    "How many metal objects enter the scene?" -> "How many <M> objects enter the scene";
    "Does the red cube collide with the sphere?" -> "Does <OBJ> collide with <OBJ>".
    """
    tokens = []
    for word in question.split():
        bare = word.rstrip("?,.")
        stem = bare[:-2] if bare.endswith("'s") else bare
        tokens.append(_MASK[stem] + bare[len(stem):] if stem in _MASK else bare)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if tokens[i] == "the":
            j = i + 1
            while j < len(tokens) and tokens[j] in ("<C>", "<M>"):
                j += 1
            if j < len(tokens) and tokens[j].split("'")[0] in ("<S>", "object"):
                out.append("<OBJ>" + tokens[j][len(tokens[j].split("'")[0]):])
                i = j + 1
                continue
        out.append(tokens[i])
        i += 1
    return " ".join(out)


def negated(question: str) -> bool:
    """Whether a multiple-choice question asks the negated form ("not responsible", "will not
    happen")."""
    return " not " in f" {question} "


def option_kind(choice: str) -> str:
    """What kind of event or object an option names: "presence", "entering", "exiting" or
    "collision"."""
    if choice.startswith("The presence of"):
        return "presence"
    if "entering" in choice:
        return "entering"
    if "exiting" in choice:
        return "exiting"
    return "collision"
