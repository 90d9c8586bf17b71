"""One-line notices on stderr that every benchmark words the same way.

`warn_random_weights`: a model part (a CLIP image encoder, a CNN) is about to run with random
weights because no weights file was given. Such a run is legitimate (tests, CPU smoke runs,
training from scratch) but its features carry no pretrained knowledge and it can be silent for
minutes, so the user is told once, before the long part, which option gives weights.
"""

from __future__ import annotations

import sys
from typing import TextIO


def random_weights_line(what: str, option: str, seed: int | None = None) -> str:
    """The warning's text: `what` (e.g. "the image encoder ViT-L-14") runs with random weights
    (from `seed`, if given) because no weights file was given; `option` gives one."""
    origin = f" (seeded {seed})" if seed is not None else ""
    return (f"tvr: warning: {what} runs with random weights{origin}: no weights file was "
            f"given; give a local file with {option} (nothing is downloaded)")  # fmt: skip


def warn_random_weights(
    what: str, option: str, seed: int | None = None, file: TextIO | None = None
) -> str:
    """Print `random_weights_line` on stderr (or `file`) and return it. Call it once per command,
    where the weights are decided (not in a loop), before the long part."""
    line = random_weights_line(what, option, seed)
    print(line, file=file if file is not None else sys.stderr, flush=True)
    return line
