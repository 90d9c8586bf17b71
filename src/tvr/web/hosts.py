"""The Host allow-list of every `tvr serve` app: requests naming another host are refused (DNS rebinding).

A page of another site can make its own name resolve to this machine (DNS rebinding); its
requests then come from the browser with that site's name in `Host` and `Origin`, which the
same-origin guard alone cannot tell from this app's. So every request must name one of the
allowed hosts: the loopback names by default, the address given to `--host` when it is a
specific one, and each `--allowed-host` ("*" allows any, for a server behind a proxy that checks
names itself). Anything else gets 400 before any route runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

LOOPBACK: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")
WILDCARD_BINDS = ("0.0.0.0", "::", "")  # names of every interface

REFUSED = (
    "refused: this server answers only to the host names it was started for "
    "(tvr serve --allowed-host NAME adds one)"
)


def host_name(header: str) -> str:
    """The host of a `Host` header, lower case, without port or IPv6 brackets."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1: header.find("]")] if "]" in header else header[1:]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def allowed_hosts(extra: Iterable[str], bind: str | None = None) -> frozenset[str]:
    """The loopback names, the bind address when specific, and `extra` (lower case)."""
    names = {*LOOPBACK, *(host_name(h) if h != "*" else "*" for h in extra)}
    if bind and bind not in WILDCARD_BINDS:
        names.add(host_name(bind))
    return frozenset(names)


class HostGuard:
    """ASGI middleware: 400 for an HTTP request whose Host is not allowed (or is missing)."""

    def __init__(self, app: Any, allowed: frozenset[str]) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket") or "*" in self.allowed:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        host = host_name(headers.get(b"host", b"").decode("latin-1"))
        if host in self.allowed:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps({"error": REFUSED}).encode()
        await send({"type": "http.response.start", "status": 400,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})
