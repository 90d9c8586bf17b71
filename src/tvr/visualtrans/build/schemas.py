"""The metadata of one episode, one pydantic schema per scene family, and their validation.

A vision-language model's reply (or a line of a human `--metadata` file) is read into the
schema of its scene's family; a fault is one line naming the file, the line and the field
(`InputError`), or for a model reply the reason recorded beside the failed episode.

Scene families (which scenes share a schema and a prompt):

* `stack`: objects stacked in layers (build_unstack_lego, assemble_disassemble_legos,
  stack_unstack_bowls, make_sandwich: a sandwich is a stack of ingredients). `spread_order` is the objects left to right (from the camera) when they
  are not stacked, `closest` the one nearest the camera then, `stack` the stack bottom to top,
  `steps` the placements that build it, in order, and `direction` whether the video builds
  (`stack`) or takes it apart (`unstack`).
* `rack`: four objects in a 2 x 2 layout whose places change (insert_remove_cups_from_rack):
  the object at each quadrant before and after.
* `row`: objects in a left-to-right row whose order may change (insert_remove_bookshelf).
* `board`: discs dropped into a grid (play_reset_connect_four): the moves, row 1 the bottom
  row, column 1 the leftmost.
* `food`: items moved between a plate and a basket (pick_place_food).
* `beads`: beads grouped by colour (sort_beads): the groups of two or more beads of one colour
  before and after.
* `lids`: cups whose lids are put on or taken off (add_remove_lid).
* `sequence`: an ordered list of manipulations (setup_cleanup_table,
  screw_unscrew_fingers_fixture).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tvr.core.errors import InputError

#: scene -> its family
SCENE_FAMILY: dict[str, str] = {
    "build_unstack_lego": "stack",
    "assemble_disassemble_legos": "stack",
    "stack_unstack_bowls": "stack",
    "insert_remove_cups_from_rack": "rack",
    "insert_remove_bookshelf": "row",
    "play_reset_connect_four": "board",
    "pick_place_food": "food",
    "sort_beads": "beads",
    "add_remove_lid": "lids",
    "make_sandwich": "stack",
    "setup_cleanup_table": "sequence",
    "screw_unscrew_fingers_fixture": "sequence",
}
FAMILIES = tuple(dict.fromkeys(SCENE_FAMILY.values()))
QUADRANTS = ("top-left", "top-right", "bottom-right", "bottom-left")  # clockwise


class _Meta(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    scene: str
    episode: str


def _distinct(names: list[str], what: str) -> None:
    if len(set(names)) != len(names):
        raise ValueError(f"{what} names an object twice")


class Placement(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    object: str = Field(min_length=1)
    onto: str = Field(min_length=1, description="an object's name, or 'surface'")


class StackMeta(_Meta):
    family: Literal["stack"] = "stack"
    direction: Literal["stack", "unstack"]
    objects: list[str] = Field(min_length=2)
    spread_order: list[str] = Field(min_length=2)
    closest: str | None = None
    stack: list[str] = Field(min_length=2)
    steps: list[Placement] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> StackMeta:
        _distinct(self.objects, "objects")
        known = set(self.objects)
        for what, names in (("spread_order", self.spread_order), ("stack", self.stack)):
            _distinct(names, what)
            unknown = [n for n in names if n not in known]
            if unknown:
                raise ValueError(f"{what} names {unknown[0]!r}, not in objects")
        if self.closest is not None and self.closest not in known:
            raise ValueError(f"closest {self.closest!r} is not in objects")
        for step in self.steps:
            if step.object not in known or (step.onto != "surface" and step.onto not in known):
                raise ValueError(f"step {step.object!r} onto {step.onto!r} names an unknown object")
        return self


class RackMeta(_Meta):
    family: Literal["rack"] = "rack"
    objects: list[str] = Field(min_length=4, max_length=4)
    before: dict[Literal["top-left", "top-right", "bottom-right", "bottom-left"], str]
    after: dict[Literal["top-left", "top-right", "bottom-right", "bottom-left"], str]

    @model_validator(mode="after")
    def _consistent(self) -> RackMeta:
        _distinct(self.objects, "objects")
        for what, places in (("before", self.before), ("after", self.after)):
            if set(places) != set(QUADRANTS) or sorted(places.values()) != sorted(self.objects):
                raise ValueError(f"{what} must place each of the 4 objects at one quadrant")
        return self


class RowMeta(_Meta):
    family: Literal["row"] = "row"
    objects: list[str] = Field(min_length=3, max_length=3)
    initial_order: list[str] = Field(min_length=3, max_length=3)
    final_order: list[str] = Field(min_length=3, max_length=3)

    @model_validator(mode="after")
    def _consistent(self) -> RowMeta:
        _distinct(self.objects, "objects")
        for what, names in (("initial_order", self.initial_order),
                            ("final_order", self.final_order)):  # fmt: skip
            if sorted(names) != sorted(self.objects):
                raise ValueError(f"{what} must order exactly the objects")
        return self


class Move(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    color: str = Field(min_length=1)
    row: int = Field(ge=1, le=6)
    column: int = Field(ge=1, le=7)


class BoardMeta(_Meta):
    family: Literal["board"] = "board"
    moves: list[Move] = Field(min_length=1)


class FoodMeta(_Meta):
    family: Literal["food"] = "food"
    plate_before: list[str]
    plate_after: list[str]
    basket_before: list[str]
    basket_after: list[str]

    @model_validator(mode="after")
    def _consistent(self) -> FoodMeta:
        """An item is in one place at a time, and one taken from the plate or the basket is
        put somewhere (the scene moves food between the two)."""
        for when, plate, basket in (("before", self.plate_before, self.basket_before),
                                    ("after", self.plate_after, self.basket_after)):  # fmt: skip
            both = [n for n in plate if n in basket]
            if both:
                raise ValueError(f"{both[0]!r} is both on the plate and in the basket {when}")
        placed = set(self.plate_after) | set(self.basket_after)
        lost = [n for n in [*self.plate_before, *self.basket_before] if n not in placed]
        if lost:
            raise ValueError(f"{lost[0]!r} is taken from the plate or the basket and placed "
                             "nowhere (neither in plate_after nor in basket_after)")  # fmt: skip
        return self


class BeadsMeta(_Meta):
    family: Literal["beads"] = "beads"
    colors: list[str] = Field(min_length=1)
    groups_before: int = Field(ge=0)
    groups_after: int = Field(ge=0)


class Cup(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    name: str = Field(min_length=1)
    lid_before: bool
    lid_after: bool


class LidsMeta(_Meta):
    family: Literal["lids"] = "lids"
    cups: list[Cup] = Field(min_length=1)


class Operation(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    object: str = Field(min_length=1)
    operation: str = Field(min_length=1)


class SequenceMeta(_Meta):
    family: Literal["sequence"] = "sequence"
    steps: list[Operation] = Field(min_length=2)


SCHEMAS: dict[str, type[_Meta]] = {
    "stack": StackMeta, "rack": RackMeta, "row": RowMeta, "board": BoardMeta,
    "food": FoodMeta, "beads": BeadsMeta, "lids": LidsMeta, "sequence": SequenceMeta,
}  # fmt: skip

Metadata = (StackMeta | RackMeta | RowMeta | BoardMeta | FoodMeta | BeadsMeta | LidsMeta
            | SequenceMeta)  # fmt: skip


def family_of(scene: str) -> str:
    """The scene family of a scene (KeyError for a scene outside the 12)."""
    return SCENE_FAMILY[scene]


def _location(err: ValidationError) -> tuple[str, str]:
    """(field path, message) of a ValidationError's first error."""
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first.get("loc", ())) or "(record)"
    return loc, str(first.get("msg", "invalid"))


def validate_metadata(raw: Any, scene: str, episode: str | None = None) -> Metadata:
    """`raw` (a dict) as the metadata of its scene's family; ValueError "field: message"."""
    if not isinstance(raw, dict):
        raise ValueError(f"(record): expected a JSON object, got {type(raw).__name__}")
    data = dict(raw)
    data.setdefault("scene", scene)
    if episode is not None:
        data.setdefault("episode", episode)
    if data["scene"] != scene:
        raise ValueError(f"scene: {data['scene']!r} is not this episode's scene {scene!r}")
    family = SCENE_FAMILY.get(scene)
    if family is None:
        raise ValueError(f"scene: {scene!r} is not one of the 12 scenes")
    data.setdefault("family", family)
    try:
        return SCHEMAS[family].model_validate(data)  # type: ignore[return-value]
    except ValidationError as err:
        loc, msg = _location(err)
        raise ValueError(f"{loc}: {msg}") from None


def read_human_metadata(path: str | Path) -> dict[str, Metadata]:
    """A `--metadata` file (JSON lines, one episode each, with `scene` and `episode`) validated
    like a model's reply: episode -> metadata; InputError naming the file, line and field."""
    from tvr.core.jsonl import iter_jsonl

    out: dict[str, Metadata] = {}
    for line_no, record in iter_jsonl(path):
        if not isinstance(record, dict):
            raise InputError(path, line_no, None, "expected a JSON object")
        for name in ("scene", "episode"):
            if not isinstance(record.get(name), str):
                raise InputError(path, line_no, name, "missing (a string)")
        try:
            meta = validate_metadata(record, record["scene"], record["episode"])
        except ValueError as err:
            field, _, message = str(err).partition(": ")
            raise InputError(path, line_no, field, message) from None
        if meta.episode in out:
            raise InputError(path, line_no, "episode", f"{meta.episode!r} is given twice")
        out[meta.episode] = meta
    return out


def parse_reply_json(text: str) -> Any:
    """The JSON object of a model's reply: the whole text, or the first ```json fenced block,
    or the text from the first `{` to the last `}`; ValueError if none parses."""
    import json
    import re

    candidates = [text.strip()]
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        candidates.append(fence.group(1).strip())
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{") : text.rindex("}") + 1])
    for c in candidates:
        try:
            return json.loads(c)
        except (ValueError, TypeError):
            continue
    raise ValueError("(reply): no JSON object in the reply")
