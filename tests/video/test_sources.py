"""Locating video files by YouTube id under a folder, with the missing ones listed."""

from __future__ import annotations

import pytest

from tvr.core.errors import UserError
from tvr.video.sources import VideoFolder


def _touch(root, *names):
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")


def test_common_layouts_and_missing_ids(tmp_path):
    _touch(
        tmp_path,
        "flat1.mp4",
        "flat2.WEBM",
        "88/task_vid.mkv",  # COIN-style task folder
        "Make Jello/deep/Some Title [yt_-id0001].mp4",  # yt-dlp's default name
        "part1.mp4.part",
        ".hidden.mp4",
        "notes.txt",
        "a/b/c/d/too_deep.mp4",
    )
    folder = VideoFolder(tmp_path)
    assert folder.find("flat1") == tmp_path / "flat1.mp4"
    assert folder.find("flat2") == tmp_path / "flat2.WEBM"
    assert folder.find("task_vid") == tmp_path / "88" / "task_vid.mkv"
    assert (
        folder.find("yt_-id0001")
        == tmp_path / "Make Jello" / "deep" / "Some Title [yt_-id0001].mp4"
    )
    for absent in ("part1", ".hidden", "hidden", "notes", "too_deep"):
        assert folder.find(absent) is None
    located = folder.locate(["flat1", "gone", "task_vid", "flat1", "also_gone"])
    assert located.missing == ["gone", "also_gone"]
    assert sorted(located.found) == ["flat1", "task_vid"]
    assert VideoFolder(tmp_path, max_depth=4).find("too_deep") is not None


def test_duplicates_prefer_shallow_then_mp4(tmp_path):
    _touch(tmp_path, "x/v1.webm", "x/v1.mp4", "v2.mkv", "y/v2.mp4", "z/v3.mp4", "w/v3.mp4")
    folder = VideoFolder(tmp_path)
    assert folder.find("v1") == tmp_path / "x" / "v1.mp4"
    assert folder.find("v2") == tmp_path / "v2.mkv"
    assert folder.find("v3") == tmp_path / "w" / "v3.mp4"
    assert folder.duplicates == {
        "v1": [tmp_path / "x" / "v1.webm"],
        "v2": [tmp_path / "y" / "v2.mp4"],
        "v3": [tmp_path / "z" / "v3.mp4"],
    }


def test_missing_root(tmp_path):
    with pytest.raises(UserError, match="no such folder"):
        VideoFolder(tmp_path / "none")
