"""A tiny VTT release folder made by the tests: meta/vtt.jsonl and states/ of solid colours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.vtt.samples import small_records, write_lines


def state_colour(sample: int, state: int) -> tuple[int, int, int]:
    """A colour that names (sample, state): red = 20 * state, green = 60 * sample."""
    return (20 * state, (60 * sample) % 256, 200)


def make_release(root: Path, records: list[dict[str, Any]] | None = None, size=(64, 48)) -> Path:
    """root/meta/vtt.jsonl and root/states/{id}_{N+1}_{i}.jpg (PNG bytes would do as well, but
    the release has JPEGs); returns root. Default records: three test samples with N = 3, 2, 1
    in two categories and one training sample."""
    from PIL import Image

    records = records if records is not None else default_records()
    (root / "meta").mkdir(parents=True, exist_ok=True)
    (root / "states").mkdir(exist_ok=True)
    write_lines(root / "meta" / "vtt.jsonl", records)
    for k, r in enumerate(records):
        n = len(r["annotation"])
        for i in range(n + 1):
            image = Image.new("RGB", size, state_colour(k, i))
            image.save(root / "states" / f"{r['id']}_{n + 1}_{i}.jpg", quality=95)
    return root


def default_records() -> list[dict[str, Any]]:
    """The records of `tests.vtt.samples.small_records`."""
    return small_records()
