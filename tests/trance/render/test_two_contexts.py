"""Two raster renderers in one process: each draws with its own OpenGL context, whichever was made
last (issue 41's look tests met the labels' cached renderer drawing into another's context)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("moderngl")

from tvr.trance.render.raster import RasterRenderer
from tvr.trance.render.scene import sample_views


def test_a_renderer_draws_the_same_after_another_is_made(sample):
    desc = sample_views(sample)[1][1]
    first = RasterRenderer("preview")
    before = first.render_mask(desc)
    image_before = first.render_image(desc)
    second = RasterRenderer("preview")
    second.render_mask(sample_views(sample)[0][1])
    assert np.array_equal(first.render_mask(desc), before)
    assert np.array_equal(first.render_image(desc), image_before)
    first.close()
    second.close()
