"""The mp4 writer: frames in, an H.264 file out, atomically; bad frames name the frame."""

from __future__ import annotations

import numpy as np
import pytest

av = pytest.importorskip("av")

from tvr.clevrer.render.mp4 import Mp4Writer, write_mp4  # noqa: E402


def _frames(n, h=64, w=96):
    rng = np.random.default_rng(0)
    base = rng.integers(0, 255, (h, w, 3), dtype=np.uint8)
    return [np.roll(base, 4 * t, axis=1) for t in range(n)]


def test_written_file_has_every_frame(tmp_path):
    path = write_mp4(tmp_path / "a.mp4", _frames(7))
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        assert (s.width, s.height, s.codec_context.pix_fmt) == (96, 64, "yuv420p")
        assert len(list(c.decode(video=0))) == 7
    assert [p.name for p in tmp_path.iterdir()] == ["a.mp4"]


def test_bad_frame_aborts_and_leaves_nothing(tmp_path):
    match = r"frame 2: expected \(64, 96, 3\) uint8"
    with pytest.raises(ValueError, match=match), Mp4Writer(tmp_path / "b.mp4", 96, 64) as w:
        for f in _frames(2):
            w.write(f)
        w.write(np.zeros((64, 96), np.uint8))
    assert list(tmp_path.iterdir()) == []


def test_odd_size_is_refused(tmp_path):
    with pytest.raises(ValueError, match="even frame size"):
        Mp4Writer(tmp_path / "c.mp4", 95, 64)
