"""The pictures of the served datasets; a study server serves only those a test shows."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse, Response

from tvr.trance.web.catalog import STAGES, sample_view
from tvr.trance.web.common import Cat
from tvr.trance.world.vocab import VIEWS
from tvr.web.deps import Config
from tvr.web.files import file_response

router = APIRouter()


def _index(text: str, size: int) -> int | None:
    """A sample index of the path: ASCII digits only (`int` also reads '²', '١' and '1_0')."""
    if not (text.isascii() and text.isdigit()) or len(text) > 12:
        return None
    i = int(text)
    return i if i < size else None


@router.get("/img/{problem}/{split}/{index}/{stage}/{view_file}")
def image(
    problem: str, split: str, index: str, stage: str, view_file: str, catalog: Cat, config: Config
) -> Response:
    """An image by (problem, split, sample index, stage, view); never a path from the request.
    Without --viewer only the two a test shows: the initial centre view and the final view
    of the sample (in View, the one the dataset drew), so no other view of a final state leaks."""
    sd = catalog.split(problem, split)
    view = view_file.removesuffix(".png")
    i = _index(index, len(sd)) if sd is not None else None
    if (
        i is None
        or stage not in STAGES
        or view not in VIEWS
        or (stage == "init" and view != "C")
        or (not config.viewer and stage == "fin" and view != sample_view(problem, sd.sample(i)))
    ):
        return PlainTextResponse("no such image", status_code=404)
    # sent only when it is a PNG under the dataset's folder once resolved (tvr.web.files)
    root = catalog.roots[problem]
    path = Path(sd.store.image_path(i, stage, view))
    return file_response(
        (root,),
        path.relative_to(root).as_posix(),
        ("png",),
        headers={"Cache-Control": "private, max-age=3600"},
        missing="image missing on the server",
    )
