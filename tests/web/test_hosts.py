"""The Host guard parses `Host` strictly before the allow-list (issue 38: "127.0.0.1:8000.evil.com",
"127.0.0.1:8000@evil.com", "127.0.0.1:evil" and "localhost:99999999999" were answered 200)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from fastapi import FastAPI
from fastapi.testclient import TestClient

from tvr.web.hosts import HostGuard, allowed_hosts, parse_host

MALFORMED = [
    "127.0.0.1:8000.evil.com", "127.0.0.1:8000@evil.com", "127.0.0.1:evil", "localhost:99999999999",
    "localhost:0", "localhost:65536", "localhost:", "localhost:+80", "localhost:-1", "localhost:8 0",
    "localhost:80:80", "localhost@evil.com", "evil.com@localhost", "localhost/evil", "localhost.",
    "localhost..", "-localhost", "local host", "localhost\x00", "", ":8000", "[::1", "[::1]x",
    "[::1]:", "[::1]:99999", "[evil.com]", "[::1%25lo]", "::1", "127.0.0.1:80#x", "localhost?x",
    "ｌｏｃａｌｈｏｓｔ", "localhost:８０",
]  # fmt: skip
WELL_FORMED = {
    "localhost": "localhost", "LOCALHOST:8000": "localhost", "127.0.0.1:65535": "127.0.0.1",
    "127.0.0.1:1": "127.0.0.1", "[::1]": "::1", "[::1]:8000": "::1", "lab-pc.example.org:443":
    "lab-pc.example.org", "my_service:80": "my_service", " localhost:8000 ": "localhost",
}  # fmt: skip


@pytest.mark.parametrize("header", MALFORMED)
def test_a_malformed_host_parses_to_none(header):
    assert parse_host(header) is None


@pytest.mark.parametrize(("header", "host"), WELL_FORMED.items())
def test_a_well_formed_host_gives_its_name(header, host):
    assert parse_host(header) == host


def _client(*extra: str) -> TestClient:
    app = FastAPI()

    @app.get("/")
    def index() -> dict:
        return {"ok": True}

    app.add_middleware(HostGuard, allowed=allowed_hosts(extra, "127.0.0.1"))
    return TestClient(app, base_url="http://localhost")


@pytest.mark.parametrize("header", [h for h in MALFORMED if h.isascii() and "\x00" not in h])
@pytest.mark.parametrize("extra", [(), ("*",)])
def test_the_guard_refuses_a_malformed_host_even_with_any_host_allowed(header, extra):
    r = _client(*extra).get("/", headers={"Host": header})
    assert r.status_code == 400 and "answers only to the host names" in r.json()["error"]


def test_the_guard_answers_allowed_hosts_and_refuses_others():
    client = _client("lab.example.org")
    for header in ("localhost:8000", "127.0.0.1:8000", "[::1]:8000", "lab.example.org"):
        assert client.get("/", headers={"Host": header}).status_code == 200, header
    for header in ("evil.com", "evil.com:8000", "127.0.0.2:8000", "lab.example.org.evil.com"):
        assert client.get("/", headers={"Host": header}).status_code == 400, header
    assert _client("*").get("/", headers={"Host": "evil.com:8000"}).status_code == 200


def test_two_host_headers_or_none_are_refused():
    client = _client()
    two = [("host", "localhost:8000"), ("host", "evil.com")]
    assert client.get("/", headers=two).status_code == 400

    async def call(scope_headers):
        sent = []

        async def receive():
            return {"type": "http.request", "body": b""}

        async def send(message):
            sent.append(message)

        guard = HostGuard(client.app, allowed_hosts(()))
        await guard({"type": "http", "headers": scope_headers, "method": "GET", "path": "/"},
                    receive, send)  # fmt: skip
        return sent[0]["status"]

    import asyncio

    assert asyncio.run(call([])) == 400
    assert asyncio.run(call([(b"host", b"localhost"), (b"host", b"localhost")])) == 400
