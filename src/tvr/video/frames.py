"""Frames of local video files (PyAV): frames at given times, sparse clip sampling, image files.

The time -> frame rule: the frame taken for a time t (seconds from the start of the video) is
the first frame, in presentation order, whose time is at or after t (within TIME_TOLERANCE, so
that a frame at exactly t is taken despite rounding). A frame's time is its presentation
timestamp minus the video stream's start time, so t = 0 is the first frame a player shows. A time
after the last frame takes the last frame when it is at most `end_slack` seconds (default 1 s)
after it: annotations often end at the video's duration, which is one frame interval after the
last frame. A time further out means the file is not the annotated video (shorter, or cut off),
and raises VideoUnavailable.

Decoding: the wanted times are visited in increasing order; the reader decodes forward and seeks
(to the key frame at or before the time, then decodes forward to it) only when the next time is
more than `seek_gap` seconds ahead, so nearby times cost one pass. If a seek lands after the time
(a bad index), it decodes from the beginning instead.

Sparse temporal sampling (TSN style) of a clip [start, end]: the clip's n frames, counted on
the stream's average frame-rate grid (frame i at i / fps), are split into K contiguous segments
of near-equal length, segment j = [lo_j, hi_j) with lo_j = floor(j n / K), hi_j = floor((j + 1)
n / K); with a random generator one frame is drawn uniformly from each segment, without one the
middle frame lo_j + (hi_j - lo_j) // 2 is taken (deterministic "test" mode). A clip shorter than
K frames repeats frames (an empty segment takes frame lo_j); a clip with no frame on the grid
takes the frame at or after its start. The sampled grid times are then read with the rule above,
which picks exactly those frames in a constant-rate video and the nearest later frame in a
variable-rate one.

A missing, unreadable, truncated or mismatched file raises VideoUnavailable (a UserError) with
the reason; builders catch it to list the video and skip it.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tvr.core.errors import UserError
from tvr.core.jsonl import write_file_bytes
from tvr.core.png import encode_png

TIME_TOLERANCE = 1e-3  # seconds: a frame this much before t still counts as "at t"
SEEK_GAP = 5.0  # seconds: seek instead of decoding forward when the next time is further ahead
END_SLACK = 1.0  # seconds: a time at most this far after the last frame takes the last frame
JPEG_QUALITY = 95


class VideoUnavailable(UserError):
    """A video that cannot be used: missing, unreadable, truncated, or shorter than annotated."""

    def __init__(self, video: str | Path, reason: str) -> None:
        self.video = str(video)
        self.reason = reason
        super().__init__(f"{video}: {reason}")


@dataclass(frozen=True)
class VideoInfo:
    """What the container says about a video's first video stream.

    Attributes:
        path: the file.
        width, height: the frame size in pixels.
        fps: the average frame rate (frames per second).
        duration: the stream's length in seconds, or None when the container does not say.
        n_frames: the number of frames, or None when the container does not say (WebM).
    """

    path: Path
    width: int
    height: int
    fps: float
    duration: float | None
    n_frames: int | None


def probe(path: str | Path) -> VideoInfo:
    """Size, frame rate, duration and frame count of a video (VideoUnavailable if unreadable)."""
    with _opened(path) as (_, _, info):
        return info


def frames_at(
    path: str | Path,
    times: Sequence[float],
    short_side: int | None = None,
    *,
    end_slack: float = END_SLACK,
    seek_gap: float = SEEK_GAP,
) -> list[np.ndarray]:
    """The frames at `times` (seconds; the module's time -> frame rule), in the order given.

    Each is an (H, W, 3) uint8 RGB array, resized so that its short side is `short_side` pixels
    (keeping the aspect ratio; up or down) when given. Repeated times share one array.
    Raises VideoUnavailable for a missing or unreadable file or a time past its end, and
    ValueError for a negative or non-finite time.
    """
    times = [_check_time(t) for t in times]
    with _opened(path) as (container, stream, _):
        picked = _pick(container, stream, Path(path), sorted(set(times)), end_slack, seek_gap)
    resized = {t: resize_short_side(a, short_side) for t, a in picked.items()}
    return [resized[t] for t in times]


def sample_indices(n: int, k: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """K frame indices in [0, n), non-decreasing: one per segment of K near-equal segments.

    Segment j is [floor(j n / K), floor((j + 1) n / K)) (at least one frame). With `rng`, each
    index is uniform within its segment (training); without, it is the segment's middle frame
    lo + (hi - lo) // 2 (test). For n >= K the indices are distinct; for n < K some repeat.
    """
    if n < 1 or k < 1:
        raise ValueError(f"need n >= 1 frames and k >= 1 samples, got n={n}, k={k}")
    j = np.arange(k)
    lo = j * n // k
    hi = np.maximum((j + 1) * n // k, lo + 1)
    if rng is None:
        return lo + (hi - lo) // 2
    return lo + rng.integers(0, hi - lo)


def clip_frame_times(
    start: float,
    end: float,
    k: int,
    fps: float,
    rng: np.random.Generator | None = None,
    n_frames: int | None = None,
) -> list[float]:
    """The grid times (i / fps) of K frames sparsely sampled from the clip [start, end] seconds.

    The clip's frames are the grid frames with time in [start, end] (within TIME_TOLERANCE),
    capped at `n_frames` - 1 when known; none -> the first grid frame at or after `start`.
    """
    if not (math.isfinite(fps) and fps > 0):
        raise ValueError(f"expected a frame rate > 0, got {fps}")
    start, end = _check_time(start), _check_time(end)
    if end < start:
        raise ValueError(f"expected start <= end, got [{start}, {end}]")
    first = math.ceil((start - TIME_TOLERANCE) * fps)
    last = math.floor((end + TIME_TOLERANCE) * fps)
    if n_frames is not None:
        first, last = min(first, n_frames - 1), min(last, n_frames - 1)
    last = max(last, first)
    picks = first + sample_indices(last - first + 1, k, rng)
    return [int(i) / fps for i in picks]


def sample_clip(
    path: str | Path,
    start: float,
    end: float,
    k: int,
    seed: int | np.random.Generator | None = None,
    short_side: int | None = None,
    *,
    end_slack: float = END_SLACK,
) -> list[np.ndarray]:
    """K frames of the clip [start, end] seconds by sparse temporal sampling (see the module).

    `seed`: an int (numpy.random.default_rng(seed)) or a Generator for random frames per
    segment, None for the deterministic middle frames. Raises VideoUnavailable like frames_at.
    """
    return sample_clips(path, [(start, end)], k, seed, short_side, end_slack=end_slack)[0]


def sample_clips(
    path: str | Path,
    clips: Sequence[tuple[float, float]],
    k: int,
    seed: int | np.random.Generator | None = None,
    short_side: int | None = None,
    *,
    end_slack: float = END_SLACK,
) -> list[list[np.ndarray]]:
    """`sample_clip` for several clips of one video, read in one pass over the file.

    With a seed, the clips draw from one generator in the order given, so the result depends
    on the seed and on the list of clips.
    """
    rng = np.random.default_rng(seed) if isinstance(seed, (int, np.integer)) else seed
    with _opened(path) as (container, stream, info):
        wanted = [clip_frame_times(s, e, k, info.fps, rng, info.n_frames) for s, e in clips]
        times = sorted({t for clip in wanted for t in clip})
        picked = _pick(container, stream, Path(path), times, end_slack, SEEK_GAP)
    resized = {t: resize_short_side(a, short_side) for t, a in picked.items()}
    return [[resized[t] for t in clip] for clip in wanted]


def resize_short_side(image: np.ndarray, short_side: int | None) -> np.ndarray:
    """The image scaled (bicubic, Pillow) so that its short side is `short_side` pixels."""
    if short_side is None:
        return image
    if short_side < 1:
        raise ValueError(f"expected short_side >= 1, got {short_side}")
    h, w = image.shape[:2]
    if min(h, w) == short_side:
        return image
    if h <= w:
        size = (max(1, round(w * short_side / h)), short_side)
    else:
        size = (short_side, max(1, round(h * short_side / w)))
    from PIL import Image

    return np.asarray(Image.fromarray(image).resize(size, Image.Resampling.BICUBIC))


def write_image(path: str | Path, image: np.ndarray, quality: int = JPEG_QUALITY) -> Path:
    """Write an (H, W, 3) uint8 RGB image atomically as JPEG (.jpg/.jpeg) or PNG (.png)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".jpg", ".jpeg"):
        import io

        from PIL import Image

        buf = io.BytesIO()
        Image.fromarray(np.ascontiguousarray(image)).save(buf, format="JPEG", quality=quality)
        data = buf.getvalue()
    elif suffix == ".png":
        data = encode_png(image)
    else:
        raise ValueError(f"{path}: expected a .jpg, .jpeg or .png file name")
    write_file_bytes(path, data)
    return path


def _check_time(t: float) -> float:
    t = float(t)
    if not (math.isfinite(t) and t >= 0):
        raise ValueError(f"expected a time >= 0 in seconds, got {t}")
    return t


@contextlib.contextmanager
def _opened(path: str | Path) -> Iterator[tuple[Any, Any, VideoInfo]]:
    """The open container, its first video stream and its VideoInfo; PyAV and OS errors become
    VideoUnavailable."""
    path = Path(path)
    if not path.is_file():
        raise VideoUnavailable(path, "no such file")
    import av

    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                raise VideoUnavailable(path, "no video stream")
            stream = container.streams.video[0]
            yield container, stream, _info(path, container, stream)
    except (av.error.FFmpegError, OSError, EOFError) as err:
        raise VideoUnavailable(path, f"cannot read the video ({_reason(err)})") from None


def _reason(err: Exception) -> str:
    text = getattr(err, "strerror", None) or str(err)
    return text.split(": '", 1)[0]  # PyAV appends the file name, which the message already has


def _info(path: Path, container: Any, stream: Any) -> VideoInfo:
    rate = stream.average_rate or stream.guessed_rate
    if not rate or rate <= 0:
        raise VideoUnavailable(path, "the video stream has no frame rate")
    if stream.duration:
        duration = float(stream.duration * stream.time_base)
    elif container.duration:
        duration = container.duration / 1_000_000  # AV_TIME_BASE
    else:
        duration = None
    return VideoInfo(
        path, stream.width, stream.height, float(rate), duration, stream.frames or None
    )


def _pick(
    container: Any,
    stream: Any,
    path: Path,
    wanted: list[float],
    end_slack: float,
    seek_gap: float,
) -> dict[float, np.ndarray]:
    """The RGB array of the frame for each time of `wanted` (sorted, distinct)."""
    reader = _Reader(container, stream, path)
    out: dict[float, np.ndarray] = {}
    last_frame, last_array = None, None  # a frame taken for several times is converted once
    for t in wanted:
        frame, frame_time = reader.at_or_after(t, seek_gap)
        if frame_time < t - TIME_TOLERANCE and t > frame_time + end_slack:
            raise VideoUnavailable(
                path,
                f"the video ends at {frame_time:.3f} s (last frame), before the wanted time "
                f"{t:.3f} s (a shorter, truncated or different video?)",
            )
        if frame is not last_frame:
            last_frame, last_array = frame, frame.to_ndarray(format="rgb24")
        out[t] = last_array
    return out


class _Reader:
    """Decodes a stream forward from wherever it last sought, one frame ahead."""

    def __init__(self, container: Any, stream: Any, path: Path) -> None:
        self.container, self.stream, self.path = container, stream, path
        self.origin = stream.start_time or 0
        self.frames: Iterator[Any] | None = None
        self.current: tuple[Any, float] | None = None  # the latest decoded frame and its time
        self.done = False  # the stream has no frame after `current`

    def at_or_after(self, t: float, seek_gap: float) -> tuple[Any, float]:
        """The first frame at or after t (or the last frame if none is), and its time."""
        if self.frames is None or (not self.done and t - self.current[1] > seek_gap):
            target = t if t > seek_gap or self.frames is not None else 0.0
            self._restart(target)
            if target > 0 and (self.current is None or self.current[1] > t + TIME_TOLERANCE):
                self._restart(0.0)  # the seek found nothing or went past t: decode from 0
            if self.current is None:
                raise VideoUnavailable(self.path, "no frame could be decoded")
        while not self.done and self.current[1] < t - TIME_TOLERANCE:
            self._advance()
        return self.current

    def _restart(self, target: float) -> None:
        if self.frames is not None or target > 0:
            offset = self.origin + math.floor(target / self.stream.time_base)
            self.container.seek(offset, stream=self.stream, backward=True, any_frame=False)
        self.frames = self.container.decode(self.stream)
        self.current, self.done = None, False
        self._advance()

    def _advance(self) -> None:
        frame = next(self.frames, None)
        if frame is None:
            self.done = True
            return
        if frame.pts is None:
            raise VideoUnavailable(self.path, "the frames have no timestamps")
        self.current = (frame, float((frame.pts - self.origin) * self.stream.time_base))
