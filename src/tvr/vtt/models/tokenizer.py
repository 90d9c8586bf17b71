"""CLIP's BPE tokenizer (open_clip's, its vocabulary shipped in the package) for the text decoders.

A description becomes `[SOT] bpe ids [EOT]`, at most `max_tokens` ids in all (the released
configuration's 24, start and end included; a longer description is cut and still ends with EOT).
Decoding drops the special ids and gives CLIP's cleaned, lower-cased words with one space between
pre-tokens ("put steak on grill ."), the text the released code scores for its own models.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

#: CLIP's vocabulary size (49,152 BPE merges and bytes, plus <start_of_text> and <end_of_text>)
VOCAB_SIZE = 49408
SOT = 49406
EOT = 49407


@functools.cache
def _clip_tokenizer():  # type: ignore[no-untyped-def]
    from open_clip.tokenizer import SimpleTokenizer

    tokenizer = SimpleTokenizer()
    if tokenizer.sot_token_id != SOT or tokenizer.eot_token_id != EOT:
        raise RuntimeError(
            f"open_clip's tokenizer has start/end ids {tokenizer.sot_token_id}/"
            f"{tokenizer.eot_token_id}, not CLIP's {SOT}/{EOT}"
        )
    return tokenizer


def encode(text: str, max_tokens: int) -> list[int]:
    """`[SOT] ids [EOT]` of `text`, cut to `max_tokens` ids (>= 2) with EOT kept last."""
    if max_tokens < 2:
        raise ValueError(f"max_tokens must be 2 or more (start and end), not {max_tokens}")
    ids = _clip_tokenizer().encode(text)[: max_tokens - 2]
    return [SOT, *ids, EOT]


def decode(ids: Sequence[int]) -> str:
    """The words of `ids` up to the first EOT, without the special ids."""
    words: list[int] = []
    for i in ids:
        i = int(i)
        if i == EOT:
            break
        if i != SOT:
            words.append(i)
    return " ".join(_clip_tokenizer().decode(words).split())
