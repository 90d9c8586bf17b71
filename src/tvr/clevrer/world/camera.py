"""CLEVRER's camera: a CLEVR-like pose at 480x320, projection to pixels and the in-view test.

"Inside the camera view" is decided on the object's centre: an object is in view when its
centre projects inside the 480x320 image (in front of the camera). An "in" event therefore
happens when the centre crosses the image border, while the object is already half visible;
the same test gives `inside_camera_view` in the annotations and the enter/exit events.
"""

from __future__ import annotations

import numpy as np

from tvr.clevrer.vocab import FRAME_HEIGHT, FRAME_WIDTH
from tvr.render.camera import PinholeCamera

# CLEVRER's camera is not published. This is Blender's default camera location, close to the one
# in CLEVR's base_scene.blend (7.48, -6.51, 5.34), aimed at the origin, +z up: the CLEVR view. A
# user who projects the release's annotations with it gets a CLEVR-like, not CLEVRER's, view.
CAMERA_LOCATION: tuple[float, float, float] = (7.36, -6.93, 4.96)

CAMERA = PinholeCamera(location=CAMERA_LOCATION, width=FRAME_WIDTH, height=FRAME_HEIGHT)


def project(points: np.ndarray, camera: PinholeCamera = CAMERA) -> np.ndarray:
    """Pixel coordinates (..., 2), x right and y down, of 3-D points (..., 3)."""
    xy, _ = camera.project(points)
    return xy


def in_view(
    points: np.ndarray, camera: PinholeCamera = CAMERA, margin_px: float = 0.0
) -> np.ndarray:
    """Whether points (..., 3) project inside the image shrunk by `margin_px` on every side.

    A negative margin grows the image (points near but outside the border count as in view).
    Points behind the camera and NaN points are never in view.
    """
    xy, depth = camera.project(points)
    u, v = xy[..., 0], xy[..., 1]
    with np.errstate(invalid="ignore"):
        return (
            (depth > 0)
            & (u >= margin_px)
            & (u < camera.width - margin_px)
            & (v >= margin_px)
            & (v < camera.height - margin_px)
        )


def outside_distance(
    points: np.ndarray, radius: float, camera: PinholeCamera = CAMERA
) -> np.ndarray:
    """How far (pixels) a sphere of `radius` around each point (..., 3) is outside the image.

    Positive: the sphere's whole image (approximated by a disc of radius focal * radius /
    depth around the projected centre) lies that many pixels beyond the nearest image border;
    negative: some of it is in the image. Points behind the camera count as far outside.
    """
    xy, depth = camera.project(points)
    u, v = xy[..., 0], xy[..., 1]
    beyond = np.maximum.reduce([-u, u - camera.width, -v, v - camera.height])
    with np.errstate(divide="ignore", invalid="ignore"):
        r_px = camera.focal_px * radius / depth
        return np.where(depth > 0, beyond - r_px, np.inf)

