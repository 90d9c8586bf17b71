"""Hand-made samples for the render tests: a fixed 10-object scene and its final state."""

from __future__ import annotations

import copy

import pytest

from tvr.trance.world.camera import CAMERA_BASE, LIGHT_BASE


def _obj(shape, size, color, material, x, y, rotation=0.0):
    return {
        "shape": shape,
        "size": size,
        "color": color,
        "material": material,
        "position": [x, y],
        "rotation": rotation,
    }


def hand_sample() -> dict:
    """Seven visible objects (footprints 6/4/2 grid units + 1 apart), three in the invisible area.
    Final state: object 0 (red rubber cube) moves out of view (behind.2 puts it at x = 28),
    object 1 (large sphere) turns from blue to yellow."""
    objects = [
        _obj("cube", "medium", "red", "rubber", 8, -8, 30.0),
        _obj("sphere", "large", "blue", "rubber", -2, 4),
        _obj("cylinder", "medium", "green", "metal", 10, 10),
        _obj("sphere", "small", "purple", "metal", 14, 0),
        _obj("cube", "large", "cyan", "glass", -14, -10, 70.0),
        _obj("cylinder", "small", "gray", "rubber", -14, 14),
        _obj("sphere", "medium", "brown", "glass", 2, -16),
        _obj("cube", "small", "yellow", "metal", 30, 30),
        _obj("sphere", "large", "gray", "rubber", -30, 0),
        _obj("cylinder", "medium", "red", "glass", 0, -32),
    ]
    final = copy.deepcopy(objects)
    final[0]["position"] = [28, -8]
    final[1]["color"] = "yellow"
    return {
        "id": "hand",
        "objects": objects,
        "steps": [
            {"obj": 0, "value": "position.behind.2", "attr": "position", "type": "out"},
            {"obj": 1, "value": "color.yellow", "attr": "color"},
        ],
        "final": final,
        "cameras": {k: [v + 0.1 for v in c] for k, c in CAMERA_BASE.items()},
        "lights": {k: [v - 0.2 for v in c] for k, c in LIGHT_BASE.items()},
    }


@pytest.fixture(scope="session")
def sample() -> dict:
    return hand_sample()
