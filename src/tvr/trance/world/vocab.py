"""The TRANCE vocabulary: attributes, their values, the 33 transformation values and the grid.

Every number here is a fact of the TRANCE world as the papers and the public release define it
(see docs/formats.md). The index order of the 33 values is the one of the released models:
attributes sorted by name, colors 0-7, materials 8-10, positions 11-26, shapes 27-29, sizes 30-32.

Direction names follow the public release: "behind" is +x, which points *towards* the centre
camera (it stands on the +x side). Keep it that way so released labels and tvr labels mean the
same move.
"""

from __future__ import annotations

from typing import Final

from tvr.render.colors import CLEVR_COLOR_RGB

# --- objects and attributes -----------------------------------------------------------------
NUM_OBJECTS: Final = 10
ATTRIBUTES: Final = ("color", "material", "position", "shape", "size")
#: attributes that take a categorical value (position is a grid point)
CATEGORICAL: Final = ("color", "material", "shape", "size")

COLORS: Final = ("gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow")
MATERIALS: Final = ("rubber", "metal", "glass")
SHAPES: Final = ("cube", "sphere", "cylinder")
SIZES: Final = ("large", "medium", "small")
CATEGORIES: Final = {"color": COLORS, "material": MATERIALS, "shape": SHAPES, "size": SIZES}

COLOR_RGB: Final = CLEVR_COLOR_RGB

# --- the integer grid --------------------------------------------------------------------------
GRID_MIN: Final = -40
GRID_MAX: Final = 40
VISIBLE_MIN: Final = -20
VISIBLE_MAX: Final = 20
GRID_UNIT: Final = 0.15  # scene units per grid unit
STEP_UNITS: Final = 10  # grid units per position step
MIN_GAP: Final = 1  # grid units of free space required between two footprints
#: footprint radius per size, in grid units (index = size index)
RADIUS_GRID: Final = (6, 4, 2)
#: footprint radius per size, in scene units (index = size index)
RADIUS_SCENE: Final = (0.9, 0.6, 0.3)

# --- positions: 8 directions x 2 steps -----------------------------------------------------------
#: direction name -> unit vector (x, y) per step, as in the public release
DIRECTION_VECTORS: Final = {
    "front": (-1, 0),
    "behind": (1, 0),
    "left": (0, -1),
    "right": (0, 1),
    "front-left": (-1, -1),
    "front-right": (-1, 1),
    "behind-left": (1, -1),
    "behind-right": (1, 1),
}
DIRECTIONS: Final = tuple(DIRECTION_VECTORS)
STEPS: Final = (1, 2)

# --- the 33 values -------------------------------------------------------------------------------
VALUES: Final = (
    *(f"color.{c}" for c in COLORS),
    *(f"material.{m}" for m in MATERIALS),
    *(f"position.{d}.{s}" for d in DIRECTIONS for s in STEPS),
    *(f"shape.{s}" for s in SHAPES),
    *(f"size.{s}" for s in SIZES),
)
NUM_VALUES: Final = len(VALUES)
VALUE_INDEX: Final = {name: i for i, name in enumerate(VALUES)}
MAX_STEPS: Final = 4
MOVE_TYPES: Final = ("inner", "out", "in")

# --- problems, views and images ---------------------------------------------------------------------
#: the three problems ("settings") of TRANCE: one step, a sequence, a sequence seen from a new view
SETTINGS: Final = ("basic", "event", "view")
#: view keys, as in the release's image names (init.C, fin.L, fin.C, fin.R)
VIEWS: Final = ("L", "C", "R")
VIEW_NAMES: Final = {"L": "left", "C": "center", "R": "right"}
#: the four images of a sample as (stage, view), in the order of the store and of every page
IMAGE_SLOTS: Final = (("init", "C"), ("fin", "L"), ("fin", "C"), ("fin", "R"))


def value_attribute(value: int | str) -> str:
    """The attribute a value belongs to (`color.red` -> `color`)."""
    name = VALUES[value] if isinstance(value, int) else value
    return name.split(".", 1)[0]


def _table() -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    attr, cat, dx, dy = [], [], [], []
    for name in VALUES:
        a, rest = name.split(".", 1)
        attr.append(ATTRIBUTES.index(a))
        if a == "position":
            direction, step = rest.rsplit(".", 1)
            vx, vy = DIRECTION_VECTORS[direction]
            cat.append(-1)
            dx.append(vx * int(step) * STEP_UNITS)
            dy.append(vy * int(step) * STEP_UNITS)
        else:
            cat.append(CATEGORIES[a].index(rest))
            dx.append(0)
            dy.append(0)
    return tuple(attr), tuple(cat), tuple(dx), tuple(dy)


#: per value: attribute index (into ATTRIBUTES), category index (-1 for positions), and the move
VALUE_ATTR, VALUE_CATEGORY, VALUE_DX, VALUE_DY = _table()


def position_value(direction: str, step: int) -> int:
    """Index of the value that moves `step` steps towards `direction`."""
    return VALUE_INDEX[f"position.{direction}.{step}"]


def parse_value(name: str) -> int:
    """Index of a value name; raises KeyError with the known names' shape if unknown."""
    try:
        return VALUE_INDEX[name]
    except KeyError:
        raise KeyError(
            f"unknown value {name!r}: expected one of the 33 names such as 'color.red', "
            "'material.glass', 'shape.cube', 'size.small' or 'position.front-left.1'"
        ) from None
