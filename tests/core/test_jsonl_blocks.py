"""`iter_jsonl` reads in blocks and checks the line rules once per block; what it yields and the
errors it raises or collects must be exactly those of `parse_json` applied line by line, wherever
the block edges fall: lines across edges, a line longer than a block, a byte-order mark at the
start or in the middle, a NUL, a deep line, blank lines, a missing last newline."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tvr.core import jsonl
from tvr.core.errors import InputError
from tvr.core.jsonl import BOM, MAX_DEPTH, iter_jsonl, parse_json

LINES = [
    b'{"a": 1}',
    b'[1, 2, {"b": "x"}]',
    b"",
    b"  \t",
    b"\r",
    b'{"a": 1',  # ends too early
    b'{"a": NaN}',
    b'{"a": "\x00"}',
    BOM + b'{"a": 2}',
    b'"\xef\xbb\xbf inside a string"',
    b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1),
    b"[" * MAX_DEPTH + b"]" * MAX_DEPTH,
    b'{"s": "' + b"x" * 300 + b'"}',
    b'"\xff"',  # not UTF-8
    b"12 13",
]


def _line_by_line(raw: bytes, path) -> tuple[list[tuple[int, object]], list[str]]:
    """What the reader must give: each line by `parse_json` (the first line's mark removed)."""
    got, errors = [], []
    for lineno, line in enumerate(raw.split(b"\n"), start=1):
        if lineno == 1 and line.startswith(BOM):
            line = line[len(BOM):]
        if not line.strip():
            continue
        try:
            got.append((lineno, parse_json(line, path, lineno)))
        except InputError as err:
            errors.append(str(err))
    return got, errors


@settings(max_examples=300, deadline=None)
@given(
    picks=st.lists(st.sampled_from(range(len(LINES))), max_size=14),
    last_newline=st.booleans(),
    block=st.integers(1, 400),
)
def test_blocks_read_as_lines_do(tmp_path_factory, picks, last_newline, block):
    raw = b"\n".join(LINES[i] for i in picks) + (b"\n" if last_newline and picks else b"")
    path = tmp_path_factory.mktemp("b") / "f.jsonl"
    path.write_bytes(raw)
    want, want_errors = _line_by_line(raw, path)
    old = jsonl.BLOCK
    jsonl.BLOCK = block
    try:
        errors: list[InputError] = []
        digest = hashlib.sha256()
        got = list(iter_jsonl(path, errors, digest=digest))
        assert got == want
        assert [str(e) for e in errors] == want_errors
        assert digest.hexdigest() == hashlib.sha256(raw).hexdigest()
        if want_errors:  # strict: the first of them is raised
            with pytest.raises(InputError) as err:
                list(iter_jsonl(path))
            assert str(err.value) == want_errors[0]
    finally:
        jsonl.BLOCK = old


def test_a_line_of_many_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl, "BLOCK", 7)
    rows = [{"k": "v" * 50, "n": list(range(20))}, {"x": 1}]
    path = tmp_path / "f.jsonl"
    path.write_bytes(BOM + b"\n".join(json.dumps(r).encode() for r in rows))
    assert list(iter_jsonl(path)) == [(1, rows[0]), (2, rows[1])]


def test_a_string_over_the_limit_in_a_plain_block(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a": 1}\n{"s": "' + b"x" * (jsonl.MAX_STRING + 1) + b'"}\n')
    with pytest.raises(InputError, match=r"f\.jsonl, line 2: a value of 100,001 characters"):
        list(iter_jsonl(path))
    errors: list[InputError] = []
    path.write_bytes(path.read_bytes() + b"null\n")
    assert list(iter_jsonl(path, errors)) == [(1, {"a": 1}), (3, None)]
    assert [e.line for e in errors] == [2]
