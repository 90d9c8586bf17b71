"""What every task's reply parser needs: the JSON values a model's free-text reply holds."""

from __future__ import annotations

import json
from typing import Any


def json_values(text: str) -> list[Any]:
    """Every JSON object or array that starts at a `{` or `[` of the text and parses, in order,
    outermost first (values nested in an earlier one are skipped)."""
    decoder = json.JSONDecoder()
    out, pos = [], 0
    while pos < len(text):
        starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            pos = start + 1
            continue
        out.append(value)
        pos = end
    return out
