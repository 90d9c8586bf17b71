"""H.264 mp4 videos with PyAV: frames in, one file written atomically (temporary file, rename).

Settings: libx264, yuv420p (what every player reads), 25 fps, constant quality (CRF 18: no
visible loss on CLEVRER's flat colours), x264's "veryfast" preset, one encoder thread (so the
bytes depend only on the frames, and one core encodes one video; parallelism is across videos),
the index at the front of the file ("faststart", for the web viewer).

On x86, x264 may use SIMD up to SSE2 only (`X86_ASM`). Its AVX-512 macroblock-tree code
(mbtree_propagate_list) works through a row of macroblocks 8 at a time with no tail mask, so when
the width is not a multiple of 128 pixels (480 is 30 macroblocks) it also propagates two entries
past the row's end, computed from stale or uninitialised memory (the one reused cost row of
unreferenced B-frames; past the arrays' end on the last row). On an AVX-512 machine the bytes of
a video so changed from run to run (in the last macroblock column, x 464-479) while its frames
did not. Below AVX-512 x264 handles that tail in C; at SSE2 its output equalled its plain C
code's on the videos tried, at the same speed. Other architectures keep x264's own choice.
"""

from __future__ import annotations

import contextlib
import os
import platform
import tempfile
from collections.abc import Iterable
from fractions import Fraction
from pathlib import Path

import numpy as np

from tvr.clevrer.vocab import FPS

CRF = 18
X264_PRESET = "veryfast"
#: the highest SIMD level x264 may use on x86 (see the module docstring)
X86_ASM = "SSE2"
_X86 = ("x86_64", "amd64", "i386", "i486", "i586", "i686", "x86")


def x264_options(
    crf: int = CRF, x264_preset: str = X264_PRESET, machine: str | None = None
) -> dict[str, str]:
    """libx264's options: quality, speed, and on x86 (`machine`, default this one's) the SIMD
    cap `X86_ASM`."""
    options = {"crf": str(crf), "preset": x264_preset}
    if (machine if machine is not None else platform.machine()).lower() in _X86:
        options["x264-params"] = f"asm={X86_ASM}"
    return options


class Mp4Writer:
    """Writes frames to `path` (atomically on `close`); use as a context manager.

    Args:
        path: the .mp4 file.
        width, height: frame size (even numbers, for yuv420p).
        fps: frames per second.
        crf, x264_preset: x264's quality and speed settings.
    """

    def __init__(
        self,
        path: str | Path,
        width: int,
        height: int,
        fps: int = FPS,
        crf: int = CRF,
        x264_preset: str = X264_PRESET,
    ):
        import av

        if width % 2 or height % 2:
            raise ValueError(f"yuv420p needs an even frame size, got {width}x{height}")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            prefix=f".{self.path.name}.", suffix=".mp4", dir=self.path.parent
        )
        os.close(fd)
        self._tmp = Path(tmp)
        self.width, self.height = width, height
        self.n_frames = 0
        try:
            self._container = av.open(
                str(self._tmp), "w", format="mp4", options={"movflags": "+faststart"}
            )
            stream = self._container.add_stream("libx264", rate=fps)
            stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
            stream.time_base = Fraction(1, fps)
            stream.codec_context.thread_count = 1
            stream.options = x264_options(crf, x264_preset)
            self._stream = stream
        except BaseException:
            self._tmp.unlink(missing_ok=True)
            raise

    def write(self, image: np.ndarray) -> None:
        """Append one (H, W, 3) uint8 RGB frame."""
        import av

        if image.shape != (self.height, self.width, 3) or image.dtype != np.uint8:
            raise ValueError(
                f"frame {self.n_frames}: expected ({self.height}, {self.width}, 3) uint8, "
                f"got {image.shape} {image.dtype}"
            )
        # the frame wraps the array (no copy); it is read once, when converted to yuv420p
        frame = av.VideoFrame.from_numpy_buffer(np.ascontiguousarray(image), format="rgb24")
        frame.pts = self.n_frames
        for packet in self._stream.encode(frame):
            self._container.mux(packet)
        self.n_frames += 1

    def close(self) -> Path:
        """Flush the encoder, close the file and move it into place; returns the path."""
        try:
            for packet in self._stream.encode():
                self._container.mux(packet)
            self._container.close()
            os.chmod(self._tmp, 0o644)  # mkstemp makes it private
            os.replace(self._tmp, self.path)
        except BaseException:
            self.abort()
            raise
        return self.path

    def abort(self) -> None:
        """Drop the partial file."""
        with contextlib.suppress(Exception):  # the container may be half-closed already
            self._container.close()
        self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> Mp4Writer:
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            self.close()
        else:
            self.abort()


def write_mp4(path: str | Path, frames: Iterable[np.ndarray], fps: int = FPS) -> Path:
    """Write (H, W, 3) uint8 frames as an H.264 mp4, atomically; returns the path."""
    it = iter(frames)
    first = next(it, None)
    if first is None:
        raise ValueError("no frames to write")
    with Mp4Writer(path, first.shape[1], first.shape[0], fps) as w:
        w.write(first)
        for image in it:
            w.write(image)
    return Path(path)
