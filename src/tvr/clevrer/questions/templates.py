"""The natural-language templates of CLEVRER-style questions and choices, as data.

Written after the released questions' style (the paper's figures 1, 8-11): "How many collisions
happen?", "What shape is the second object to collide with the green object?", "Which of the
following is responsible for the sphere's exiting the scene?", "What will happen next?",
"Without the gray object, which event will not happen?". Placeholders (str.format):
`{obj}`, `{obj2}` an object's noun phrase without the article ("gray cylinder", "metal object"),
`{objs}` a plural set phrase ("metal objects", "spheres", "objects"), `{when}` a moment,
`{event}` an event clause, `{desc}` an object description with its article, `{order}`
first/second/last, `{target}` an explanatory target. Each entry is a tuple of paraphrases; the
builders draw one at random.
"""

from __future__ import annotations

PLURAL_SHAPES: dict[str, str] = {"cube": "cubes", "sphere": "spheres", "cylinder": "cylinders"}

# moments a motion filter is evaluated at ("... when {when}?")
WHEN: dict[str, tuple[str, ...]] = {
    "start": ("the video begins",),
    "end": ("the video ends",),
    "in": ("the {obj} enters the scene",),
    "out": ("the {obj} exits the scene",),
    "collision": ("the {obj} collides with the {obj2}", "the {obj} and the {obj2} collide"),
}

# event clauses for before / after ("... after {event}?")
EVENT: dict[str, tuple[str, ...]] = {
    "in": ("the {obj} enters the scene",),
    "out": ("the {obj} exits the scene",),
    "collision": ("the {obj} collides with the {obj2}", "the collision between the {obj} and the {obj2}"),
}

# descriptive questions by sub-type and family
COUNT: dict[str, tuple[str, ...]] = {
    "collisions": ("How many collisions happen?",),
    "collisions_after": ("How many collisions happen after {event}?",),
    "collisions_before": ("How many collisions happen before {event}?",),
    "collisions_of": ("How many collisions does the {obj} have?",),
    "enter": ("How many {objs} enter the scene?",),
    "exit": ("How many {objs} exit the scene?",),
    "moving": ("How many {objs} are moving when {when}?",),
    "stationary": ("How many {objs} are stationary when {when}?",),
}

EXIST: dict[str, tuple[str, ...]] = {
    "moving": ("Are there any moving {objs} when {when}?",),
    "stationary": ("Are there any stationary {objs} when {when}?",),
    "collisions_after": ("Are there any collisions after {event}?",),
    "collisions_before": ("Are there any collisions before {event}?",),
    "enter_before": ("Are there any {objs} that enter the scene before {event}?",),
    "enter_after": ("Are there any {objs} that enter the scene after {event}?",),
    "exit_before": ("Are there any {objs} that exit the scene before {event}?",),
    "exit_after": ("Are there any {objs} that exit the scene after {event}?",),
    "collide_pair": ("Does the {obj} collide with the {obj2}?", "Do the {obj} and the {obj2} collide?"),
}

# descriptions of the queried object ({desc}); `{objd}` is the object noun of the description,
# which never names the queried attribute
DESCRIPTION: dict[str, tuple[str, ...]] = {
    "enter": ("the {objd} that enters the scene",),
    "exit": ("the {objd} that exits the scene",),
    "enter_order": ("the {order} {objd} to enter the scene",),
    "exit_order": ("the {order} {objd} to exit the scene",),
    "collide": ("the object to collide with the {obj}", "the object that collides with the {obj}"),
    "collide_order": ("the {order} object to collide with the {obj}",),
    "moving": ("the {objd} that is moving when {when}",),
    "stationary": ("the {objd} that is stationary when {when}",),
}

QUERY: dict[str, tuple[str, ...]] = {
    "color": ("What color is {desc}?", "What is the color of {desc}?"),
    "shape": ("What shape is {desc}?", "What is the shape of {desc}?"),
    "material": ("What material is {desc}?", "What is the material of {desc}?",
                 "What is {desc} made of?"),
}

# explanatory questions, their targets and choices
EXPLANATORY: dict[str, tuple[str, ...]] = {
    "responsible": ("Which of the following is responsible for {target}?",),
    "not_responsible": ("Which of the following is not responsible for {target}?",),
}

EXPLANATORY_TARGET: dict[str, tuple[str, ...]] = {
    "collision": ("the collision between the {obj} and the {obj2}",
                  "the {obj}'s colliding with the {obj2}"),
    "out": ("the {obj}'s exiting the scene",),
}

EXPLANATORY_CHOICE: dict[str, tuple[str, ...]] = {
    "collision": ("The collision between the {obj} and the {obj2}",
                  "The {obj}'s colliding with the {obj2}"),
    "in": ("The {obj}'s entering the scene",),
    "object": ("The presence of the {obj}",),
}

# predictive and counterfactual questions; their choices are collisions
PREDICTIVE: tuple[str, ...] = ("What will happen next?", "Which event will happen next?")

COUNTERFACTUAL: dict[str, tuple[str, ...]] = {
    "happen": (
        "What will happen if the {obj} is removed?",
        "What will happen without the {obj}?",
        "Which event will happen if the {obj} is removed?",
        "Without the {obj}, what will happen?",
        "Without the {obj}, which event will happen?",
    ),
    "not_happen": (
        "What will not happen if the {obj} is removed?",
        "Which event will not happen if the {obj} is removed?",
        "Without the {obj}, what will not happen?",
        "Without the {obj}, which event will not happen?",
    ),
}

COLLISION_CHOICE: tuple[str, ...] = ("The {obj} and the {obj2} collide", "The {obj} collides with the {obj2}")


def all_templates() -> list[str]:
    """Every template string above (for checks that each fills without leftover placeholders)."""
    out: list[str] = [*PREDICTIVE, *COLLISION_CHOICE]
    for table in (WHEN, EVENT, COUNT, EXIST, DESCRIPTION, QUERY, EXPLANATORY, EXPLANATORY_TARGET,
                  EXPLANATORY_CHOICE, COUNTERFACTUAL):
        for texts in table.values():
            out.extend(texts)
    return out
