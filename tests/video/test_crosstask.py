"""CrossTask reader: records from a small release; malformed lines named by file, line and field."""

from __future__ import annotations

import pytest

from tvr.core.errors import InputError, UserError
from tvr.video.crosstask import read_annotation, read_crosstask, read_tasks, read_video_list

PRIMARY = """23521
Make Jello Shots
http://www.wikihow.com/Make-Jello-Shots
3
pour water,stir mixture, pour mixture into cup

40567
Jack Up a Car
http://www.wikihow.com/Jack-Up-a-Car
2
brake on,raise jack
"""
RELATED = """91515
Make Kerala Fish Curry
http://example.org/curry
1
add fish

"""


def _release(root):
    root.mkdir(parents=True)
    (root / "tasks_primary.txt").write_text(PRIMARY)
    (root / "tasks_related.txt").write_text(RELATED)
    (root / "videos.csv").write_text(
        "23521,vidA,https://www.youtube.com/watch?v=vidA\n"
        "40567,vidB,https://www.youtube.com/watch?v=vidB\n"
        "91515,vidC,https://www.youtube.com/watch?v=vidC\n"
        "77777,vidD,https://www.youtube.com/watch?v=vidD\n"
        "23521,vidA,https://www.youtube.com/watch?v=vidA\n"
    )
    (root / "videos_val.csv").write_text("task,vid,url\n40567,vidE,\n")
    ann = root / "annotations"
    ann.mkdir()
    (ann / "23521_vidA.csv").write_text("1,5.0,9.5\n3,12.25,20\n\n2,21,22\n")
    (ann / "40567_vidB.csv").write_text("2,1,2\n")
    (ann / "40567_vidE.csv").write_text("")
    return root


def test_reads_a_release_folder(tmp_path):
    data = read_crosstask(_release(tmp_path / "data" / "crosstask_release").parent)
    assert sorted(data.tasks) == ["23521", "40567", "91515"]
    assert data.tasks["23521"].steps == ("pour water", "stir mixture", "pour mixture into cup")
    assert [(v.video_id, v.subset) for v in data.videos] == [
        ("vidA", "training"),
        ("vidB", "training"),
        ("vidE", "validation"),
    ]
    a = data.videos[0]
    assert (a.source, a.task, a.task_id, a.duration) == (
        "crosstask",
        "Make Jello Shots",
        "23521",
        None,
    )
    assert [(s.label, s.start, s.end, s.step_id) for s in a.steps] == [
        ("pour water", 5.0, 9.5, "1"),
        ("pour mixture into cup", 12.25, 20.0, "3"),
        ("stir mixture", 21.0, 22.0, "2"),
    ]
    assert data.videos[1].steps[0].label == "raise jack"
    assert data.videos[2].steps == () and data.videos[2].url is None
    assert data.without_annotation == [("91515", "vidC")]
    assert [(r.task_id, r.video_id, r.where) for r in data.unknown_task] == [
        ("77777", "vidD", "videos.csv, line 4")
    ]
    assert [r.where for r in data.repeated] == ["videos.csv, line 5"]


def test_missing_parts_of_a_release(tmp_path):
    with pytest.raises(UserError, match="no such folder"):
        read_crosstask(tmp_path / "nothing")
    root = _release(tmp_path / "r")
    (root / "videos.csv").unlink()
    (root / "videos_val.csv").unlink()
    with pytest.raises(UserError, match="no video list"):
        read_crosstask(root)
    (root / "videos.csv").write_text("")
    for name in ("tasks_primary.txt", "tasks_related.txt"):
        (root / name).unlink()
    with pytest.raises(UserError, match="no task file"):
        read_crosstask(root)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "1\nA\nu\n2\na,b\n\n2\nB\nu\n\nx\n",
            r"tasks\.txt, line 7: a task block has 3 lines, expected 5",
        ),
        (
            "1\nA\nu\nsix\na\n",
            r"tasks\.txt, line 4, field 'number of steps': expected a whole number >= 1, got 'six'",
        ),
        (
            "1\nA\nu\n3\na,b\n",
            r"tasks\.txt, line 5, field 'steps': 2 comma-separated step names, expected 3",
        ),
        ("1\nA\nu\n2\na,\n", r"tasks\.txt, line 5, field 'steps': an empty step name"),
        (
            "1\nA\nu\n1\na\n\n1\nB\nu\n1\nb\n",
            r"tasks\.txt, line 7, field 'task id': task 1 is defined twice",
        ),
    ],
)
def test_task_file_mistakes(tmp_path, text, expected):
    path = tmp_path / "tasks.txt"
    path.write_text(text)
    with pytest.raises(InputError, match=expected):
        read_tasks(path)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,5,9\n4,1,2\n", r"a\.csv, line 2, field 'step': expected a step number 1\.\.3, got '4'"),
        ("1.5,5,9\n", r"line 1, field 'step': expected a step number"),
        ("x,5,9\n", r"line 1, field 'step'"),
        ("1,-2,9\n", r"line 1, field 'start': expected a time >= 0 in seconds, got '-2'"),
        (
            "\n1,5,nan\n",
            r"line 2, field 'end': expected a time >= start \(5\) in seconds, got 'nan'",
        ),
        ("1,9,5\n", r"line 1, field 'end': expected a time >= start \(9\)"),
        ("1,9\n", r"line 1: expected 3 comma-separated fields \(step, start, end\), got 2"),
    ],
)
def test_annotation_mistakes(tmp_path, text, expected):
    path = tmp_path / "a.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=expected):
        read_annotation(path, ["a", "b", "c"])


def test_video_list_and_release_mistakes(tmp_path):
    path = tmp_path / "videos.csv"
    path.write_text("1,a,u\n2,b\n")
    with pytest.raises(InputError, match=r"videos\.csv, line 2: expected 3 comma-separated fields"):
        read_video_list(path)
    path.write_text("1, ,u\n")
    with pytest.raises(InputError, match=r"line 1, field 'vid': empty video id"):
        read_video_list(path)
    path.write_bytes(b"1,a,\xff\n")
    with pytest.raises(InputError, match="not UTF-8"):
        read_video_list(path)
    root = _release(tmp_path / "r")
    (root / "annotations" / "40567_vidB.csv").write_text("1,2,3\n3,4,5\n")
    with pytest.raises(
        InputError, match=r"40567_vidB\.csv, line 2, field 'step': expected a step number 1\.\.2"
    ):
        read_crosstask(root)
    (root / "annotations" / "40567_vidB.csv").write_text("1,2,3\n")
    (root / "tasks_related.txt").write_text(PRIMARY.split("\n\n")[1])
    with pytest.raises(InputError, match="task 40567 is also defined in another task file"):
        read_crosstask(root)
