"""`tvr.web.files`: a file is sent only when it lies under the data roots once resolved, is a
regular file without a hard link outside, and is of an expected kind by content (issue 38: the
viewer followed a symlink to /etc/passwd and sent it as image/png)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from tvr.web import files
from tvr.web.files import DataRoots, FileRefused, file_kind, file_response, safe_file

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 40
MP4 = b"\x00\x00\x00\x20ftypisom" + b"\x00" * 40
WEBM = b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm" + b"\x00" * 40
SECRET = b"root:x:0:0:root:/root:/bin/bash\n"


@pytest.fixture
def tree(tmp_path) -> tuple[Path, Path]:
    """(data root with images/a.png, a folder outside it with secret.png and secret.txt)."""
    root, outside = tmp_path / "data", tmp_path / "outside"
    (root / "images").mkdir(parents=True)
    outside.mkdir()
    (root / "images" / "a.png").write_bytes(PNG)
    (outside / "secret.png").write_bytes(PNG)
    (outside / "secret.txt").write_bytes(SECRET)
    return root, outside


def refused(root: Path, relative: str, kinds=("png",)) -> bool:
    try:
        safe_file(DataRoots([root]), relative, kinds)
    except FileRefused:
        return True
    return False


def test_a_plain_file_under_the_root_is_sent_with_the_type_of_its_content(tree):
    root, _ = tree
    assert safe_file(DataRoots([root]), "images/a.png", ("png",)) == root / "images" / "a.png"
    (root / "images" / "b.png").write_bytes(JPEG)  # a JPEG named .png is a JPEG
    response = file_response(DataRoots([root]), "images/b.png", ("png", "jpeg"))
    assert response.status_code == 200 and response.media_type == "image/jpeg"


@pytest.mark.parametrize(
    "relative",
    ["../outside/secret.png", "images/../../outside/secret.png", "/etc/passwd", "", "images//a.png",
     "./images/a.png", "images/./a.png", "images\\a.png", "images/a.png\x00", "images/",
     "%2e%2e/outside/secret.png", "..%2foutside%2fsecret.png"],
)  # fmt: skip
def test_a_path_that_could_leave_the_root_is_refused(tree, relative):
    assert refused(tree[0], relative)


def test_a_symlink_out_of_the_root_is_refused(tree):
    root, outside = tree
    (root / "images" / "passwd.png").symlink_to(outside / "secret.txt")
    (root / "images" / "other.png").symlink_to(outside / "secret.png")  # right content, outside
    assert refused(root, "images/passwd.png") and refused(root, "images/other.png")


def test_a_symlink_inside_the_root_is_followed(tree):
    root, _ = tree
    (root / "images" / "same.png").symlink_to(root / "images" / "a.png")
    assert safe_file(DataRoots([root]), "images/same.png", ("png",)) == root / "images" / "a.png"


def test_a_link_to_a_directory_outside_and_a_directory_are_refused(tree):
    root, outside = tree
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "images" / "dir.png").mkdir()
    (root / "images" / "dirlink.png").symlink_to(root / "images", target_is_directory=True)
    assert refused(root, "linked/secret.png")
    assert refused(root, "images/dir.png") and refused(root, "images/dirlink.png")


def test_a_hard_link_to_a_file_outside_is_refused_and_one_inside_is_not(tree, monkeypatch):
    root, outside = tree
    os.link(outside / "secret.png", root / "images" / "hard.png")
    assert refused(root, "images/hard.png")
    os.link(root / "images" / "a.png", root / "images" / "twin.png")  # both names in the root
    roots = DataRoots([root])
    assert safe_file(roots, "images/twin.png", ("png",)) == root / "images" / "twin.png"
    # a third name made outside later: refused once the names are counted again
    monkeypatch.setattr(files, "RELINK_SECONDS", 0.0)
    os.link(root / "images" / "a.png", outside / "third.png")
    with pytest.raises(FileRefused, match="3 hard links"):
        safe_file(roots, "images/a.png", ("png",))


def test_hard_links_between_two_served_roots_pass(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x.png").write_bytes(PNG)
    os.link(a / "x.png", b / "x.png")
    assert safe_file(DataRoots([b, a]), "x.png", ("png",)) == b / "x.png"
    assert refused(b, "x.png")  # with root b alone, the other name is outside


def test_the_wrong_content_under_the_right_name_is_refused(tree):
    root, _ = tree
    (root / "images" / "text.png").write_bytes(SECRET)
    (root / "images" / "empty.png").write_bytes(b"")
    assert refused(root, "images/text.png") and refused(root, "images/empty.png")
    assert refused(root, "images/a.png", kinds=("jpeg", "mp4"))


def test_a_fifo_and_a_symlink_loop_are_refused_without_hanging(tree):
    root, _ = tree
    os.mkfifo(root / "images" / "fifo.png")
    (root / "images" / "loop.png").symlink_to(root / "images" / "loop.png")
    assert refused(root, "images/fifo.png") and refused(root, "images/loop.png")


def test_a_root_that_is_a_symlink_serves_its_files(tree, tmp_path):
    root, _ = tree
    (tmp_path / "alias").symlink_to(root, target_is_directory=True)
    assert safe_file(DataRoots([tmp_path / "alias"]), "images/a.png", ("png",)).read_bytes() == PNG


def test_file_response_is_a_404_and_logs_the_reason(tree, caplog):
    root, outside = tree
    (root / "images" / "passwd.png").symlink_to(outside / "secret.txt")
    with caplog.at_level(logging.WARNING, logger="tvr.web.files"):
        response = file_response([root], "images/passwd.png", ("png",), missing="no such image")
    assert (response.status_code, response.body) == (404, b"no such image")
    assert "outside the data folders" in caplog.text
    with pytest.raises(ValueError, match="kinds"):
        file_response([root], "images/a.png", ())


@pytest.mark.parametrize(
    ("head", "kind"),
    [(PNG, "png"), (JPEG, "jpeg"), (MP4, "mp4"), (WEBM, "webm"), (b'\xef\xbb\xbf \n{"a": 1}', "json"),
     (b"[1]", "json"), (SECRET, None), (b"\x1a\x45\xdf\xa3 matroska", None), (b"", None)],
)  # fmt: skip
def test_file_kinds_by_content(head, kind):
    assert file_kind(head) == kind


def test_an_unknown_kind_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown file kind"):
        file_kind(PNG, ("gif",))
