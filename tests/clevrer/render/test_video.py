"""render_video: the mp4 reads back (size, frame count, rate), the masks file decodes to the
rendered objects' pixels, PNG frames are the encoded frames, files are whole and repeatable."""

from __future__ import annotations

import numpy as np
import pytest

av = pytest.importorskip("av")

from tvr.clevrer.data.masks import decode_mask, read_masks  # noqa: E402
from tvr.clevrer.render import render_video  # noqa: E402
from tvr.clevrer.render.video import frame_scenes, iter_frames  # noqa: E402

N_FRAMES = 5


@pytest.fixture(scope="module")
def written(run, raster, tmp_path_factory):
    objects, trace = run
    out = tmp_path_factory.mktemp("video")
    res = render_video(
        objects, trace, out, index=7, n_frames=N_FRAMES, frames=True, renderer=raster
    )
    return out, res


def test_files_are_named_as_the_release_and_no_temporaries_remain(written):
    out, res = written
    assert res.video == out / "video_00007.mp4"
    assert res.masks == out / "sim_00007.json"
    assert [p.name for p in res.frames] == [f"{t:05d}.png" for t in range(N_FRAMES)]
    assert {p.name for p in out.iterdir()} == {"video_00007.mp4", "sim_00007.json", "video_00007"}


def test_mp4_reads_back_with_pyav(written):
    _, res = written
    with av.open(str(res.video)) as c:
        stream = c.streams.video[0]
        assert stream.codec_context.name == "h264"
        assert (stream.width, stream.height) == (480, 320)
        assert stream.average_rate == 25
        frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
    assert len(frames) == N_FRAMES
    assert all(f.shape == (320, 480, 3) for f in frames)


def test_decoded_video_matches_the_png_frames(written):
    from PIL import Image

    _, res = written
    with av.open(str(res.video)) as c:
        decoded = [f.to_ndarray(format="rgb24").astype(float) for f in c.decode(video=0)]
    for png, dec in zip(res.frames, decoded, strict=True):
        img = np.asarray(Image.open(png).convert("RGB")).astype(float)
        assert 40 < img.mean() < 220  # neither black nor blown out
        # lossy H.264 of the same frame: close on average (PSNR well above 35 dB)
        mse = ((img - dec) ** 2).mean()
        assert 10 * np.log10(255**2 / mse) > 35


def test_masks_decode_to_each_objects_pixels(written, run, raster):
    objects, trace = run
    _, res = written
    proposals = read_masks(res.masks)
    assert proposals.video_name == "video_00007"
    assert [f.frame_index for f in proposals.frames] == list(range(N_FRAMES))
    assert proposals.frames[2].frame_filename == "video_00007/00002.png"
    scenes = frame_scenes(objects, trace)
    for frame, (_, ids) in zip(
        proposals.frames, iter_frames(scenes, raster, N_FRAMES), strict=True
    ):
        assert len(frame.objects) == 3
        for obj in frame.objects:
            i = [(o["color"], o["material"], o["shape"]) for o in objects].index(
                (obj.color, obj.material, obj.shape)
            )
            m = decode_mask(obj.mask)
            assert m.shape == (320, 480)
            assert np.array_equal(m.astype(bool), ids == i)
            assert m.sum() > 200
    gt = proposals.ground_truth
    assert gt is not None and gt.collisions == ((3, (0, 1)),)
    assert [o[0] for o in gt.objects] == [0, 1, 2]


def test_same_run_gives_the_same_bytes(written, run, raster, tmp_path):
    objects, trace = run
    _, res = written
    again = render_video(objects, trace, tmp_path, index=7, n_frames=N_FRAMES, renderer=raster)
    assert again.video.read_bytes() == res.video.read_bytes()
    assert again.masks.read_bytes() == res.masks.read_bytes()


def test_absent_object_is_not_drawn(run, raster, tmp_path):
    objects, trace = run
    trace.present[1] = False
    try:
        res = render_video(objects, trace, tmp_path, n_frames=2, renderer=raster)
    finally:
        trace.present[1] = True
    names = {o.color for f in res.proposals.frames for o in f.objects}
    assert names == {"red", "green"}


def test_bad_frame_count_names_the_limit(run, raster, tmp_path):
    objects, trace = run
    with pytest.raises(ValueError, match=r"n_frames: expected 1\.\.6"):
        render_video(objects, trace, tmp_path, n_frames=7, renderer=raster)
    assert not list(tmp_path.iterdir())  # the partial mp4 was removed
