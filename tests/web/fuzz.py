"""Shared fuzzing of `tvr serve` apps: schemathesis over the OpenAPI schema, boundary values in
every body field and path parameter, and the DNS-rebinding request (imported by each server's
tests)."""

from __future__ import annotations

import re
from collections import Counter

BOUNDARY_VALUES: tuple[object, ...] = (2**63, -(2**63) - 1, -1, 0, 1e308, "x" * 100_000, "",
                                      [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
                                      None, True)  # fmt: skip
BOUNDARY_SEGMENTS: tuple[str, ...] = ("9223372036854775808", "-1", "x" * 5000, "%00", "..")


def negatable(op: dict) -> bool:
    """Whether an operation has input that can break its schema: a body or a parameter that is
    not any string (a path of strings only has no invalid value; trying costs seconds)."""
    params = op.get("parameters", [])
    return "requestBody" in op or any(p["schema"].get("type") != "string" for p in params)


def run_fuzz(app, cookies: dict[str, str], examples: int,
             served: dict[str, str] | None = None) -> tuple[Counter, list[str]]:
    """Every operation of `app`'s OpenAPI schema with positive and negative examples, its path
    parameters generated and then with `served` ones; (statuses, the 5xx answers and crashes).
    The app must allow the host "testserver" (schemathesis's in-process client)."""
    served = served or {}
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
        fixed = {k: v for k, v in served.items() if k in names}
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




def _paths(client, served: dict[str, str]) -> list[tuple[str, str, dict]]:
    """(method, path template, operation) of every operation of the client's app."""
    out = []
    for path, ops in client.app.openapi()["paths"].items():
        for method, op in ops.items():
            out.append((method.upper(), path, op))
    return out


def _fill(path: str, served: dict[str, str], default: str = "0") -> str:
    return re.sub(r"{(\w+)}", lambda m: served.get(m.group(1), default), path)


def boundary_statuses(client, served: dict[str, str]) -> tuple[Counter, list[str]]:
    """Every JSON body field of every operation set to each `BOUNDARY_VALUES` (the others left
    out), and every path parameter set to each `BOUNDARY_SEGMENTS`; (statuses, the 5xx)."""
    statuses: Counter = Counter()
    failures: list[str] = []

    def call(method: str, url: str, **kw) -> None:
        try:
            r = client.request(method, url, **kw)
        except Exception as err:  # a crash is a 500 to a browser
            statuses[500] += 1
            failures.append(f"{method} {url[:80]} {kw.get('json', '')!r:.80}: {err!r}")
            return
        statuses[r.status_code] += 1
        if r.status_code >= 500:
            failures.append(f"{method} {url[:80]} {kw.get('json', '')!r:.80}: {r.status_code}")

    for method, path, op in _paths(client, served):
        url = _fill(path, served)
        body = op.get("requestBody", {}).get("content", {}).get("application/json")
        if body is not None:
            schema = body.get("schema", {})
            for name in schema.get("properties", {}):
                for value in BOUNDARY_VALUES:
                    call(method, url, json={name: value})
        for name in re.findall(r"{(\w+)}", path):
            for segment in BOUNDARY_SEGMENTS:
                call(method, _fill(path, {**served, name: segment}))
    return statuses, failures


def rebinding_refused(client) -> bool:
    """Whether every operation answers 400 to a request naming another host (with the Origin
    a rebound page sends), and the same request naming localhost is not refused so."""
    evil = {"Host": "evil.example:8000", "Origin": "http://evil.example:8000"}
    for method, path, _ in _paths(client, {}):
        url = _fill(path, {})
        r = client.request(method, url, headers=evil, json={} if method == "POST" else None)
        if r.status_code != 400 or "answers only to the host names" not in r.text:
            return False
    r = client.get("/", headers={"Host": "localhost:8000"})
    return r.status_code != 400
