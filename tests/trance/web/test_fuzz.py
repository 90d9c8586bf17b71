"""No input gives a 500: the inputs of issue 15, then every route of both servers (the study and
the viewer with the admin pages) fuzzed by schemathesis against the app's OpenAPI schema,
in process (ASGI), with a bounded number of examples per operation."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.trance.web.helpers import form_token

J = {"Content-Type": "application/json"}
EXAMPLES = 15  # per operation, generation mode and pass


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


def negatable(op: dict) -> bool:
    """Whether an operation has input that can break its schema: a body or a parameter that is
    not any string (a path of strings only has no invalid value; trying costs seconds)."""
    params = op.get("parameters", [])
    return "requestBody" in op or any(p["schema"].get("type") != "string" for p in params)


#: path parameters set to served names in a second pass, so the fuzz also gets past the lookup
SERVED = {"problem": "event", "split": "test"}


def run_fuzz(app, cookies: dict[str, str], examples: int) -> tuple[Counter, list[str]]:
    """Every operation of `app`'s OpenAPI schema with positive and negative examples, its path
    parameters generated and then with `SERVED` ones; (statuses, the 5xx answers and crashes)."""
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from schemathesis import GenerationMode

    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    spec = app.openapi()["paths"]
    statuses: Counter = Counter()
    failures: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()
        names = {p.name for p in operation.path_parameters}
        fixed = {k: v for k, v in SERVED.items() if k in names}
        passes = [None, fixed] if fixed else [None]
        modes = [GenerationMode.POSITIVE]
        if negatable(spec[operation.path][operation.method.lower()]):
            modes.append(GenerationMode.NEGATIVE)
        for mode in modes:
            for path in passes:

                @settings(
                    max_examples=examples,
                    deadline=None,
                    database=None,
                    derandomize=True,
                    phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=list(HealthCheck),
                )
                @given(case=operation.as_strategy(generation_mode=mode, path_parameters=path))
                def check(case) -> None:
                    try:
                        response = case.call(cookies=cookies)
                    except Exception as err:  # the app crashed: a 500 to a browser
                        statuses[500] += 1
                        failures.append(f"{case.method} {case.formatted_path}: {err!r}")
                        return
                    statuses[response.status_code] += 1
                    if response.status_code >= 500:
                        failures.append(
                            f"{case.method} {case.formatted_path}: {response.status_code}"
                        )

                check()
    return statuses, failures


@pytest.mark.slow
def test_fuzz_every_route_without_a_5xx(make_client):
    pytest.importorskip("schemathesis")
    totals: Counter = Counter()
    failures: list[str] = []
    operations = 0
    for options in ({}, {"viewer": True, "admin": True}):
        client = make_client(**options)
        cookies = {}
        if not options:
            started(client)
            cookies["tvr_tester"] = client.cookies["tvr_tester"]
        cookies["tvr_csrf"] = form_token(client)
        operations += len(client.app.openapi()["paths"])
        statuses, bad = run_fuzz(client.app, cookies, examples=EXAMPLES)
        totals.update(statuses)
        failures += bad
    cases = sum(totals.values())
    fives = sum(n for s, n in totals.items() if s >= 500)
    print(
        f"\nschemathesis: {cases} cases, {fives} with a 5xx; statuses {dict(sorted(totals.items()))}"
    )
    assert not failures, failures[:20]
    assert fives == 0 and cases >= 10 * operations
