"""Answering through the JSON API as a tester would, for the web tests and the load test."""

from __future__ import annotations

import itertools
from typing import Any

from tvr.trance.data.sample import Sample
from tvr.trance.world import vocab

_keys = itertools.count()


def new_key(prefix: str = "key") -> str:
    return f"{prefix}-{next(_keys):08d}"


def right_steps(sample: Sample) -> list[dict[str, Any]]:
    """The reference steps, as the step builder sends them."""
    return [{"obj": s.obj, "attr": s.attr, "value": vocab.VALUES[s.value]} for s in sample.steps]


def wrong_steps(sample: Sample) -> list[dict[str, Any]]:
    """An answer exactly one attribute away from the reference final state (distance 1), that
    breaks no rule: the reference plus a colour change of an object the reference leaves alone;
    with four reference steps, the last colour/material/shape step gets another value instead."""
    steps = right_steps(sample)
    touched = {s.obj for s in sample.steps}
    if len(steps) < vocab.MAX_STEPS:
        obj = next(i for i in range(vocab.NUM_OBJECTS) if i not in touched)
        old = sample.objects[obj]["color"]
        new = next(c for c in vocab.COLORS if c != old)
        return [*steps, {"obj": obj, "attr": "color", "value": f"color.{new}"}]
    for s in reversed(steps):  # the last write of its (object, attribute)
        if s["attr"] in ("color", "material", "shape"):
            others = [c for c in vocab.CATEGORIES[s["attr"]] if f"{s['attr']}.{c}" != s["value"]]
            s["value"] = f"{s['attr']}.{others[0]}"
            return steps
    raise AssertionError(f"sample {sample.id}: no categorical step to change")


def basic_wrong_value(sample: Sample) -> list[dict[str, Any]]:
    """Basic: the right object and attribute with a value outside the accepted options."""
    st = sample.steps[0]
    bad = next(
        v
        for v in range(vocab.NUM_VALUES)
        if vocab.VALUE_ATTR[v] == vocab.VALUE_ATTR[st.value] and v not in st.accepted
    )
    return [{"obj": st.obj, "attr": st.attr, "value": vocab.VALUES[bad]}]


def answer(client, problem: str, nxt: dict[str, Any], steps, key: str | None = None, **extra):
    body = {
        "problem": problem,
        "split": nxt["split"],
        "sample_id": nxt["sample_id"],
        "practice": nxt["practice"],
        "steps": steps,
        "key": key or new_key(),
        "client_seconds": 1.5,
        **extra,
    }
    return client.post("/api/answer", json=body)


def sample_of(catalog, problem: str, nxt: dict[str, Any]) -> Sample:
    sd = catalog.split(problem, nxt["split"])
    return sd.samples[sd.index[nxt["sample_id"]]]


def finish_practice(client, problem: str, split: str) -> dict[str, Any]:
    """Answer the practice samples (with the reference); returns the first test sample."""
    while True:
        nxt = client.get(f"/api/next/{problem}/{split}").json()
        if not nxt["practice"]:
            return nxt
        sample = sample_of(client.app.state.catalog, problem, nxt)
        r = answer(client, problem, nxt, right_steps(sample))
        assert r.status_code == 200, r.text


def form_token(client) -> str:
    """The browser's form token (a page gives it), as the pages put it in every form."""
    if "tvr_csrf" not in client.cookies:
        client.get("/")
    return client.cookies["tvr_csrf"]


def post_form(client, url: str, data: dict[str, Any], **kwargs):
    """A form post as the app's own page sends it: with the browser's form token."""
    return client.post(url, data={**data, "csrf": form_token(client)}, **kwargs)
