"""A real HTTP server on 127.0.0.1 that speaks the chat-completions protocol, for the tests.

It answers from a fixed table (a substring of the request's text -> reply), or from a
`responder` (the request's messages -> reply, or None to use the table), can be scripted to
answer 429, 500, 400 or to sleep past the client's time-out on given attempts, records every
request (path, query, headers, raw body, image MIME types, number of messages) and the most
requests in flight. The text and images looked at are those of the last message, the turn just
asked (the only message of a single request).
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAGIC = {
    "image/png": b"\x89PNG\r\n\x1a\n",
    "image/jpeg": b"\xff\xd8\xff",
}


@dataclass
class Recorded:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: bytes
    key: str | None  # the table key found in the text, if any
    image_mimes: list[str] = field(default_factory=list)
    images_match_mime: bool = True
    messages: int = 1  # messages in the request (a conversation's history and its new turn)


class ChatServer:
    """Start with `with ChatServer(table) as server:`; `server.base_url` ends in /v1."""

    def __init__(
        self,
        table: dict[str, str],
        script: dict[str, list[str]] | None = None,
        default_reply: str = "<answer>none</answer>",
        sleep_s: float = 1.0,
        slow_s: float = 0.0,
        hold_for: int = 0,
        hold_max_s: float = 3.0,
        responder: Callable[[list[dict[str, Any]]], str | None] | None = None,
    ) -> None:
        self.table = table
        self.responder = responder
        self.script = script or {}  # key -> actions per attempt: "429", "500", "400", "sleep", "ok"
        self.default_reply = default_reply
        self.sleep_s = sleep_s  # how long "sleep" sleeps (past the client's time-out)
        self.slow_s = slow_s  # every request waits this long before answering
        # hold the first `hold_for` requests until that many are in flight (at most hold_max_s)
        self.hold_for = hold_for
        self.hold_max_s = hold_max_s
        self.requests: list[Recorded] = []
        self.attempts: dict[str | None, int] = defaultdict(int)
        self.in_flight = 0
        self._gate_open = False  # the held requests go once `hold_for` are in flight
        self.max_in_flight = 0
        self._lock = threading.Condition()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle
    def __enter__(self) -> ChatServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                server._handle(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.handle_error = lambda *a: None  # a client that gave up: not our problem
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    # --- request handling
    def _key_of(self, text: str) -> str | None:
        return next((k for k in self.table if k in text), None)

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length", "0"))
        raw = h.rfile.read(length)
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._lock.notify_all()
        try:
            self._answer(h, raw)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with self._lock:
                self.in_flight -= 1

    def _answer(self, h: BaseHTTPRequestHandler, raw: bytes) -> None:
        body = json.loads(raw)
        content = body["messages"][-1]["content"]
        text = "".join(p.get("text", "") for p in content if p["type"] == "text")
        key = self._key_of(text)
        rec = Recorded(h.path, {k: v for k, v in h.headers.items()}, raw, key)
        rec.messages = len(body["messages"])
        for part in content:
            if part["type"] == "image_url":
                url = part["image_url"]["url"]
                head, data = url.split(",", 1)
                mime = head.removeprefix("data:").removesuffix(";base64")
                rec.image_mimes.append(mime)
                decoded = base64.b64decode(data)
                rec.images_match_mime &= decoded.startswith(MAGIC.get(mime, b"?"))
        with self._lock:
            self.requests.append(rec)
            self.attempts[key] += 1
            attempt = self.attempts[key]
            if self.hold_for and len(self.requests) <= self.hold_for:
                deadline = time.monotonic() + self.hold_max_s
                while not self._gate_open and time.monotonic() < deadline:
                    self._gate_open = self.in_flight >= self.hold_for
                    self._lock.wait(0.05)
                self._lock.notify_all()
        actions = self.script.get(key or "", [])
        action = actions[attempt - 1] if attempt <= len(actions) else "ok"
        if self.slow_s:
            time.sleep(self.slow_s)
        if action == "sleep":
            time.sleep(self.sleep_s)
            action = "ok"
        if action in ("429", "500", "503", "400"):
            status = int(action)
            payload = {"error": {"message": f"scripted {status}", "type": "test"}}
            self._send(h, status, payload, {"Retry-After": "0"} if status == 429 else {})
            return
        reply = self.responder(body["messages"]) if self.responder else None
        if reply is None:
            reply = self.table.get(key, self.default_reply) if key else self.default_reply
        usage = {"prompt_tokens": 100 + 10 * len(rec.image_mimes), "completion_tokens": 7}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        self._send(
            h,
            200,
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply},
                        "finish_reason": "stop",
                    }
                ],
                "usage": usage,
            },
        )

    @staticmethod
    def _send(
        h: BaseHTTPRequestHandler, status: int, payload: Any, headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)
        h.wfile.flush()
