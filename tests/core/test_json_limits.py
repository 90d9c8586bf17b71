"""The depth and string-length limits of `tvr.core.jsonl.parse_json` are judged from the bytes
first (`_within_limits`); that judgement may only send a text to the exact walk, never let a text
past that the walk refuses. Brackets and quotes inside strings, escapes, long strings at the
block edges and deep nesting of every kind are tried against the walk."""

from __future__ import annotations

import json
import random

import pytest

from tvr.core.errors import InputError
from tvr.core.jsonl import MAX_DEPTH, MAX_STRING, _check_shape, _within_limits, parse_json

CHARS = ["[", "]", "{", "}", '"', "\\", "a", "\n", "é", ":", ","]


def _walk_ok(value) -> bool:
    try:
        _check_shape(value, "f", 1)
    except InputError:
        return False
    return True


def _nested(depth: int, kind: str, rng: random.Random):
    value = 1
    for i in range(depth):
        key = rng.choice(['k]\\"[', "", "a{", '"'])
        value = [value] if kind == "list" or (kind == "mixed" and i % 2) else {key: value}
    return value


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 6)))


def _random(rng: random.Random, depth: int = 0):
    r = rng.random()
    if depth > 70 or r < 0.3:
        return _text(rng)
    if r < 0.45:
        return rng.random()
    if r < 0.75:
        return [_random(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {_text(rng): _random(rng, depth + 1) for _ in range(rng.randint(0, 3))}


@pytest.mark.parametrize("kind", ["list", "dict", "mixed"])
def test_deep_nesting_is_never_let_past(kind):
    rng = random.Random(kind)
    for depth in range(MAX_DEPTH - 6, MAX_DEPTH + 6):
        for wrap in (False, True):
            value = _nested(depth, kind, rng)
            if wrap:
                value = [_random(rng), value, _random(rng)]
            raw = json.dumps(value, ensure_ascii=rng.random() < 0.5).encode()
            assert not _within_limits(raw) or _walk_ok(value), raw[:80]
            if _walk_ok(value):
                parse_json(raw, "f", 1)
            else:
                with pytest.raises(InputError, match=f"nested deeper than {MAX_DEPTH} levels"):
                    parse_json(raw, "f", 1)


def test_random_values_with_brackets_and_quotes_in_strings():
    rng = random.Random(7)
    passed = 0
    for _ in range(2000):
        value = _random(rng)
        raw = json.dumps(value).encode()
        fast = _within_limits(raw)
        assert not fast or _walk_ok(value), raw[:80]
        passed += fast
    assert passed > 1900  # the walk is the exception


@pytest.mark.parametrize("text", ["a", "\\", '"', "é", "€", 'a"'])
@pytest.mark.parametrize("before", [0, 7, MAX_STRING // 2 - 1, MAX_STRING // 2 + 1])
def test_long_strings_at_the_edges(text, before):
    for length in (MAX_STRING - 1, MAX_STRING, MAX_STRING + 1):
        s = (text * length)[:length]
        value = ["x" * before, {"k": [s]}]
        for ascii_only in (True, False):
            raw = json.dumps(value, ensure_ascii=ascii_only).encode()
            assert not _within_limits(raw) or _walk_ok(value)
            if length > MAX_STRING:
                with pytest.raises(InputError, match=f"a value of {length:,} characters"):
                    parse_json(raw, "f", 1)
            else:
                assert parse_json(raw, "f", 1) == value
