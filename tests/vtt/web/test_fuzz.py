"""The VTT rating server: no 5xx for any input (schemathesis, then boundary values in every field
and path parameter), and requests naming another host refused (issue 28: `"serving":
9223372036854775808` was a 500, and a rebound `Host: evil.example` was served)."""

from __future__ import annotations

from collections import Counter

import pytest
from fastapi.testclient import TestClient

from tests.web.fuzz import boundary_statuses, rebinding_refused, run_fuzz
from tvr.web.config import ServeConfig
from tvr.web.factory import create_app

SERVED: dict[str, str] = {}


def _started(client: TestClient) -> TestClient:
    assert client.post("/api/start", json={"name": "ann"}).status_code == 200
    return client


def test_a_serving_beyond_a_database_integer_is_a_422_naming_it(make_client):
    client = _started(make_client())
    r = client.post("/api/rating", json={"serving": 9223372036854775808, "fluency": 3})
    assert r.status_code == 422 and "field 'serving'" in r.json()["error"]


def test_boundary_values_give_no_5xx(make_client):
    statuses, failures = boundary_statuses(_started(make_client()), SERVED)
    assert not failures, failures[:10]
    assert sum(statuses.values()) >= 20


def test_dns_rebinding_is_refused(make_client):
    assert rebinding_refused(make_client())


@pytest.mark.slow
def test_fuzz_every_route_without_a_5xx(make_config):
    pytest.importorskip("schemathesis")
    config = make_config()
    config = ServeConfig(**{**config.__dict__, "allowed_hosts": ("testserver",)})
    client = _started(TestClient(create_app(config, "vtt"), base_url="http://testserver"))
    cookies = {"tvr_tester": client.cookies["tvr_tester"]}
    statuses, failures = run_fuzz(client.app, cookies, examples=15)
    cases = sum(statuses.values())
    print(f"\nschemathesis (vtt): {cases} cases, "
          f"{sum(n for s, n in statuses.items() if s >= 500)} with a 5xx; "
          f"statuses {dict(sorted(Counter(statuses).items()))}")  # fmt: skip
    assert not failures, failures[:20]
    assert cases >= 10 * len(client.app.openapi()["paths"])
