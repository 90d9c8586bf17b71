"""Frame extraction: the time -> frame rule, resizing, sparse sampling, image files, bad videos."""

from __future__ import annotations

import numpy as np
import pytest

from tests.video.conftest import frame_number, write_video
from tvr.core.errors import UserError
from tvr.video.frames import (
    VideoUnavailable,
    clip_frame_times,
    frames_at,
    probe,
    sample_clip,
    sample_clips,
    sample_indices,
    write_image,
)

pytest.importorskip("av")
Image = pytest.importorskip("PIL.Image")

VIDEOS = ["mp4_gop5.mp4", "mp4_onekey.mp4", "vp9.webm"]
# 20 frames at 10 fps: frame i at i / 10 s. Hand-computed: the first frame at or after t,
# the last frame (19, at 1.9 s) for t up to 1 s after it.
TIMES = [0.0, 0.05, 0.1, 0.3, 0.31, 1.0, 0.99, 1.95, 2.5, 0.0, 1.6]
FRAMES = [0, 1, 1, 3, 4, 10, 10, 19, 19, 0, 16]


@pytest.mark.parametrize("name", VIDEOS)
@pytest.mark.parametrize("seek_gap", [5.0, 0.2])
def test_frame_at_or_after_each_time_in_the_given_order(video_dir, name, seek_gap):
    images = frames_at(video_dir / name, TIMES, seek_gap=seek_gap)
    assert [frame_number(a) for a in images] == FRAMES
    assert all(a.shape == (48, 80, 3) and a.dtype == np.uint8 for a in images)


def test_probe(video_dir):
    info = probe(video_dir / "mp4_gop5.mp4")
    assert (info.width, info.height, info.fps, info.n_frames) == (80, 48, 10.0, 20)
    assert info.duration == pytest.approx(2.0)
    assert probe(video_dir / "vp9.webm").n_frames is None  # WebM does not store a count


@pytest.mark.parametrize(
    ("name", "short_side", "shape"),
    [
        ("mp4_gop5.mp4", 24, (24, 40, 3)),
        ("mp4_gop5.mp4", 96, (96, 160, 3)),
        ("mp4_gop5.mp4", 48, (48, 80, 3)),
        ("tall.mp4", 24, (40, 24, 3)),
    ],
)
def test_short_side_is_resized_keeping_the_aspect(video_dir, name, short_side, shape):
    (image,) = frames_at(video_dir / name, [0.2], short_side=short_side)
    assert image.shape == shape
    assert frame_number(image) == 2


def test_times_past_the_end_and_bad_times(video_dir):
    path = video_dir / "mp4_gop5.mp4"
    with pytest.raises(VideoUnavailable, match=r"ends at 1\.900 s .* wanted time 3\.000 s"):
        frames_at(path, [0.5, 3.0])
    with pytest.raises(VideoUnavailable, match="ends at"):
        frames_at(path, [2.5], end_slack=0.1)
    with pytest.raises(VideoUnavailable, match="ends at"):  # a seek past the end
        frames_at(path, [0.1, 30.0], seek_gap=0.2)
    with pytest.raises(ValueError, match="time >= 0"):
        frames_at(path, [-0.1])
    with pytest.raises(ValueError, match="time >= 0"):
        frames_at(path, [float("nan")])


def test_missing_junk_and_truncated_videos_are_unavailable(tmp_path):
    missing = tmp_path / "gone.mp4"
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video " * 200)
    truncated = tmp_path / "cut.mp4"
    data = write_video(tmp_path / "full.mp4", n=20).read_bytes()
    truncated.write_bytes(data[: len(data) * 6 // 10])
    no_index = write_video(tmp_path / "end_index.mp4", faststart=False)  # moov atom at the end
    no_index.write_bytes(no_index.read_bytes()[:-200])
    reasons = {}
    for path in (missing, junk, truncated, no_index):
        with pytest.raises(VideoUnavailable) as caught:
            frames_at(path, [0.0, 1.5])
        err = caught.value
        assert isinstance(err, UserError) and err.video == str(path)
        assert str(err) == f"{path}: {err.reason}" and "\n" not in str(err)
        reasons[path.name] = err.reason
    assert reasons["gone.mp4"] == "no such file"
    assert reasons["junk.mp4"].startswith("cannot read the video")
    with pytest.raises(VideoUnavailable):
        sample_clip(junk, 0.0, 1.0, 3)
    with pytest.raises(VideoUnavailable):
        probe(missing)


def test_sample_indices_stay_in_their_segments():
    for n in range(1, 40):
        for k in range(1, 9):
            mid = sample_indices(n, k)
            draws = [sample_indices(n, k, np.random.default_rng(s)) for s in range(5)]
            for idx in [mid, *draws]:
                assert len(idx) == k and idx.min() >= 0 and idx.max() < n
                assert np.all(np.diff(idx) >= 0)
                if n >= k:
                    assert len(set(idx.tolist())) == k
                    j = np.arange(k)
                    assert np.all(idx >= j * n // k) and np.all(idx < (j + 1) * n // k)
    # segments [0, 4), [4, 8), [8, 13): middles 2, 6, 10
    assert sample_indices(13, 3).tolist() == [2, 6, 10]
    assert sample_indices(4, 3).tolist() == [0, 1, 3]  # segments [0, 1), [1, 2), [2, 4)
    assert sample_indices(2, 3).tolist() == [0, 0, 1]  # segments [0, 1), [0, 1), [1, 2)
    assert sample_indices(1, 4).tolist() == [0, 0, 0, 0]
    with pytest.raises(ValueError):
        sample_indices(0, 3)


def test_sampling_is_seeded_and_covers_each_segment():
    same = [sample_indices(30, 3, np.random.default_rng(7)).tolist() for _ in range(2)]
    assert same[0] == same[1]
    seen = {tuple(sample_indices(30, 3, np.random.default_rng(s)).tolist()) for s in range(200)}
    assert len(seen) > 100
    firsts = {s[0] for s in seen}
    assert firsts == set(range(10))  # every frame of the first segment gets drawn


def test_clip_frame_times_hand_cases():
    # [0.25, 1.55] at 10 fps holds frames 3..15 (13 frames); middles of 3 segments: 5, 9, 13
    assert clip_frame_times(0.25, 1.55, 3, 10.0) == pytest.approx([0.5, 0.9, 1.3])
    # a clip between two grid frames takes the frame at or after its start
    assert clip_frame_times(0.31, 0.35, 3, 10.0) == pytest.approx([0.4, 0.4, 0.4])
    # the frame count caps the clip: frames 15..19
    assert clip_frame_times(1.5, 5.0, 5, 10.0, n_frames=20) == pytest.approx(
        [1.5, 1.6, 1.7, 1.8, 1.9]
    )
    # a boundary exactly on a frame counts the frame despite float rounding (0.3 * 10)
    assert clip_frame_times(0.3, 0.3, 1, 10.0) == pytest.approx([0.3])
    with pytest.raises(ValueError, match="start <= end"):
        clip_frame_times(1.0, 0.5, 3, 10.0)


@pytest.mark.parametrize("name", VIDEOS)
def test_sample_clip_on_a_video(video_dir, name):
    path = video_dir / name
    test_mode = [frame_number(a) for a in sample_clip(path, 0.25, 1.55, 3)]
    assert test_mode == [5, 9, 13]
    a = [frame_number(x) for x in sample_clip(path, 0.25, 1.55, 3, seed=11)]
    b = [frame_number(x) for x in sample_clip(path, 0.25, 1.55, 3, seed=np.random.default_rng(11))]
    assert a == b
    assert 3 <= a[0] <= 6 and 7 <= a[1] <= 10 and 11 <= a[2] <= 15
    frames = sample_clip(path, 1.2, 2.0, 4, seed=3, short_side=24)
    assert all(f.shape == (24, 40, 3) for f in frames)
    assert all(12 <= frame_number(f) <= 19 for f in frames)


def test_write_image_is_atomic_and_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, (30, 50, 3), dtype=np.uint8)
    png = write_image(tmp_path / "a" / "x.png", image)
    with Image.open(png) as im:
        assert np.array_equal(np.asarray(im), image)
    smooth = np.full((30, 50, 3), 120, np.uint8)
    jpg = write_image(tmp_path / "a" / "y.jpg", smooth)
    with Image.open(jpg) as im:
        assert im.format == "JPEG" and np.abs(np.asarray(im).astype(int) - 120).max() <= 2
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["x.png", "y.jpg"]
    with pytest.raises(ValueError, match=r"\.jpg"):
        write_image(tmp_path / "z.gif", image)


def test_sample_clips_reads_several_clips_in_one_pass(video_dir):
    path = video_dir / "mp4_gop5.mp4"
    clips = [(0.0, 0.55), (1.2, 1.9), (0.25, 1.55)]
    # frames 0..5, 12..19 and 3..15; the middles of [lo, hi) segments (see sample_indices)
    both = sample_clips(path, clips, 3)
    assert [[frame_number(f) for f in c] for c in both] == [[1, 3, 5], [13, 15, 18], [5, 9, 13]]
    seeded = sample_clips(path, clips, 3, seed=5)
    again = sample_clips(path, clips, 3, seed=5)
    assert [[frame_number(f) for f in c] for c in seeded] == [
        [frame_number(f) for f in c] for c in again
    ]
    assert sample_clips(path, [], 3) == []
