"""Fast readers for predictions files in the plain forms tvr and json.dumps write.

A predictions file is read line by line with full checks (`metrics.read_predictions`) unless
every line has one of the plain forms below and names a known row once; then one of these
readers gives the same table much faster. Each returns None for any other file, and the caller
falls back to the line-by-line parser, so errors, `--lenient` and odd but valid lines are
exactly as before.

- compact (what `tvr baseline`, `tvr predict` and orjson write):
      {"id":"ID","steps":[{"obj":D,"value":"NAME"},...]}        (View: "view":"V" after the id)
  read with numpy over the whole file: the quotes split every line into the id, the step
  fields and fixed text, the fixed text is compared byte for byte, the names with the 33 values.
- spaced (json.dumps' default, or compact with a space after some ':' and ','): two regex passes.
In both, an id is a string without escapes or control characters.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from tvr.trance.world import vocab
from tvr.trance.world.vocab import VIEWS

#: (row of each line, steps of each line, objects, values of all steps in line order)
Steps = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

_VALUE_WIDTH = max(len(v) for v in vocab.VALUES)
_VALUE_KEYS = np.array([v.encode() for v in vocab.VALUES], dtype=f"S{_VALUE_WIDTH}")
_VALUE_ORDER = np.argsort(_VALUE_KEYS)
_VIEW_CODE = np.full(256, -1, dtype=np.int64)
_VIEW_CODE[[ord(v) for v in VIEWS]] = np.arange(len(VIEWS))


def _empty() -> Steps:
    e = np.zeros(0, dtype=np.int64)
    return e, e, e, e


_PAD_BYTES = 64  # zero bytes after the data, so every window of up to 64 bytes fits


def _windows(data: bytes) -> np.ndarray:
    """(len(data), 64) uint8 view: row i is data[i:i+64], zero-padded; rows are not copied."""
    buf = np.frombuffer(data + bytes(_PAD_BYTES), dtype=np.uint8)
    return np.lib.stride_tricks.sliding_window_view(buf, _PAD_BYTES)[: len(data)]


def _fixed(win: np.ndarray, start: np.ndarray, length: np.ndarray, width: int) -> np.ndarray:
    """(n, width) uint8: data[start:start+length] of each row, zero-padded (width <= 64)."""
    out = win[start, :width].copy()
    out[np.arange(width) >= length[:, None]] = 0
    return out


def _matches(win: np.ndarray, pos: np.ndarray, text: bytes) -> bool:
    """Whether `text` stands at every position of `pos`."""
    if not len(pos):
        return True
    if pos.min() < 0 or pos.max() >= len(win):
        return False
    want = np.frombuffer(text, dtype=np.uint8)
    return bool((win[pos, : len(text)] == want).all())


def _id_bytes(ids: list[str]) -> np.ndarray | None:
    """(n, width) uint8 UTF-8 bytes of the ids, zero-padded; None if one holds a NUL or newline
    or is longer than 64 bytes."""
    joined = "\n".join(ids)
    if "\x00" in joined:
        return None
    data = joined.encode("utf-8") + b"\n"
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    if len(ends) != len(ids):
        return None
    starts = np.concatenate([[0], ends[:-1] + 1])
    length = ends - starts
    width = int(length.max(initial=1))
    if width > _PAD_BYTES:
        return None
    return _fixed(_windows(data), starts, length, width)


def _rows(ref: Any, ids: np.ndarray, views: np.ndarray | None) -> np.ndarray | None:
    """The reference row of each line's id (n, width) uint8 [and view], or None if one is
    unknown or given twice."""
    want = _id_bytes(ref.ids)
    if want is None:
        return None
    width = max(ids.shape[1], want.shape[1])
    keys = np.zeros((len(ids), width), dtype=np.uint8)
    keys[:, : ids.shape[1]] = ids
    want = np.pad(want, ((0, 0), (0, width - want.shape[1])))
    if views is not None:  # the view letter after the id
        letters = np.frombuffer("".join(VIEWS).encode(), dtype=np.uint8)
        keys = np.concatenate([keys, letters[views][:, None]], axis=1)
        want = np.concatenate([want, letters[np.asarray(ref.views)][:, None]], axis=1)
    as_str = f"S{keys.shape[1]}"
    k = np.ascontiguousarray(keys).view(as_str).ravel()
    w = np.ascontiguousarray(want).view(as_str).ravel()
    if len(k) == len(w) and (k == w).all():
        return np.arange(len(k), dtype=np.int64)
    if not len(w):
        return None
    order = np.argsort(w, kind="stable")
    ordered = w[order]
    if (ordered[1:] == ordered[:-1]).any():
        return None  # repeated reference keys (a view asked twice): the line parser
    pos = np.minimum(np.searchsorted(ordered, k), len(w) - 1)
    if not (ordered[pos] == k).all():
        return None
    rows = order[pos].astype(np.int64)
    if np.bincount(rows, minlength=len(w)).max() > 1:
        return None
    return rows


def _value_codes(names: np.ndarray) -> np.ndarray | None:
    """Value index of each (n, width) uint8 name, or None if one is not a value."""
    if names.shape[1] > _VALUE_WIDTH:
        return None
    padded = np.zeros((len(names), _VALUE_WIDTH), dtype=np.uint8)
    padded[:, : names.shape[1]] = names
    s = padded.view(f"S{_VALUE_WIDTH}").ravel()
    pos = np.minimum(np.searchsorted(_VALUE_KEYS[_VALUE_ORDER], s), len(_VALUE_KEYS) - 1)
    found = _VALUE_KEYS[_VALUE_ORDER][pos] == s
    return _VALUE_ORDER[pos].astype(np.int64) if found.all() else None


def compact_steps(data: bytes, ref: Any, max_steps: int | None) -> Steps | None:
    """The steps of a file of compact lines (module doc), or None; `max_steps` None: any number."""
    if not data:
        return _empty()
    if not data.endswith(b"\n"):
        data += b"\n"
    win = _windows(data)
    buf = win[:, 0]
    if ((buf < 32) & (buf != 10)).any() or (buf == 92).any():
        return None  # control characters or escapes: the line parser
    ends = np.flatnonzero(buf == 10)
    starts = np.concatenate([[0], ends[:-1] + 1])
    if (ends == starts).any():
        return None  # blank lines
    view = ref.setting == "view"
    quotes = np.flatnonzero(buf == 34)
    first_q = np.searchsorted(quotes, starts)
    head = 10 if view else 6  # quotes before the first step
    extra = np.searchsorted(quotes, ends) - first_q - head
    if (extra < 0).any() or (extra % 6).any():
        return None
    counts = extra // 6
    if max_steps is not None and counts.max() > max_steps:
        return None
    # {"id":"ID"  [,"view":"V"]  ,"steps":[
    if not (buf[starts] == ord("{")).all() or not _matches(win, starts + 1, b'"id":"'):
        return None
    id_start = starts + 7
    id_end = quotes[first_q + 3]
    if (id_end <= id_start).any():
        return None
    after = id_end
    if view:
        if not _matches(win, id_end, b'","view":"'):
            return None
        after = quotes[first_q + 7]
        if not (after == id_end + 11).all():
            return None
        line_view = _VIEW_CODE[buf[id_end + 10]]
        if (line_view < 0).any():
            return None
    if not _matches(win, after, b'","steps":['):
        return None
    body = after + 11
    # the steps: {"obj":D,"value":"NAME"} joined by ',', then ]} and the end of the line
    n_tok = int(counts.sum())
    line_of = np.repeat(np.arange(len(starts)), counts)
    t_in = np.arange(n_tok) - np.repeat(np.cumsum(counts) - counts, counts)
    tq = first_q[line_of] + head + 6 * t_in  # index of each step's first quote
    q = quotes[tq]
    first = t_in == 0
    if not (q[first] == body[line_of[first]] + 1).all() or not (buf[q[first] - 1] == 123).all():
        return None
    prev = quotes[tq[~first] - 1]
    if not _matches(win, prev, b'"},{"') or not (q[~first] == prev + 4).all():
        return None
    if not _matches(win, q, b'"obj":') or not _matches(win, q + 7, b',"value":"'):
        return None
    digit = buf[q + 6].astype(np.int64) - ord("0")
    if ((digit < 0) | (digit >= vocab.NUM_OBJECTS)).any():
        return None
    name_start = q + 17
    name_len = quotes[tq + 5] - name_start
    if n_tok and (name_len.min() < 1 or name_len.max() > _VALUE_WIDTH):
        return None
    none = counts == 0
    if not _matches(win, body[none], b"]}") or not (ends[none] == body[none] + 2).all():
        return None
    last = quotes[first_q[~none] + head + 6 * counts[~none] - 1]
    if not _matches(win, last, b'"}]}') or not (ends[~none] == last + 4).all():
        return None
    values = _value_codes(_fixed(win, name_start, name_len, int(name_len.max(initial=1))))
    if values is None:
        return None
    id_len = id_end - id_start
    if id_len.max() > _PAD_BYTES:
        return None
    ids = _fixed(win, id_start, id_len, int(id_len.max()))
    rows = _rows(ref, ids, line_view if view else None)
    if rows is None:
        return None
    return rows, counts.astype(np.int64), digit, values


_STEP_TOKEN = rb'\{"obj": ?[0-9], ?"value": ?"[a-z0-9.\-]+"\}'
_LINE = re.compile(
    rb'^\{"id": ?"([^"\\\x00-\x1f]+)", ?(?:"view": ?"([^"\\\x00-\x1f]*)", ?)?"steps": ?\[('
    + rb"(?:" + _STEP_TOKEN + rb"(?:, ?" + _STEP_TOKEN + rb")*)?"
    + rb")\]\}$",
    re.MULTILINE,
)  # fmt: skip
_STEP = re.compile(rb'\{"obj": ?([0-9]), ?"value": ?"([a-z0-9.\-]+)"\}')


def spaced_steps(data: bytes, ref: Any, max_steps: int | None) -> Steps | None:
    """The steps of a file of spaced or compact lines (module doc), or None; `max_steps` None:
    any number."""
    lines = _LINE.findall(data)
    n_lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    if len(lines) != n_lines:
        return None
    if not lines:
        return _empty()
    try:
        ids = b"\n".join([m[0] for m in lines]).decode("utf-8").split("\n")
        if ref.setting == "view":
            names = b"\n".join([m[1] for m in lines]).decode("utf-8").split("\n")
            view_of = {v: i for i, v in enumerate(VIEWS)}
            views = [view_of[v] for v in names]
        else:
            views = [-1] * len(ids)
    except (UnicodeDecodeError, KeyError):
        return None
    get = ref.index.get
    rows = [get(key) for key in zip(ids, views, strict=True)]
    if None in rows or len(set(rows)) != len(rows):
        return None
    steps = [m[2] for m in lines]
    counts = np.array([s.count(b"{") for s in steps], dtype=np.int64)
    if max_steps is not None and counts.max() > max_steps:
        return None
    tokens = _STEP.findall(b",".join(steps))
    code = {}
    for tok in set(tokens):
        value = vocab.VALUE_INDEX.get(tok[1].decode("ascii"))
        if value is None:
            return None
        code[tok] = int(tok[0]) * vocab.NUM_VALUES + value
    codes = np.fromiter(map(code.__getitem__, tokens), dtype=np.int64, count=len(tokens))
    return (
        np.array(rows, dtype=np.int64),
        counts,
        codes // vocab.NUM_VALUES,
        codes % vocab.NUM_VALUES,
    )


def plain_steps(data: bytes, ref: Any, max_steps: int | None) -> Steps | None:
    """The steps of a predictions file by the first reader that takes it, or None. A line with
    more than `max_steps` steps (None: no limit) sends the file to the line parser."""
    got = compact_steps(data, ref, max_steps)
    return got if got is not None else spaced_steps(data, ref, max_steps)
