"""The fast PNG encoder: any decoder gets the exact pixels back."""

from __future__ import annotations

import io

import numpy as np
import pytest

from tvr.core.png import encode_png

Image = pytest.importorskip("PIL.Image")


@pytest.mark.parametrize("level", [0, 1, 3, 9])
@pytest.mark.parametrize("shape", [(1, 1, 3), (7, 5, 3), (48, 64, 3)])
def test_round_trip_through_pillow(level, shape):
    rng = np.random.default_rng(sum(shape) + level)
    img = rng.integers(0, 256, size=shape, dtype=np.uint8)
    img[: shape[0] // 2] = img[: shape[0] // 2] // 16 * 16  # smooth and noisy parts
    data = encode_png(img, level)
    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "PNG" and im.mode == "RGB" and im.size == (shape[1], shape[0])
        assert np.array_equal(np.asarray(im), img)


def test_smooth_images_compress_and_bad_input_is_refused():
    ramp = np.broadcast_to(np.arange(320, dtype=np.uint8)[None, :, None], (240, 320, 3))
    assert len(encode_png(ramp)) < 240 * 320 * 3 / 50
    with pytest.raises(ValueError, match="uint8"):
        encode_png(np.zeros((4, 4, 3), dtype=np.float32))
    with pytest.raises(ValueError):
        encode_png(np.zeros((4, 4), dtype=np.uint8))
