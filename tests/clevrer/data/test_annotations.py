"""annotation_XXXXX.json: round trip, and one clear error naming the file and field per fault."""

import copy
import json

import numpy as np
import pytest

from tests.clevrer.data.samples import annotation_dict
from tvr.clevrer.data.annotations import (
    Annotation,
    quaternion_to_euler_xyz,
    read_annotation,
    write_annotation,
)
from tvr.core.errors import InputError, UserError


def test_round_trip_keeps_the_content(tmp_path):
    data = annotation_dict()
    ann = Annotation.from_json(data)
    path = tmp_path / "annotation_00012.json"
    write_annotation(path, ann)
    assert json.loads(path.read_text()) == data  # the released layout, field for field
    back = read_annotation(path)
    assert back == ann
    assert back.motion_trajectory[0].objects[2].inside_camera_view is False
    assert back.collision[1].object_ids == (1, 2)
    write_annotation(tmp_path / "again.json", back)
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()


def test_a_quaternion_orientation_is_read_too(tmp_path):
    data = annotation_dict()
    data["motion_trajectory"][0]["objects"][0]["orientation"] = [0.0, 0.0, 0.0, 1.0]
    assert Annotation.from_json(data).motion_trajectory[0].objects[0].orientation == (0, 0, 0, 1)


def _set(data, path, value):
    *head, last = path
    node = data
    for key in head:
        node = node[key]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value


_DELETE = object()
_M = "motion_trajectory"

CASES = [
    ((_M, 3, "objects", 1, "location"), [1.0, 2.0], "motion_trajectory[3].objects[1].location",
     "expected 3 numbers"),
    ((_M, 0, "objects", 0, "velocity"), [1, "x", 2], "motion_trajectory[0].objects[0].velocity",
     "expected 3 numbers"),
    ((_M, 1, "objects", 2, "orientation"), [1, 2], "motion_trajectory[1].objects[2].orientation",
     "expected 3 or 4 numbers"),
    ((_M, 2, "objects", 0, "inside_camera_view"), 1,
     "motion_trajectory[2].objects[0].inside_camera_view", "expected true or false"),
    ((_M, 2, "objects", 0, "object_id"), 7, "motion_trajectory[2].objects[0].object_id",
     "no object 7"),
    ((_M, 2, "objects", 1, "object_id"), 0, "motion_trajectory[2].objects[1].object_id",
     "listed twice"),
    ((_M, 1, "frame_id"), 5, "motion_trajectory[1].frame_id", "expected 1"),
    ((_M, 1, "objects"), _DELETE, "motion_trajectory[1].objects", "missing"),
    (("object_property", 1, "color"), "pink", "object_property[1].color", "unknown value 'pink'"),
    (("object_property", 2, "object_id"), 5, "object_property[2].object_id", "expected 2"),
    (("object_property", 2, "shape"), "sphere", "object_property[2]", "same colour"),
    (("collision", 0, "object_ids"), [0, 0], "collision[0].object_ids", "itself"),
    (("collision", 1, "object_ids"), [1], "collision[1].object_ids", "expected 2 object ids"),
    (("collision", 1, "object_ids"), [1, 9], "collision[1].object_ids[1]", "no object 9"),
    (("collision", 0, "frame_id"), -1, "collision[0].frame_id", "expected an integer >= 0"),
    (("collision", 0, "frame_id"), 2.0, "collision[0].frame_id", "expected an integer"),
    (("scene_index",), "12", "scene_index", "expected an integer, got a string"),
    (("video_filename",), _DELETE, "video_filename", "missing"),
]


@pytest.mark.parametrize("where,value,field,message", CASES)
def test_a_fault_names_the_file_and_the_field(tmp_path, where, value, field, message):
    data = copy.deepcopy(annotation_dict())
    if where[-1] == "shape" and where[0] == "object_property":  # make object 2 equal object 1
        data["object_property"][2].update(color="blue", material="rubber")
    _set(data, where, value)
    path = tmp_path / "annotation_00012.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        read_annotation(path)
    assert err.value.field == field
    assert message in err.value.reason
    text = str(err.value)
    assert text.startswith(f"{path}, field '{field}': ") and "\n" not in text


def test_bad_json_names_the_line_and_a_missing_file_is_a_user_error(tmp_path):
    path = tmp_path / "annotation_00001.json"
    path.write_text('{\n"scene_index": 1,\n"video_filename": ,\n}')
    with pytest.raises(InputError) as err:
        read_annotation(path)
    assert err.value.line == 3 and "not valid JSON" in str(err.value)
    with pytest.raises(UserError, match="no such file"):
        read_annotation(tmp_path / "absent.json")
    path.write_text("[]")
    with pytest.raises(InputError, match="expected an object, got a list"):
        read_annotation(path)


def test_quaternion_to_euler_matches_rotations_about_each_axis():
    half = np.pi / 8  # a rotation of pi/4
    s, c = np.sin(half), np.cos(half)
    q = np.array([[s, 0, 0, c], [0, s, 0, c], [0, 0, s, c], [0, 0, 0, 1.0]])
    expected = np.array([[np.pi / 4, 0, 0], [0, np.pi / 4, 0], [0, 0, np.pi / 4], [0, 0, 0]])
    np.testing.assert_allclose(quaternion_to_euler_xyz(q), expected, atol=1e-12)
    # XYZ order: X applied first, then Y, then Z (fixed axes) = Rz @ Ry @ Rx
    a, b, g = 0.3, -0.4, 1.1
    qx = np.array([np.sin(a / 2), 0, 0, np.cos(a / 2)])
    qy = np.array([0, np.sin(b / 2), 0, np.cos(b / 2)])
    qz = np.array([0, 0, np.sin(g / 2), np.cos(g / 2)])
    q = _mul(qz, _mul(qy, qx))
    np.testing.assert_allclose(quaternion_to_euler_xyz(q), [a, b, g], atol=1e-12)


def _mul(p, q):
    """Hamilton product of quaternions in x, y, z, w order."""
    px, py, pz, pw = p
    qx, qy, qz, qw = q
    return np.array([
        pw * qx + px * qw + py * qz - pz * qy,
        pw * qy - px * qz + py * qw + pz * qx,
        pw * qz + px * qy - py * qx + pz * qw,
        pw * qw - px * qx - py * qy - pz * qz,
    ])  # fmt: skip
