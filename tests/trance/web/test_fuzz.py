"""No input gives a 500: the inputs of issue 15, then every route of both servers (the study and
the viewer with the admin pages) fuzzed by schemathesis against the app's OpenAPI schema,
in process (ASGI), with a bounded number of examples per operation."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.trance.web.helpers import form_token
from tests.web.fuzz import boundary_statuses, rebinding_refused, run_fuzz

J = {"Content-Type": "application/json"}
EXAMPLES = 15  # per operation, generation mode and pass
#: path parameters set to served names in a second pass, so the fuzz also gets past the lookup
SERVED = {"problem": "event", "split": "test"}


def started(client) -> dict:
    assert client.post("/api/start", json={"name": "ann"}).status_code == 200
    return client.get("/api/next/event/test").json()


def test_a_deep_json_array_is_a_400(make_client):
    client = make_client()
    started(client)
    raw = b'{"problem": "event", "steps": ' + b"[" * 10_000 + b"]" * 10_000 + b"}"
    r = client.post("/api/answer", content=raw, headers=J)
    assert r.status_code == 400 and "nested deeper" in r.json()["error"]


@pytest.mark.parametrize("field", ["problem", "split"])
@pytest.mark.parametrize("value", [["event"], {"a": 1}, 5, None])
def test_a_field_of_the_wrong_type_is_a_422_naming_it(make_client, field, value):
    client = make_client()
    nxt = started(client)
    body = {
        "problem": "event",
        "split": nxt["split"],
        "sample_id": nxt["sample_id"],
        "steps": [],
        "key": "key-00000001",
        field: value,
    }
    r = client.post("/api/answer", json=body)
    assert r.status_code == 422 and f"field {field!r}" in r.json()["error"]


@pytest.mark.parametrize(
    "index", ["%C2%B2", "%D9%A3", "%EF%BC%91", "1_0", "+1", " 1", "0x1", "1e3"]
)
def test_an_image_index_that_is_not_ascii_digits_is_a_404(make_client, index):
    r = make_client().get(f"/img/event/test/{index}/fin/C.png")
    assert (r.status_code, r.text) == (404, "no such image")


@pytest.mark.slow
def test_fuzz_every_route_without_a_5xx(make_client):
    pytest.importorskip("schemathesis")
    totals: Counter = Counter()
    failures: list[str] = []
    operations = 0
    for options in ({}, {"viewer": True, "admin": True}):
        # schemathesis's in-process client names the host "testserver"
        client = make_client(**options, allowed_hosts=("testserver",))
        cookies = {}
        if not options:
            started(client)
            cookies["tvr_tester"] = client.cookies["tvr_tester"]
        cookies["tvr_csrf"] = form_token(client)
        operations += len(client.app.openapi()["paths"])
        statuses, bad = run_fuzz(client.app, cookies, examples=EXAMPLES, served=SERVED)
        totals.update(statuses)
        failures += bad
    cases = sum(totals.values())
    fives = sum(n for s, n in totals.items() if s >= 500)
    print(
        f"\nschemathesis: {cases} cases, {fives} with a 5xx; statuses {dict(sorted(totals.items()))}"
    )
    assert not failures, failures[:20]
    assert fives == 0 and cases >= 10 * operations


@pytest.mark.parametrize("options", [{}, {"viewer": True, "admin": True}])
def test_boundary_values_in_every_body_and_path_give_no_5xx(make_client, options):
    """2^63, -1, 100,000-character strings and deep JSON in every field and path parameter
    (issue 28: "serving": 2^63 was a 500 in VTT's server)."""
    client = make_client(**options)
    if not options:
        started(client)
    statuses, failures = boundary_statuses(client, SERVED)
    assert not failures, failures[:10]
    assert sum(statuses.values()) >= 20


@pytest.mark.parametrize("options", [{}, {"viewer": True, "admin": True}])
def test_dns_rebinding_is_refused(make_client, options):
    assert rebinding_refused(make_client(**options))
