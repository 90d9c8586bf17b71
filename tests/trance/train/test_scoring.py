"""Validation scores and rewards through the simulator."""

import numpy as np
import pytest

from tvr.trance.train.scoring import basic_scores, event_scores, reward, truncate_at_end
from tvr.trance.world.vocab import VALUE_INDEX


def _state():
    s = np.zeros((10, 6), dtype=np.int64)
    s[:, 0] = np.arange(10) * 8 - 36
    s[:, 1] = -36
    s[:, 2] = 2
    s[0] = [0, 0, 0, 0, 0, 0]  # large gray rubber cube in the centre
    s[1] = [0, 14, 2, 1, 0, 0]  # small red object close by, to the right
    return s


def test_truncate_at_end():
    objs, values = truncate_at_end(np.array([[1, 10, 2]]), np.array([[3, 33, 4]]))
    assert objs.tolist() == [[1, -1, -1]]
    assert values.tolist() == [[3, 33, 33]]


def test_event_scores_correct_loose_and_distance():
    init = _state()
    final = init.copy()
    final[0, 3] = 1  # object 0 became red
    red = VALUE_INDEX["color.red"]
    objs = np.array([[0, 10], [0, 10], [3, 10], [10, 10]])
    values = np.array([[red, 33], [VALUE_INDEX["color.blue"], 33], [red, 33], [33, 33]])
    s = event_scores(np.stack([init] * 4), np.stack([final] * 4), objs, values, np.ones(4))
    assert s.correct.tolist() == [True, False, False, False]
    assert s.distance.tolist() == [0, 1, 2, 1]
    assert s.norm_distance.tolist() == [0.0, 1.0, 2.0, 1.0]


def test_overlapping_step_is_loose_but_not_correct():
    init = _state()
    right1 = VALUE_INDEX["position.right.1"]
    left1 = VALUE_INDEX["position.left.1"]
    # move object 0 right into object 1, then back: same final state, one overlap on the way
    s = event_scores(
        init[None], init[None], np.array([[0, 0]]), np.array([[right1, left1]]), np.array([2])
    )
    assert s.loose.tolist() == [True] and s.correct.tolist() == [False]


def test_basic_scores():
    options = np.zeros((3, 33), dtype=bool)
    options[0, 5] = True
    options[1, [12, 13]] = True
    options[2, 30] = True
    s = basic_scores(np.array([1, 2, 3]), np.array([5, 13, 31]), np.array([1, 2, 0]), options)
    assert s.correct.tolist() == [True, True, False]
    assert s.obj.tolist() == [True, True, False]
    assert s.value.tolist() == [True, True, False]
    assert s.attr.tolist() == [True, True, True]


def test_rewards():
    from tvr.trance.train.scoring import EventScores

    s = EventScores(
        np.array([True, False]), np.array([True, True]), np.array([0, 2]), np.array([0.0, 0.5])
    )
    assert reward("corr", s).tolist() == [1.0, 0.0]
    assert reward("dist", s).tolist() == [0.0, -0.5]
    assert reward("both", s).tolist() == [1.0, -0.5]
    assert reward("corr", s, offset=True).tolist() == [2.0, 1.0]
    assert reward("both", s, offset=True).tolist() == [3.0, 1.5]
    with pytest.raises(ValueError):
        reward("acc", s)
