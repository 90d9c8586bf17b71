"""Reading a model's VTT reply: its transformation descriptions (and topic), from JSON or lines.

What is read, in order (the first that gives descriptions wins):

1. JSON: the last object with a `"transformations"` list (its `"topic"` too), looked for in
   the last fenced code block, else in the whole reply (`<think>` blocks left out); a bare JSON
   list of strings counts too. Trailing commas are forgiven.
2. Numbered lines, `1. put steak on grill` (also `1)`, `1:`, `- 1.`, `**1.**`,
   `Transformation 1:`, `No.1:`): each description goes to the place its number names; numbers
   that never appear leave an empty description there.

A description is stripped of white space, surrounding quotes and Markdown emphasis. A reply with
neither is unreadable: all its descriptions are missing. Descriptions are kept as written, as
many as there are; `tvr vtt evaluate` scores the first N, counts the missing ones (an empty
string, or a list shorter than N) and ignores the rest.

A multi-turn conversation (`parse_turn_replies`) has the event description as its first reply
and one reply per transformation after it: each turn's first non-empty line is its description.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_NUMBER = 64  # a numbered line beyond this is not a transformation's number

_THINK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[\]}])")
_NUMBERED = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?(?:(?:transformation|step|no\.?)\s*)?(\d{1,3})"
    r"\s*(?:\*\*|__)?\s*[.):]\s*(?:\*\*|__)?\s*(.*?)\s*$",
    re.IGNORECASE,
)
_PAIR_PREFIX = re.compile(
    r"^(?:(?:the\s+)?no\.?\s*\d+\s+transformation|transformation(?:\s+\d+)?|answer)"
    r"(?:\s+between\s+no\.?\s*\d+\s+and\s+no\.?\s*\d+\s+states)?\s*[:.-]\s*",
    re.IGNORECASE,
)
_QUOTES = "\"'`“”‘’"


@dataclass(frozen=True)
class VttReply:
    """The descriptions read from a reply, in order ("" where one is missing), the topic if
    the reply gave one, and how they were read: "json", "numbered" or "turns"."""

    transformations: tuple[str, ...]
    topic: str | None
    form: str

    def missing(self, n: int) -> int:
        """How many of the first `n` descriptions are missing (empty, or not given)."""
        given = self.transformations[:n]
        return sum(not t.strip() for t in given) + max(0, n - len(given))

    def extra(self, n: int) -> int:
        """How many descriptions come after the first `n` (ignored by the evaluation)."""
        return max(0, len(self.transformations) - n)


def clean(text: Any) -> str:
    """A description without surrounding white space, quotes, Markdown emphasis or a final
    full stop or comma; a non-string is "" (a number becomes its digits)."""
    if isinstance(text, bool) or text is None:
        return ""
    if isinstance(text, int | float):
        text = str(text)
    if isinstance(text, dict):  # {"transformation": "..."}: its one string value
        strings = [v for v in text.values() if isinstance(v, str)]
        text = strings[0] if len(strings) == 1 else ""
    if not isinstance(text, str):
        return ""
    text = text.strip()
    for _ in range(3):
        text = text.strip().strip("*_").strip()
        if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
            text = text[1:-1]
    return text.strip().rstrip(".,;").strip()


def _json_values(text: str) -> list[Any]:
    """The JSON objects and arrays that start at a `{` or `[` of `text` and parse, in order,
    outermost first (trailing commas forgiven)."""
    decoder = json.JSONDecoder()
    out: list[Any] = []
    pos = 0
    while True:
        starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
        if not starts:
            return out
        start = min(starts)
        value, end = _decode_at(decoder, text, start)
        if end is None:
            pos = start + 1
            continue
        out.append(value)
        pos = end


def _decode_at(decoder: json.JSONDecoder, text: str, start: int) -> tuple[Any, int | None]:
    try:
        return decoder.raw_decode(text, start)
    except json.JSONDecodeError:
        pass
    end = _balanced_end(text, start)  # forgive trailing commas inside the balanced span
    if end is not None:
        try:
            return json.loads(_TRAILING_COMMA.sub(r"\1", text[start:end])), end
        except json.JSONDecodeError:
            pass
    return None, None


def _balanced_end(text: str, start: int) -> int | None:
    """One past the bracket that closes the one at `start` (strings skipped), if any."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        c = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _from_json(region: str) -> VttReply | None:
    found = None
    for value in _json_values(region):
        if isinstance(value, dict) and isinstance(value.get("transformations"), list):
            topic = value.get("topic")
            found = VttReply(
                tuple(clean(t) for t in value["transformations"]),
                clean(topic) or None if isinstance(topic, str) else None,
                "json",
            )
        elif isinstance(value, list) and value and all(isinstance(t, str) for t in value):
            found = VttReply(tuple(clean(t) for t in value), None, "json")
    return found


def _from_numbered_lines(text: str) -> VttReply | None:
    placed: dict[int, str] = {}
    for line in text.splitlines():
        match = _NUMBERED.match(line)
        if not match:
            continue
        number, description = int(match.group(1)), clean(match.group(2))
        if 1 <= number <= MAX_NUMBER and number not in placed and description:
            placed[number] = description
    if not placed:
        return None
    return VttReply(tuple(placed.get(k, "") for k in range(1, max(placed) + 1)), None, "numbered")


def parse_vtt_reply(reply: str | None) -> VttReply | None:
    """The descriptions of one reply (see the module's rules), or None when it has none."""
    text = _THINK.sub("", reply or "")
    fences = [f for f in _FENCE.findall(text) if f.strip()]
    for region in ([fences[-1]] if fences else []) + [text]:
        found = _from_json(region)
        if found is not None:
            return found
    return _from_numbered_lines(text)


def turn_description(reply: str | None) -> str:
    """The description of one step-by-step turn: its first non-empty line, without a leading
    "No.2 transformation:" or "Transformation:" and without quotes ("" if there is none)."""
    text = _THINK.sub("", reply or "")
    for line in text.splitlines():
        line = clean(line)
        if line:
            return clean(_PAIR_PREFIX.sub("", line, count=1))
    return ""


def parse_turn_replies(replies: list[str] | None, n: int) -> VttReply | None:
    """A conversation's descriptions: the first reply describes the event (kept as the topic),
    the next `n` are the transformations; a turn that is missing is an empty description."""
    if not replies:
        return None
    event = clean(_THINK.sub("", replies[0])) or None
    turns = [turn_description(r) for r in replies[1 : n + 1]]
    turns += [""] * (n - len(turns))
    return VttReply(tuple(turns), event, "turns")
