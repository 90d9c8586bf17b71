"""The release's names and folders, and finding files in a copy unpacked in different ways."""

import pytest

from tvr.clevrer.data import layout
from tvr.core.errors import UserError


def test_names_and_folders_of_the_release():
    assert layout.split_of(0) == "train" and layout.split_of(9999) == "train"
    assert layout.split_of(10000) == "validation" and layout.split_of(19999) == "test"
    assert layout.chunk_folder("video", 1234) == "video_01000-02000"
    assert layout.chunk_folder("annotation", 10999) == "annotation_10000-11000"
    assert layout.video_filename(7) == "video_00007.mp4"
    assert layout.annotation_filename(15000) == "annotation_15000.json"
    assert layout.sim_filename(3) == "sim_00003.json"
    assert layout.frame_filename(3, 127) == "sim_00003/frame_00127.png"
    root = "out"
    assert str(layout.video_path(root, 10001)) == (
        "out/videos/validation/video_10000-11000/video_10001.mp4"
    )
    assert str(layout.annotation_path(root, 5)) == (
        "out/annotations/train/annotation_00000-01000/annotation_00005.json"
    )
    assert str(layout.questions_path(root, "test")) == "out/questions/test.json"


@pytest.mark.parametrize(
    "relative",
    [
        "videos/validation/video_10000-11000/video_10001.mp4",  # tvr's layout
        "video_validation/video_10000-11000/video_10001.mp4",  # video_validation.zip unpacked
        "video_10000-11000/video_10001.mp4",  # the 1000-folders under the root
        "videos/video_10001.mp4",  # flat
    ],
)
def test_find_video_in_each_unpacked_layout(tmp_path, relative):
    target = tmp_path / relative
    target.parent.mkdir(parents=True)
    target.write_bytes(b"")
    assert layout.find_video(tmp_path, 10001) == target


def test_find_annotation_questions_and_scan(tmp_path):
    ann = tmp_path / "annotations" / "train" / "annotation_00000-01000" / "annotation_00042.json"
    ann.parent.mkdir(parents=True)
    ann.write_text("{}")
    assert layout.find_annotation(tmp_path, 42) == ann
    assert layout.scan(tmp_path, "annotation") == {42: ann}
    with pytest.raises(UserError, match="no annotation for scene 43"):
        layout.find_annotation(tmp_path, 43)
    (tmp_path / "validation.json").write_text("[]")
    assert layout.find_questions(tmp_path, "validation") == tmp_path / "validation.json"
    with pytest.raises(UserError, match="no question file for split 'train'"):
        layout.find_questions(tmp_path, "train")
    # "val" is tvr's name of the release's "validation" (docs/cli.md)
    assert layout.find_questions(tmp_path, "val") == tmp_path / "validation.json"
    with pytest.raises(UserError, match="unknown split 'dev' \\(expected one of: train, val, test\\)"):
        layout.find_questions(tmp_path, "dev")
    with pytest.raises(UserError, match="no such folder"):
        layout.find_video(tmp_path / "absent", 0)
