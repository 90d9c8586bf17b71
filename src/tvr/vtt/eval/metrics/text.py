"""The two text normalisations of the paper's evaluation: coco-caption's PTB tokenization and the
word split that a round trip through CLIP's BPE tokenizer makes.

- `ptb_tokenize`: pycocoevalcap's PTBTokenizer (Stanford PTBTokenizer 3.4.1 in Java, lower-cased,
  punctuation tokens removed), as every coco-caption metric and the NLTK BLEU of the paper get
  their words. One Java run for the whole list; lines stay aligned (an empty description stays
  empty).
- `clip_words`: the released evaluation encodes each text with CLIP's BPE tokenizer and decodes
  it again before CIDEr (after PTB) and BERTScore. That round trip cleans the text (ftfy, HTML
  entities, runs of white space), lower-cases it and puts one space between CLIP's pre-tokens
  (words, single digits, "'s"-style clitics, runs of punctuation); "don't stir-fry" becomes
  "don 't stir - fry". This function makes the same text without the BPE vocabulary.
"""

from __future__ import annotations

import contextlib
import functools
import html
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from tvr.core.errors import UserError
from tvr.core.extras import missing_extra
from tvr.core.processes import timed_subprocess

# characters that would end a line for the Java tokenizer but not for Python's "\n".join
_LINE_BREAKS = str.maketrans({c: " " for c in "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})


def ptb_tokenize(texts: Sequence[str]) -> list[str]:
    """PTB-tokenize each text as pycocoevalcap does (lower case, punctuation removed)."""
    if not texts:
        return []
    try:
        from pycocoevalcap.tokenizer import ptbtokenizer
    except ImportError as err:
        raise missing_extra(err, "the VTT metrics") from None
    ptbtokenizer.subprocess = timed_subprocess  # its Java call gets a time limit
    captions = {i: [{"caption": t.translate(_LINE_BREAKS)}] for i, t in enumerate(texts)}
    try:
        with _quiet_stderr():
            tokenized = ptbtokenizer.PTBTokenizer().tokenize(captions)
    except subprocess.TimeoutExpired as err:
        raise UserError(f"the PTB tokenizer (Java) gave no answer within {err.timeout:.0f} s") from None
    except FileNotFoundError as err:
        if "java" in str(err):
            raise UserError("the PTB tokenizer and METEOR need Java on the PATH (java not found)") from None
        raise
    if len(tokenized) != len(texts):
        raise UserError(f"the PTB tokenizer (Java) returned {len(tokenized)} lines for "
                        f"{len(texts)} texts; is Java working?")  # fmt: skip
    return [tokenized[i][0] for i in range(len(texts))]


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence the file descriptor 2 of this process (the Java tokenizer's token count line)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def clip_words(text: str) -> str:
    """The text as CLIP's tokenizer round trip (encode, decode) leaves it."""
    try:
        import ftfy
        import regex
    except ImportError as err:
        raise missing_extra(err, "the VTT metrics") from None
    text = html.unescape(html.unescape(ftfy.fix_text(text))).strip()
    text = regex.sub(r"\s+", " ", text).strip().lower()
    return " ".join(_clip_pattern().findall(text))


@functools.cache
def _clip_pattern() -> Any:
    """CLIP's pre-token pattern: clitics, runs of letters, single digits, other non-space runs."""
    import regex

    return regex.compile(
        r"'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+", regex.IGNORECASE
    )
