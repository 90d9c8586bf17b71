"""The program executor: every module on a hand-made video, answers worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from tvr.clevrer.programs import executor as ex
from tvr.clevrer.programs.executor import (
    MODULES,
    ExecutionError,
    Executor,
    ProgramError,
    answer_choice,
    answer_or_error,
    check_program,
    execute,
    program_modules,
)
from tvr.clevrer.programs.facts import Event, Motion, ObjectProps, Run, SceneFacts

# The video (20 shown frames of 30; ids in order):
#   0 red rubber sphere    moves right (2 px/frame) all along, exits at 26 (unseen)
#   1 blue metal cube      rests; hit by 0 at 8, then moves up (1.5 px/frame)
#   2 green rubber cylinder rests; hit by 1 at 12, moves left (1 px/frame) and exits at 16
#   3 gray metal sphere    creeps at 0.14 px/frame (below the threshold); hit by 4 at 24 (unseen),
#                          then moves down
#   4 yellow rubber cube   enters at 5 moving diagonally (1, -1); hits 0 at 14
# Shown events: in4@5, c01@8, c12@12, c04@14, out2@16; unseen: c34@24, out0@26.
# Causes: c12 <- c01; c04 <- c01, in4; out2 <- c12; c34 <- c04; out0 <- c04.
# Without 0: in4@5, c24@15, c34@24 (unseen).  Without 1: in4@5, c02@10, c04@14.
SHOWN = 20
RED, BLUE, GREEN, GRAY, YELLOW = range(5)
IN4 = Event("in", 5, (YELLOW,))
C01 = Event("collision", 8, (RED, BLUE))
C12 = Event("collision", 12, (BLUE, GREEN))
C04 = Event("collision", 14, (RED, YELLOW))
OUT2 = Event("out", 16, (GREEN,))
C34 = Event("collision", 24, (GRAY, YELLOW))
OUT0 = Event("out", 26, (RED,))


def make_motion() -> Motion:
    t, n = 30, 5
    visible = np.ones((t, n), dtype=bool)
    visible[:5, YELLOW] = False
    visible[16:, GREEN] = False
    visible[26:, RED] = False
    vel = np.zeros((t, n, 2))
    vel[:, RED] = (2.0, 0.0)
    vel[8:, BLUE] = (0.0, -1.5)
    vel[12:16, GREEN] = (-1.0, 0.0)
    vel[:, GRAY] = (0.1, 0.1)
    vel[24:, GRAY] = (0.0, 1.0)
    vel[5:, YELLOW] = (1.0, -1.0)
    vel[~visible] = 0.0
    xy = 100.0 + np.cumsum(vel, axis=0)
    return Motion(xy=xy, velocity=vel, visible=visible)


def make_facts(motion: bool = True) -> SceneFacts:
    objects = (
        ObjectProps("red", "rubber", "sphere"),
        ObjectProps("blue", "metal", "cube"),
        ObjectProps("green", "rubber", "cylinder"),
        ObjectProps("gray", "metal", "sphere"),
        ObjectProps("yellow", "rubber", "cube"),
    )
    factual = Run(
        events=(C04, IN4, C01, OUT2, C12, OUT0, C34),  # any order: the executor sorts
        motion=make_motion() if motion else None,
    )
    counterfactual = {
        RED: Run(events=(IN4, Event("collision", 15, (GREEN, YELLOW)), C34)),
        BLUE: Run(events=(IN4, Event("collision", 10, (RED, GREEN)), C04)),
    }
    return SceneFacts(objects, factual, counterfactual, n_shown_frames=SHOWN)


FACTS = make_facts()


def obj(color: str) -> list[str]:
    return ["objects", color, "filter_color", "unique"]


def collision(source: str, a: str, b: str) -> list[str]:
    return [source, *obj(a), "filter_collision", *obj(b), "filter_collision", "unique"]


# open-ended programs and their hand-worked answers
CASES: list[tuple[list[str], str]] = [
    # inputs and count
    (["objects", "count"], "5"),
    (["events", "count"], "5"),
    (["unseen_events", "count"], "2"),
    (["all_events", "count"], "20"),  # 5 ins, 5 outs, 10 pairs
    (["start", "get_frame"], "0"),
    (["end", "get_frame"], "19"),
    (["events", "filter_start", "query_frame"], "0"),
    (["events", "filter_end", "query_frame"], "19"),
    # object filters and queries
    ([*obj("red"), "query_shape"], "sphere"),
    ([*obj("red"), "query_material"], "rubber"),
    (["objects", "cube", "filter_shape", "rubber", "filter_material", "unique", "query_color"],
     "yellow"),
    (["objects", "metal", "filter_material", "count"], "2"),
    (["objects", "sphere", "filter_shape", "count"], "2"),
    (["objects", "purple", "filter_color", "exist"], "no"),
    # motion at the end (19): visible 0,1,3,4; moving 0,1,4
    (["objects", "end", "get_frame", "filter_moving", "count"], "3"),
    # the paper's figure 2: how many metal objects are moving when the video ends?
    (["objects", "metal", "filter_material", "end", "get_frame", "filter_moving", "count"], "1"),
    (["objects", "end", "get_frame", "filter_stationary", "unique", "query_color"], "gray"),
    # at the start (0): 4 not yet visible; only 0 moves
    (["objects", "start", "get_frame", "filter_stationary", "count"], "3"),
    (["objects", "start", "get_frame", "filter_resting", "count"], "3"),
    (["objects", "start", "get_frame", "filter_moving", "unique", "query_color"], "red"),
    # a literal frame: at 10, 0, 1 and 4 move
    (["objects", "10", "filter_stationary", "count"], "2"),
    # null: at some shown frame; gray moves only after frame 20 (unseen), so it is stationary
    (["objects", "null", "filter_moving", "count"], "4"),
    (["objects", "null", "filter_stationary", "unique", "query_color"], "gray"),
    # in / out
    (["events", "objects", "filter_in", "count"], "1"),
    (["events", *obj("yellow"), "filter_in", "unique", "get_frame"], "5"),
    (["objects", "events", *obj("yellow"), "filter_in", "unique", "get_frame", "filter_moving",
      "count"], "2"),
    (["events", "objects", "filter_out", "unique", "get_object", "query_color"], "green"),
    (["unseen_events", "objects", "filter_out", "unique", "query_object", "query_color"], "red"),
    # collisions, order, partner
    (["events", "objects", "filter_collision", "count"], "3"),
    (["events", *obj("blue"), "filter_collision", "count"], "2"),
    (["events", *obj("blue"), "filter_collision", "first", "filter_order", *obj("blue"),
      "get_col_partner", "query_color"], "red"),
    (["events", *obj("blue"), "filter_collision", "second", "filter_order", *obj("blue"),
      "query_collision_partner", "query_shape"], "cylinder"),
    (["events", *obj("red"), "filter_collision", "last", "filter_order", *obj("red"),
      "get_col_partner", "query_color"], "yellow"),
    (["events", "objects", "filter_collision", "first", "filter_order", "get_frame"], "8"),
    # before / after
    (["events", "events", *obj("yellow"), "filter_in", "unique", "filter_after", "objects",
      "filter_collision", "count"], "3"),
    (["events", "events", *obj("yellow"), "filter_in", "unique", "filter_before", "count"], "0"),
    (["events", *collision("events", "blue", "green"), "filter_before", "count"], "2"),
    (["events", "start", "filter_after", "count"], "5"),
    (["events", "start", "filter_before", "count"], "0"),
    (["events", "end", "filter_before", "count"], "5"),
    (["unseen_events", "end", "filter_after", "count"], "2"),
    # ancestors: c04 <- c01, in4
    (["events", *collision("events", "red", "yellow"), "filter_ancestor", "count"], "2"),
    (["events", *collision("events", "blue", "green"), "filter_ancestor", "unique", "get_frame"],
     "8"),
    # counterfactual
    # in4, c24 and c34: a what-if run counts over the factual run's whole horizon, past the video
    ([*obj("red"), "counterfact_events", "count"], "3"),
    (["events", *obj("blue"), "filter_counterfact", "count"], "2"),  # in4 and c04
    (["all_events", *obj("blue"), "get_counterfact", "objects", "filter_collision", "count"], "2"),
    # logic
    (["objects", "gray", "filter_color", "exist"], "yes"),
    (["objects", "gray", "filter_color", "exist", "negate"], "no"),
    ([*obj("red"), "events", "belong_to"], "yes"),
    ([*obj("gray"), "events", "belong_to"], "no"),
    # direction: right, up, left, down
    ([*obj("red"), "3", "query_direction"], "right"),
    ([*obj("blue"), "10", "query_direction"], "up"),
    ([*obj("green"), "13", "query_direction"], "left"),
    ([*obj("gray"), "25", "query_direction"], "down"),
    # the parser's markers
    (["<START>", "objects", "count", "<END>", "objects"], "5"),
    (["objects", "count", "<NULL>"], "5"),
]


@pytest.mark.parametrize(("program", "answer"), CASES, ids=[" ".join(p) for p, _ in CASES])
def test_open_ended(program: list[str], answer: str) -> None:
    assert execute(program, FACTS) == answer


EXPLAIN_OUT2 = ["events", "events", *obj("green"), "filter_out", "unique", "filter_ancestor",
                "belong_to"]
CHOICES: list[tuple[list[str], list[str], str]] = [
    # explanatory: what is responsible for the green cylinder's exit (ancestors c12, c01)
    (collision("events", "red", "blue"), EXPLAIN_OUT2, "correct"),
    (["events", *obj("yellow"), "filter_in", "unique"], EXPLAIN_OUT2, "wrong"),
    (obj("red"), EXPLAIN_OUT2, "correct"),  # red takes part in c01
    (obj("gray"), EXPLAIN_OUT2, "wrong"),
    (obj("yellow"), EXPLAIN_OUT2, "wrong"),
    (obj("red"), [*EXPLAIN_OUT2, "negate"], "wrong"),
    # predictive: c34 happens after the video, c01 during it
    (collision("all_events", "gray", "yellow"), ["unseen_events", "belong_to"], "correct"),
    (collision("all_events", "red", "blue"), ["unseen_events", "belong_to"], "wrong"),
    # counterfactual without red: c24 happens; c34 too, after the video (as predictive questions
    # read the future); c12 not at all
    (collision("all_events", "green", "yellow"),
     ["all_events", *obj("red"), "get_counterfact", "belong_to"], "correct"),
    (collision("all_events", "gray", "yellow"),
     ["all_events", *obj("red"), "get_counterfact", "belong_to"], "correct"),
    (collision("all_events", "blue", "green"),
     ["all_events", *obj("red"), "filter_counterfact", "belong_to"], "wrong"),
    (collision("all_events", "blue", "green"),
     ["all_events", *obj("red"), "filter_counterfact", "belong_to", "negate"], "correct"),
]


@pytest.mark.parametrize(("choice", "question", "answer"), CHOICES)
def test_multiple_choice(choice: list[str], question: list[str], answer: str) -> None:
    assert answer_choice(choice, question, FACTS) == answer


def test_every_module_has_a_case() -> None:
    used = set()
    for program, _ in CASES:
        used.update(program_modules(program))
    for choice, question, _ in CHOICES:
        used.update(program_modules([*choice, *question]))
    assert set(MODULES) - used == set()


def test_aliases_share_handlers() -> None:
    assert MODULES["get_frame"] is MODULES["query_frame"]
    assert MODULES["get_object"] is MODULES["query_object"]
    assert MODULES["get_col_partner"] is MODULES["query_collision_partner"]
    assert MODULES["get_counterfact"] is MODULES["filter_counterfact"]
    assert set(MODULES) >= ex.RELEASE_MODULES
    for name, handler in MODULES.items():
        assert handler.nargs == len(handler.inputs), name
        assert handler.doc, name


def test_events_and_causes_use_the_whole_run() -> None:
    # c34 (unseen) is caused by c04, which is caused by c01 and in4
    run = Executor(FACTS).run(["unseen_events", "objects", "filter_collision", "unique"])
    assert run.kind == "event" and run.data == C34
    ancestors = ["events", *collision("unseen_events", "gray", "yellow"), "filter_ancestor",
                 "count"]
    assert execute(ancestors, FACTS) == "3"


# ---------------------------------------------------------------- not answerable on this video


EXECUTION_ERRORS: list[tuple[list[str], str]] = [
    (["objects", "unique"], "unique at position 1: expects exactly one, got 5"),
    (["events", *obj("green"), "filter_collision", "second", "filter_order", "get_frame"],
     "filter_order at position 7: no second event"),
    (["events", "objects", "filter_collision", "first", "filter_order", "get_object"],
     "not an in or out event"),
    (["events", *obj("yellow"), "filter_in", "unique", *obj("red"), "get_col_partner"],
     "is not a collision"),
    (["events", *obj("blue"), "filter_collision", "first", "filter_order", *obj("green"),
      "get_col_partner"], "object 2 is not in"),
    ([*obj("yellow"), "10", "query_direction"], "diagonally"),
    ([*obj("blue"), "3", "query_direction"], "not moving"),
    ([*obj("green"), "18", "query_direction"], "not visible"),
    ([*obj("red"), "null", "query_direction"], "needs a frame"),
    (["objects", "30", "filter_moving", "count"], "outside the run's motion"),
    ([*obj("gray"), "counterfact_events", "count"], "no counterfactual run without object 3"),
    (["all_events", "first", "filter_order", "get_frame"], "has no frame"),
    (["all_events", "end", "filter_before", "count"], "has no frame"),
    (["events", "start", "filter_ancestor", "count"], "not an event of the video"),
]


@pytest.mark.parametrize(("program", "message"), EXECUTION_ERRORS)
def test_execution_errors(program: list[str], message: str) -> None:
    with pytest.raises(ExecutionError, match=message) as err:
        execute(program, FACTS)
    assert "\n" not in str(err.value)
    assert answer_or_error(program, FACTS) == "error"


def _simultaneous_facts() -> SceneFacts:
    """Red hits blue and green in frame 9, then gray in frame 15."""
    a = Event("collision", 9, (RED, BLUE))
    b = Event("collision", 9, (RED, GREEN))
    c = Event("collision", 15, (RED, GRAY))
    return SceneFacts(FACTS.objects, Run(events=(a, b, c)), n_shown_frames=SHOWN)


def test_order_ties_are_ambiguous() -> None:
    facts = _simultaneous_facts()
    program = ["events", *obj("red"), "filter_collision", "{}", "filter_order", *obj("red"),
               "get_col_partner", "query_color"]

    def with_order(order: str) -> list[str]:
        return [order if t == "{}" else t for t in program]

    with pytest.raises(ExecutionError, match="ambiguous"):
        execute(with_order("first"), facts)
    with pytest.raises(ExecutionError, match="ambiguous"):
        execute(with_order("second"), facts)
    assert execute(with_order("last"), facts) == "gray"


def test_causes_with_simultaneous_events() -> None:
    # object 0 hits 1 and 2 at frame 9, then 3 at 15: both frame-9 collisions cause the third,
    # and neither causes the other
    facts = _simultaneous_facts()
    third = ["events", *collision("events", "red", "gray"), "filter_ancestor", "count"]
    assert execute(third, facts) == "2"
    first = ["events", *collision("events", "red", "blue"), "filter_ancestor", "count"]
    assert execute(first, facts) == "0"


def test_numpy_ids_and_lists() -> None:
    # facts may carry numpy integers and plain lists; answers are the same
    events = tuple(Event(e.kind, np.int64(e.frame), tuple(np.int64(o) for o in e.objects))
                   for e in FACTS.factual.events)
    m = make_motion()
    motion = Motion(xy=m.xy.tolist(), velocity=m.velocity.tolist(), visible=m.visible.tolist())
    facts = SceneFacts(FACTS.objects, Run(events, motion), FACTS.counterfactual, SHOWN)
    for program, answer in CASES:
        assert execute(program, facts) == answer, program


def test_without_motion() -> None:
    facts = make_facts(motion=False)
    assert execute(["end", "get_frame"], facts) == str(SHOWN - 1)
    assert execute(["events", "count"], facts) == "5"
    with pytest.raises(ExecutionError, match="no motion"):
        execute(["objects", "null", "filter_moving", "count"], facts)


def test_end_frame_follows_the_motion() -> None:
    short = make_motion()
    cut = Motion(xy=short.xy[:16], velocity=short.velocity[:16], visible=short.visible[:16])
    facts = SceneFacts(FACTS.objects, Run(events=FACTS.factual.events, motion=cut),
                       n_shown_frames=SHOWN)
    assert execute(["end", "get_frame"], facts) == "15"
    # at 15 green still moves left
    assert execute(["objects", "end", "get_frame", "filter_moving", "count"], facts) == "4"


def test_moving_threshold() -> None:
    assert pytest.approx(0.1 * 480 / 150) == ex.MOVING_SPEED
    # at 5 blue, green and gray (creeping at |(0.1, 0.1)| = 0.141 px/frame) are stationary
    assert execute(["objects", "5", "filter_stationary", "count"], FACTS) == "3"
    motion = make_motion()
    motion.velocity[:24, GRAY] = (0.3, 0.2)  # 0.36 px/frame: moving
    facts = SceneFacts(FACTS.objects, Run(FACTS.factual.events, motion), n_shown_frames=SHOWN)
    assert execute(["objects", "5", "filter_stationary", "count"], facts) == "2"
    assert execute(["objects", "null", "filter_stationary", "count"], facts) == "0"


def test_executor_reuses_facts() -> None:
    facts = make_facts()
    assert ex.executor_for(facts) is ex.executor_for(facts)
    assert ex.executor_for(make_facts()) is not ex.executor_for(facts)


# ---------------------------------------------------------------- malformed programs


MALFORMED: list[tuple[object, str]] = [
    (["objects", "pink", "filter_color"], "position 1: unknown token 'pink'"),
    (["filter_color"], "filter_color at position 0: needs 2 argument"),
    (["objects", "red", "filter_shape"], "filter_shape at position 2: argument 2 must be shape"),
    (["events", "red", "filter_color"], "argument 1 must be objects, got events"),
    (["objects", "unique", "count"], "count at position 2: argument 1 must be events or objects"),
    (["objects", "objects"], "leaves 2 values"),
    ([], "leaves 0 values"),
    (["objects"], "ends with objects, not an answer"),
    (["events", "objects", "filter_collision", "first", "filter_order"], "ends with event"),
    (["objects", "null", "filter_moving", "unique", "null", "query_direction", "negate"],
     "negate at position 6: argument 1 must be bool, got direction"),
    (["start", "get_frame", "negate"], "must be bool, got frame"),
    ("objects count", "a list of tokens"),
    (["objects", 3], "position 1: token 3 is not a string"),
    (["objects", "-3", "filter_moving", "count"], "unknown token '-3'"),
]


@pytest.mark.parametrize(("program", "message"), MALFORMED)
def test_malformed(program: list[str], message: str) -> None:
    with pytest.raises(ProgramError, match=message) as err:
        execute(program, FACTS)
    assert not isinstance(err.value, ExecutionError)
    assert "\n" not in str(err.value)


def test_null_frame_is_no_answer() -> None:
    with pytest.raises(ProgramError, match="ends with frame, not an answer"):
        execute(["null"], FACTS)
    assert execute(["7"], FACTS) == "7"


def test_choice_must_end_yes_no() -> None:
    with pytest.raises(ProgramError, match="yes/no"):
        answer_choice(obj("red"), ["query_color"], FACTS)
    assert answer_or_error(["query_color"], FACTS, choice_program=obj("red")) == "error"
    assert answer_or_error(["objects", "count"], FACTS) == "5"


def test_check_program_types_without_a_video() -> None:
    assert check_program(["objects", "count"]) == "int"
    assert check_program([*obj("red"), "query_color"]) == "color"
    assert check_program(["events", "objects", "filter_in", "unique"]) == "event"
    assert check_program(["all_events", *obj("red"), "get_counterfact"]) == "events"
    assert check_program([*collision("all_events", "red", "blue"), "unseen_events",
                          "belong_to"]) == "bool"
    with pytest.raises(ProgramError, match="unknown token"):
        check_program(["objects", "big", "filter_size"])
    # every case types to the kind of its answer
    for program, answer in CASES:
        kind = check_program(program)
        assert kind in ex.ANSWER_KINDS
        if answer.isdigit():
            assert kind in ("int", "frame")


# ---- readings of the conventions ------------------------------------------------------------
def test_readings_of_the_same_frame_order() -> None:
    from tvr.clevrer.programs.executor import Reading

    facts = _simultaneous_facts()
    # tvr: both frame-9 collisions cause the third; neither causes the other; "first" is a tie
    second = ["events", *collision("events", "red", "green"), "filter_ancestor", "count"]
    first = ["events", *collision("events", "red", "blue"), "filter_ancestor", "count"]
    order = ["events", *obj("red"), "filter_collision", "first", "filter_order",
             *obj("red"), "query_collision_partner", "query_color"]
    assert execute(second, facts) == "0"
    with pytest.raises(ExecutionError, match="ambiguous"):
        execute(order, facts)
    # the released executor takes them one after the other, in the listed order
    listed = Executor(facts, Reading(ties="listed"))
    assert listed.execute(second) == "1" and listed.execute(first) == "0"
    assert listed.execute(order) == "blue"
    # ... and the reverse order reads the other way
    reversed_ = Executor(facts, Reading(ties="reversed"))
    assert reversed_.execute(first) == "1" and reversed_.execute(second) == "0"
    assert reversed_.execute(order) == "green"


def test_readings_of_the_end_frame_and_the_thresholds() -> None:
    from tvr.clevrer.programs.executor import MOVING_SPEED, Reading

    motion = make_motion()
    vel = motion.velocity.copy()
    vel[:, GRAY] = (0.30, 0.0)  # 0.30 px/frame: just below the moving threshold (0.32)
    vel[17:, BLUE] = 0.0  # blue stops at frame 17
    facts = SceneFacts(FACTS.objects, Run(FACTS.factual.events, Motion(motion.xy, vel,
                                                                       motion.visible)),
                       FACTS.counterfactual, SHOWN)
    at_end = ["objects", "end", "get_frame", "filter_moving", "count"]
    assert execute(["end", "get_frame"], facts) == str(SHOWN - 1)
    assert Executor(facts, Reading(end_frame=16)).execute(["end", "get_frame"]) == "16"
    # at the end: red, yellow move (gray creeps); at 16 blue moves too
    assert execute(at_end, facts) == "2"
    assert Executor(facts, Reading(end_frame=16)).execute(at_end) == "3"
    # 15% lower, gray counts as moving
    lower = Executor(facts, Reading(moving_speed=MOVING_SPEED * 0.85))
    assert lower.execute(at_end) == "3"
    # a velocity at 38 degrees from "right" is right; turned 10 degrees it is between sectors
    vel[:, GRAY] = (np.cos(np.radians(38)), -np.sin(np.radians(38)))
    facts = SceneFacts(FACTS.objects, Run(FACTS.factual.events, Motion(motion.xy, vel,
                                                                       motion.visible)))
    direction = [*obj("gray"), "3", "query_direction"]
    assert execute(direction, facts) == "right"
    with pytest.raises(ExecutionError, match="diagonally"):
        Executor(facts, Reading(direction_turn=10.0)).execute(direction)


def test_what_if_runs_reach_as_far_as_the_video_runs() -> None:
    """A what-if run's events count over the factual run's whole horizon: a collision after the
    shown frames happens without the object (counterfactual) as it happens next (predictive)."""
    late = Event("collision", SHOWN + 6, (GRAY, YELLOW))
    facts = SceneFacts(FACTS.objects, Run(events=(C01, late)),
                       {RED: Run(events=(late,))}, n_shown_frames=SHOWN)
    choice = collision("all_events", "gray", "yellow")
    assert answer_choice(choice, ["unseen_events", "belong_to"], facts) == "correct"
    assert answer_choice(choice, ["all_events", *obj("red"), "get_counterfact", "belong_to"],
                         facts) == "correct"
    assert execute([*obj("red"), "counterfact_events", "count"], facts) == "1"
