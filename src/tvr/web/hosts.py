"""The Host allow-list of every `tvr serve` app: requests naming another host are refused (DNS rebinding).

A page of another site can make its own name resolve to this machine (DNS rebinding); its
requests then come from the browser with that site's name in `Host` and `Origin`, which the
same-origin guard alone cannot tell from this app's. So every request must name one of the
allowed hosts: the loopback names by default, the address given to `--host` when it is a
specific one, and each `--allowed-host` ("*" allows any, for a server behind a proxy that checks
names itself). Anything else gets 400 before any route runs.

The header is parsed strictly first (`parse_host`): a host (a DNS name, an IPv4 address or a
bracketed IPv6 address) and an optional port of digits in 1..65535, nothing else; a malformed
one ("127.0.0.1:8000.evil.com", "127.0.0.1:8000@evil.com", "127.0.0.1:evil",
"localhost:99999999999"), two Host headers or none get 400 even with "*".
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterable
from typing import Any

LOOPBACK: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")
WILDCARD_BINDS = ("0.0.0.0", "::", "")  # names of every interface

REFUSED = (
    "refused: this server answers only to the host names it was started for "
    "(tvr serve --allowed-host NAME adds one)"
)


#: one label of a DNS name (letters, digits, hyphens not at either end; "_" as some hosts use)
_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")
_PORT = re.compile(r"[0-9]{1,5}")


def parse_host(header: str) -> str | None:
    """The host of a `Host` header (lower case, an IPv6 address without brackets), or None when
    the header is not exactly `host` or `host:port` (a DNS name, IPv4 or [IPv6]; port 1..65535)."""
    text = header.strip(" \t").lower()
    if text.startswith("["):
        end = text.find("]")
        host, rest = text[1:end], text[end + 1 :]
        if end < 0 or not _is_ipv6(host):
            return None
    else:
        host, colon, port = text.partition(":")
        rest = colon + port
        if not (_is_ipv4(host) or _is_name(host)):
            return None
    if rest:
        port = rest[1:]
        if not (rest.startswith(":") and _PORT.fullmatch(port) and 1 <= int(port) <= 65535):
            return None
    return host


def _is_ipv6(text: str) -> bool:
    try:
        return "%" not in text and ipaddress.IPv6Address(text) is not None
    except ValueError:
        return False


def _is_ipv4(text: str) -> bool:
    try:
        return ipaddress.IPv4Address(text) is not None
    except ValueError:
        return False


def _is_name(text: str) -> bool:
    labels = text.split(".")
    return len(text) <= 253 and all(_LABEL.fullmatch(label) for label in labels)


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
    """ASGI middleware: 400 for an HTTP request whose Host is malformed, missing, given twice or
    not allowed (a WebSocket is closed)."""

    def __init__(self, app: Any, allowed: frozenset[str]) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        values = [v for k, v in scope.get("headers") or [] if k.lower() == b"host"]
        host = parse_host(values[0].decode("latin-1")) if len(values) == 1 else None
        if host is not None and ("*" in self.allowed or host in self.allowed):
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
