"""The viewer's routes (datasets, filtered samples, one sample with its references and the
predictions); served only by a viewer server (`tvr serve --viewer`), never during a study."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markupsafe import Markup

from tvr.trance.data.sample import Sample
from tvr.trance.web import human
from tvr.trance.web.catalog import sample_view
from tvr.trance.web.common import Cat, sample_context, steps_view
from tvr.trance.web.diagram import objects_svg
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab
from tvr.trance.world.simulator import array_to_objects
from tvr.web.deps import Config, CurrentTester
from tvr.web.responses import PageError, render

router = APIRouter()


@router.get("/", include_in_schema=False)
def home() -> Response:
    """A viewer server's start page is the viewer (the human test is not served here)."""
    return RedirectResponse("/viewer", status_code=303)


@router.get("/viewer", response_class=HTMLResponse)
def viewer_index(request: Request, tester: CurrentTester) -> HTMLResponse:
    return render(request, "viewer_index.html", tester=tester)


def matches(s: Sample, steps: str, move: str, attr: str) -> bool:
    """Whether a sample passes the viewer's filters (empty = any)."""
    if steps and str(len(s.steps)) != steps:
        return False
    if move and not any(st.move_type == move for st in s.steps):
        return False
    return not (attr and not any(st.attr == attr for st in s.steps))


@router.get("/viewer/{problem}/{split}", response_class=HTMLResponse)
def viewer_list(
    request: Request,
    problem: str,
    split: str,
    catalog: Cat,
    config: Config,
    tester: CurrentTester,
    steps: str = "",
    move: str = "",
    attr: str = "",
    page: int = 1,
) -> Response:
    sd = catalog.split(problem, split)
    if sd is None:
        raise PageError(f"no dataset {problem}/{split} on this server", 404)
    steps = steps if steps in {str(k) for k in range(1, vocab.MAX_STEPS + 1)} else ""
    move = move if move in vocab.MOVE_TYPES else ""
    attr = attr if attr in vocab.ATTRIBUTES else ""
    hits = [i for i, s in enumerate(sd.samples) if matches(s, steps, move, attr)]
    pages = max(1, -(-len(hits) // config.page_size))
    page_no = min(max(page, 1), pages)
    shown = hits[(page_no - 1) * config.page_size : page_no * config.page_size]
    items = [
        {
            "index": i,
            "sample": sd.samples[i],
            "view": sample_view(problem, sd.samples[i]),
            "steps": steps_view([(st.obj, st.value) for st in sd.samples[i].steps]),
        }
        for i in shown
    ]
    return render(
        request,
        "viewer_list.html",
        tester=tester,
        problem=problem,
        sd=sd,
        items=items,
        hits=len(hits),
        page_no=page_no,
        pages=pages,
        f={"steps": steps, "move": move, "attr": attr},
        models=[p.name for p in catalog.predictions_for(problem, split)],
    )


def marks(state, final) -> list[list[str]]:
    """Per object, the attributes marked red: those the distance counts as different
    (`simulator.attribute_differences`; two hidden positions are equal), so the marks and the
    distance never disagree."""
    diff = world.attribute_differences(state, final)
    return [[a for a, d in zip(world.DIFF_ATTRIBUTES, row, strict=True) if d] for row in diff]


@router.get("/viewer/{problem}/{split}/{index}", response_class=HTMLResponse)
def viewer_sample(
    request: Request, problem: str, split: str, index: int, catalog: Cat, tester: CurrentTester
) -> Response:
    sd = catalog.split(problem, split)
    if sd is None or not 0 <= index < len(sd):
        raise PageError(f"no sample {index} in {problem}/{split}", 404)
    s = sd.sample(index)
    view = sample_view(problem, s)
    ctx = sample_context(problem, sd, index, view)
    final = world.objects_to_array(s.final)
    changed = marks(s.initial_array, final)
    preds = []
    for pset in catalog.predictions_for(problem, split):
        for (sid, pview), steps in pset.steps.items():
            if sid != s.id:
                continue
            d = human.score_answer(problem, s, steps)
            state, _ = world.apply_steps(s.initial_array, steps)
            rot = [o.get("rotation", 0.0) for o in s.objects]
            sim = array_to_objects(state, rot)
            diff = marks(state, final)
            preds.append(
                {
                    "name": pset.name,
                    "view": pview,
                    "steps": steps_view(steps),
                    "d": d,
                    "sim": sim,
                    "diff": diff,
                    "diagram": Markup(objects_svg(sim, {i for i, x in enumerate(diff) if x})),
                }
            )
    return render(
        request,
        "viewer_sample.html",
        tester=tester,
        problem=problem,
        reference=steps_view([(st.obj, st.value) for st in s.steps]),
        ref_steps=s.steps,
        final_diagram=Markup(objects_svg(s.final, {i for i, x in enumerate(changed) if x})),
        final_diff=changed,
        preds=preds,
        prev_index=index - 1 if index > 0 else None,
        next_index=index + 1 if index + 1 < len(sd) else None,
        **ctx,
    )
