"""JSON lines, JSON and text files written atomically; JSON and JSON lines read one way, with errors naming file and line."""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from tvr.core.errors import InputError, UserError
from tvr.core.gc_pause import without_gc
from tvr.core.output_lock import lock_output


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> int:
    """Write records as JSON lines atomically (a temporary file renamed into place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    n = 0
    try:
        with os.fdopen(fd, "wb") as f:
            for r in records:
                f.write(orjson.dumps(r, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n")
                n += 1
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


def write_json(path: str | Path, data: Any) -> None:
    """Write one JSON document atomically, indented for people to read."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _file_mode() -> int:
    """The mode a new file gets from this process's umask (mkstemp makes files private)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


#: the mode of files written atomically, as `open` would make them
FILE_MODE = _file_mode()

#: nesting deeper than this is refused (real files nest 3-8 levels; deeper input would only
#: make code that walks it recurse past Python's limit)
MAX_DEPTH = 64
#: a longer string is refused: no field of any tvr input comes near it (a VLM reply, the
#: longest, is a few thousand characters), and one of 20 MB stalled METEOR
MAX_STRING = 100_000
BOM = b"\xef\xbb\xbf"
_BLANK = frozenset(b" \t\r\n\f\v")


def input_file(path: str | Path) -> Path:
    """`path` as an input file: a UserError if it is missing or a folder."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{path}: is a folder; a file is expected here")
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    return path


def parse_json(raw: bytes, path: str | Path, line: int | None = None) -> Any:
    """Parse one JSON text (a JSONL line or a whole document) the one way every reader does:
    UTF-8 only, no NUL, a byte-order mark only at the start of a file (strip it first), no NaN
    or Infinity, nesting at most `MAX_DEPTH`, strings at most `MAX_STRING`; anything else is an
    InputError naming the file and line (and the column where the parser stopped)."""
    if b"\x00" in raw:
        raise InputError(path, line, None, "holds a NUL byte (a binary file?)")
    if raw.startswith(BOM):
        raise InputError(path, line, None, "a byte-order mark (U+FEFF) in the middle of the file")
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        where, why = _why_not_json(raw, err)
        raise InputError(path, line if line is not None else where, None, why) from None
    # the exact walk only where the bytes say a rule could be broken (a long text, many brackets)
    could_break = len(raw) > MAX_STRING or len(raw.translate(None, _NOT_OPENING)) > MAX_DEPTH
    if could_break and not _within_limits(raw):
        _check_shape(value, path, line)
    return value


#: every byte but the opening brackets (deleted by `bytes.translate`: faster than two counts)
_NOT_OPENING = bytes(b for b in range(256) if b not in b"[{")
#: every byte but the four brackets and the quote (deleted by `bytes.translate`)
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')


def _within_limits(raw: bytes) -> bool:
    """Whether valid JSON text `raw` surely nests at most MAX_DEPTH levels and holds no string
    longer than MAX_STRING, judged from its bytes at C speed; False means "could break a rule"
    (then the exact walk decides, with its message). Escaped quotes and backslashes are masked
    (same length), so the quotes left delimit the strings and a string's byte length bounds its
    characters. Of the brackets and quotes alone, empty pairs of quotes are dropped: if no quote
    is left, no string held a bracket and what is left is the nesting."""
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"__").replace(b'\\"', b"__")
    if len(raw) > MAX_STRING and not _no_long_string(raw):
        return False
    structure = raw.translate(None, _NOT_STRUCTURE)
    brackets = structure.replace(b'""', b"")
    if b'"' in brackets:  # a string holds a bracket: drop the strings one by one
        brackets = b"".join(structure.split(b'"')[::2])
    # each pass strips the innermost pairs, at most two levels ("{[]}" goes in one pass)
    for _ in range(MAX_DEPTH // 2):
        if not brackets:
            return True
        brackets = brackets.replace(b"[]", b"").replace(b"{}", b"")
    return not brackets


def _no_long_string(raw: bytes) -> bool:
    """Whether (masked) `raw` surely holds no string of more than MAX_STRING bytes: such a
    string would cover a whole aligned block of MAX_STRING // 2 bytes with no quote in it."""
    block = MAX_STRING // 2
    return all(raw.find(b'"', start, start + block) >= 0
               for start in range(0, len(raw) - block + 1, block))  # fmt: skip


def _why_not_json(raw: bytes, err: orjson.JSONDecodeError) -> tuple[int, str]:
    """(line, reason) of a text orjson refused; the line counts from the text's first."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return err.lineno, f"not valid UTF-8 (byte 0x{raw[bad.start]:02x} at byte {bad.start + 1})"
    if re.search(rb"(?<![\w\"])-?(NaN|Infinity)(?![\w\"])", raw):
        return err.lineno, "NaN and Infinity are not JSON (write null or a number)"
    if "recursion" in str(err).lower():
        return err.lineno, f"nested deeper than {MAX_DEPTH} levels"
    # a text that ends too early fails after its last newline: name the end of its last line
    pos = min(err.pos, len(text.rstrip(" \t\r\n")))
    start = text.rfind("\n", 0, pos) + 1
    return text.count("\n", 0, pos) + 1, f"not valid JSON ({err.msg}, column {pos - start + 1})"


def _check_shape(value: Any, path: str | Path, line: int | None) -> None:
    """InputError if `value` nests lists or objects deeper than MAX_DEPTH or holds a string
    longer than MAX_STRING (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if len(item) > MAX_STRING:
                raise InputError(path, line, None, f"a value of {len(item):,} characters (at "
                                 f"most {MAX_STRING:,} are read)")  # fmt: skip
            continue
        if isinstance(item, dict):
            children = [*item.keys(), *item.values()]
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            raise InputError(path, line, None, f"nested deeper than {MAX_DEPTH} levels")
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list, str)))


@without_gc
def read_json(path: str | Path) -> Any:
    """The JSON document in file `path`, read as `parse_json` reads (a leading byte-order mark
    is skipped); an empty file is an InputError."""
    path = input_file(path)
    raw = path.read_bytes()
    if raw.startswith(BOM):
        raw = raw[len(BOM):]
    if not raw.strip():
        raise InputError(path, None, None, "the file is empty")
    return parse_json(raw, path)


@contextmanager
def skip_if_lenient(problems: list[InputError] | None) -> Iterator[None]:
    """Around one record's checks: an InputError is raised (strict, `problems` None), or added
    to `problems` and the record skipped (lenient: the rest of the block does not run)."""
    try:
        yield
    except InputError as err:
        if problems is None:
            raise
        problems.append(err)


def iter_jsonl(
    path: str | Path, errors: list[InputError] | None = None, digest: Any = None
) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON) for each non-empty line, read as `parse_json` reads (a
    byte-order mark is skipped at the start of the file only); a bad line raises InputError,
    or with an `errors` list (a lenient reader) is added to it and skipped. `digest` (a hashlib
    object), if given, is fed every byte of the file as it is read.

    The file is read in blocks, and the rules `parse_json` checks line by line are checked once
    per block where a block cannot break them (no NUL, no byte-order mark, no line with more
    than MAX_DEPTH opening brackets); only a block that could is parsed by `parse_json` line by
    line. So a typical file costs little more than `orjson.loads` of each line."""
    path = input_file(path)
    lineno = 0
    with path.open("rb") as f:
        for lines, plain in _line_blocks(f, digest):
            parse = _parse_plain if plain else _parse_each
            yield from parse(lines, lineno, path, errors)
            lineno += len(lines)


#: the size of the blocks `iter_jsonl` reads
BLOCK = 1 << 18  # 256 KB: a block and its lines stay in the cache (4 MB blocks cost 15% more)


def _line_blocks(f: Any, digest: Any) -> Iterator[tuple[list[bytes], bool]]:
    """The lines of binary file `f` (without their newlines; the byte-order mark at its start
    removed) in blocks of consecutive lines, each with whether none of its lines could break
    the NUL, byte-order-mark or depth rules (judged from the block read, not line by line). A
    line that spans two reads comes alone, not plain."""
    carry: list[bytes] = []  # the start of a line that goes on in the next read
    size = max(BLOCK, len(BOM))  # the first read holds the whole mark
    first = True
    while chunk := f.read(size):
        if digest is not None:
            digest.update(chunk)
        if first:
            first = False
            if chunk.startswith(BOM):
                chunk = chunk[len(BOM):]
        lines = chunk.split(b"\n")
        if len(lines) == 1:  # a line longer than a read: keep reading it
            carry.append(chunk)
            continue
        tail = lines.pop()
        if carry:
            carry.append(lines[0])
            yield [b"".join(carry)], False
            del lines[0]
        carry = [tail] if tail else []
        if lines:
            yield lines, _block_is_plain(chunk)
    if carry:
        yield [b"".join(carry)], False


#: every byte but the opening brackets and the newline (deleted by `bytes.translate`)
_NOT_OPENING_NL = bytes(b for b in range(256) if b not in b"[{\n")


def _block_is_plain(block: bytes) -> bool:
    """Whether no line of `block` could break the NUL, byte-order-mark or depth rules."""
    if b"\x00" in block or (b"\xef" in block and BOM in block):  # one byte is found faster
        return False
    return max(map(len, block.translate(None, _NOT_OPENING_NL).split(b"\n"))) <= MAX_DEPTH


def _parse_plain(
    lines: list[bytes], lineno: int, path: Path, errors: list[InputError] | None
) -> Iterator[tuple[int, Any]]:
    """The lines of a plain block (`_block_is_plain`), numbered from lineno + 1."""
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    for line in lines:
        lineno += 1
        try:
            value = loads(line)
        except decode_error:  # a blank line, or the error: parse_json names it
            if not line.strip():
                continue
            value = _checked(parse_json, errors, line, path, lineno)
        if value is _SKIP:
            continue
        long = len(line) > MAX_STRING and not _within_limits(line)
        if long and _checked(_check_shape, errors, value, path, lineno) is _SKIP:
            continue
        yield lineno, value


def _parse_each(
    lines: list[bytes], lineno: int, path: Path, errors: list[InputError] | None
) -> Iterator[tuple[int, Any]]:
    """The lines of a block that may break a rule, each checked by `parse_json`."""
    for line in lines:
        lineno += 1
        if (not line or line[0] in _BLANK) and not line.strip():  # strip copies the line
            continue
        value = _checked(parse_json, errors, line, path, lineno)
        if value is not _SKIP:
            yield lineno, value


#: what `_checked` gives for a line a lenient reader skips
_SKIP: Any = object()


def _checked(check: Any, errors: list[InputError] | None, *args: Any) -> Any:
    """check(*args), its InputError raised (strict: `errors` None) or added to `errors` and
    `_SKIP` returned. Not skip_if_lenient: a context manager per line costs a tenth of the
    parse."""
    try:
        return check(*args)
    except InputError as err:
        if errors is None:
            raise
        errors.append(err)
        return _SKIP


def write_text(path: Path, text: str) -> None:
    """Write a text file atomically (temporary file, then os.replace)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def prepare_output_folder(path: str | Path, option: str = "--out") -> Path:
    """Create output folder `path` (and its parents), check that files can be written in it and
    take its lock (`tvr.core.output_lock`: one writer per output); a UserError naming `option`
    and the path if not (a file in the way, a read-only mount, another run writing there)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UserError(f"{option} {path}: cannot create the folder (a file of that name exists)")
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-probe.", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise UserError(f"{option} {path}: {describe_os_error(err, path)}") from None
    lock_output(path)
    return path


def check_output_folder(path: str | Path, option: str = "--out") -> Path:
    """Check, without creating anything, that output folder `path` could be made and written:
    a UserError naming `option` if a file is in the way or the nearest existing folder above it
    is not writable. Commands check early and create the folder only once their inputs have
    been read (`prepare_output_folder`), so bad input leaves no empty folder behind."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UserError(f"{option} {path}: cannot create the folder (a file of that name exists)")
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise UserError(f"{option} {path}: cannot create the folder (a part of the path is a file)")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UserError(f"{option} {path}: cannot write in {probe} (Permission denied)")
    return path


def describe_os_error(err: OSError, path: str | Path | None = None) -> str:
    """Why writing at `path` failed, in a few words: 'cannot create the folder (Read-only file
    system)', 'cannot write /a/b (Permission denied)', 'a/b is a file, not a folder'."""
    reason = err.strerror or str(err)
    where = err.filename
    if where is not None and Path(where) != Path(path or ""):
        if err.errno == errno.EEXIST or err.errno == errno.ENOTDIR:
            return f"{where} is a file, not a folder"
        return f"cannot write {where} ({reason})"
    if err.errno == errno.EEXIST:
        return "cannot create the folder (a file of that name exists)"
    if err.errno == errno.ENOTDIR:
        return "cannot create the folder (a part of the path is a file)"
    return f"cannot create the folder ({reason})"


def write_file_bytes(path: Path, data: bytes) -> None:
    """Write a binary file atomically (temporary file in the same folder, then os.replace),
    readable by all like a normal file (mkstemp would leave it private)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
