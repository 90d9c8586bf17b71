"""The viewer's routes: the list of videos, one video's page, and its mp4."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from tvr.clevrer.data.events import annotation_events
from tvr.clevrer.vocab import SHOWN_FRAMES
from tvr.clevrer.web.catalog import ClevrerSet
from tvr.clevrer.web.graph import layout
from tvr.clevrer.world.events import causal_graph
from tvr.web.errors import PageError
from tvr.web.files import file_response

router = APIRouter()
PAGE_SIZE = 50


def _set(request: Request, k: int) -> ClevrerSet:
    sets: list[ClevrerSet] = request.app.state.clevrer_sets
    if not 0 <= k < len(sets):
        raise PageError(f"no set {k}", 404)
    return sets[k]


@router.get("/", response_class=HTMLResponse)
def index(request: Request, page: int = 0) -> HTMLResponse:
    sets: list[ClevrerSet] = request.app.state.clevrer_sets
    rows = []
    for k, s in enumerate(sets):
        for i in s.indices:
            q = s.questions.get(i)
            rows.append({"set": k, "root": s.root, "index": i, "split": s.split.get(i, ""),
                         "video": i in s.videos, "questions": len(q.questions) if q else 0})
    pages = max(1, -(-len(rows) // PAGE_SIZE))
    if not 0 <= page < pages:
        raise PageError(f"no page {page} (pages 0..{pages - 1})", 404)
    shown = rows[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]
    return request.app.state.templates.TemplateResponse(
        request, "clevrer_index.html",
        {"rows": shown, "page": page, "pages": pages, "total": len(rows)},
    )  # fmt: skip


@router.get("/video/{k}/{index}", response_class=HTMLResponse)
def video_page(request: Request, k: int, index: int) -> HTMLResponse:
    s = _set(request, k)
    if index not in s.indices:
        raise PageError(f"{s.root}: no video {index}", 404)
    ann = s.annotation(index)
    events, objects, graph, drawing = [], [], None, None
    if ann is not None:
        events = annotation_events(ann)
        objects = [f"{o.color} {o.material} {o.shape}" for o in ann.object_property]
        graph = causal_graph(events)
        last = max([SHOWN_FRAMES - 1, *(e.frame for e in events)])
        drawing = layout(events, objects, last)
    q = s.questions.get(index)
    return request.app.state.templates.TemplateResponse(
        request, "clevrer_video.html",
        {"k": k, "index": index, "root": s.root, "split": s.split.get(index, ""),
         "has_video": index in s.videos, "objects": objects, "events": events, "graph": graph,
         "drawing": drawing, "questions": q.questions if q else [], "shown": SHOWN_FRAMES},
    )  # fmt: skip


@router.get("/media/{k}/{index}.mp4")
def video_file(request: Request, k: int, index: int) -> Response:
    """The scene's video: an MP4 by content, under the set's folder once resolved."""
    s = _set(request, k)
    path = s.videos.get(index)
    if path is None:
        raise PageError(f"{s.root}: no video file for scene {index}", 404)
    relative = path.relative_to(s.root).as_posix()
    return file_response((s.root,), relative, ("mp4",), missing="no such video")
