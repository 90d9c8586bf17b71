"""The verification servers (verify and admin): no 5xx for any input (schemathesis over the
OpenAPI schema, then boundary values in every field and path parameter), and requests naming
another host refused, as for TRANCE's and VTT's servers."""

from __future__ import annotations

from collections import Counter

import pytest
from fastapi.testclient import TestClient

from tests.trance.web.helpers import form_token
from tests.web.fuzz import boundary_statuses, rebinding_refused, run_fuzz
from tvr.web.factory import create_app

SERVED = {"index": "0", "k": "0"}


def _started(client: TestClient) -> TestClient:
    assert client.post("/api/start", json={"name": "ann"}).status_code == 200
    assert client.get("/api/next").status_code == 200
    return client


@pytest.mark.parametrize("admin", [False, True])
def test_boundary_values_give_no_5xx(make_client, admin):
    client = make_client(admin=admin)
    if not admin:
        _started(client)
    statuses, failures = boundary_statuses(client, SERVED)
    assert not failures, failures[:10]
    assert sum(statuses.values()) >= (10 if admin else 20)  # the admin server takes no bodies


@pytest.mark.parametrize("admin", [False, True])
def test_dns_rebinding_is_refused(make_client, admin):
    assert rebinding_refused(make_client(admin=admin))


@pytest.mark.slow
def test_fuzz_every_route_without_a_5xx(make_config):
    pytest.importorskip("schemathesis")
    totals: Counter = Counter()
    failures: list[str] = []
    operations = 0
    for admin in (False, True):
        config = make_config(admin=admin, allowed_hosts=("testserver",))
        client = TestClient(create_app(config, "visualtrans"), base_url="http://testserver")
        cookies = {}
        if not admin:
            _started(client)
            cookies["tvr_tester"] = client.cookies["tvr_tester"]
            cookies["tvr_csrf"] = form_token(client)
        operations += len(client.app.openapi()["paths"])
        statuses, bad = run_fuzz(client.app, cookies, examples=15, served=SERVED)
        totals.update(statuses)
        failures += bad
    cases = sum(totals.values())
    print(f"\nschemathesis (visualtrans verify): {cases} cases, "
          f"{sum(n for s, n in totals.items() if s >= 500)} with a 5xx; "
          f"statuses {dict(sorted(totals.items()))}")  # fmt: skip
    assert not failures, failures[:20]
    assert cases >= 10 * operations
