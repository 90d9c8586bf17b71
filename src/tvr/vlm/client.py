"""An async client for OpenAI-compatible chat-completions endpoints, with retries and a timeout.

`POST {base_url}/chat/completions` with the model, the messages and the sampling options that
were set (unset ones are left to the server's defaults, as the paper did). The API key travels
only in the `Authorization: Bearer` header; error texts are scrubbed of it before they are kept.

Retried, with exponential backoff and jitter (and at least the server's `Retry-After`, capped):
HTTP 408, 429 and 5xx, time-outs, connection errors and unreadable 200 replies. Other 4xx
answers (bad request, bad key, unknown model) fail at once.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from tvr.core.errors import UserError

RETRY_STATUSES = frozenset({408, 429})
ERROR_SNIPPET_CHARS = 300


def public_url(url: str) -> str:
    """The URL without user info, query or fragment: safe to log."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


@dataclass(frozen=True)
class Endpoint:
    """Where and as whom to send requests. The key is kept out of `repr`."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"


@dataclass(frozen=True)
class Sampling:
    """Request options; None leaves the server's default."""

    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    #: the field name for `max_tokens`: some APIs want `max_completion_tokens`
    max_tokens_field: str = "max_tokens"

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.max_tokens is not None:
            out[self.max_tokens_field] = self.max_tokens
        if self.seed is not None:
            out["seed"] = self.seed
        return out


@dataclass(frozen=True)
class RetryPolicy:
    """How long to wait for one attempt and how often and how long to retry."""

    timeout_s: float = 120.0
    retries: int = 4
    backoff_s: float = 1.0
    backoff_max_s: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        base = min(self.backoff_max_s, self.backoff_s * 2 ** (attempt - 1))
        wait = base * random.uniform(0.5, 1.0)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.backoff_max_s))
        return wait


@dataclass(frozen=True)
class ChatReply:
    """A successful completion."""

    text: str
    usage: dict[str, Any] | None
    finish_reason: str | None
    attempts: int
    reasoning: str | None = None


class ChatError(Exception):
    """A request that failed for good, after `attempts` attempts."""

    def __init__(self, message: str, attempts: int, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.attempts = attempts
        self.status = status


class _AttemptFailed(Exception):
    def __init__(self, message: str, retryable: bool, status: int | None = None,
                 retry_after: float | None = None) -> None:  # fmt: skip
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _message_text(content: Any) -> str | None:
    """The text of a message's content: a string, or the text parts of a list of parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    return None


class ChatClient:
    """Sends chat-completions requests over one connection pool; use `async with`."""

    def __init__(
        self,
        endpoint: Endpoint,
        sampling: Sampling | None = None,
        policy: RetryPolicy | None = None,
        max_connections: int = 8,
    ) -> None:
        self.endpoint = endpoint
        self.sampling = sampling or Sampling()
        self.policy = policy or RetryPolicy()
        self._max_connections = max_connections
        self._http: httpx.AsyncClient | None = None

    async def __aenter__(self) -> ChatClient:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.endpoint.api_key:
            headers["Authorization"] = f"Bearer {self.endpoint.api_key}"
        self._http = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(self.policy.timeout_s),
            limits=httpx.Limits(
                max_connections=self._max_connections,
                max_keepalive_connections=self._max_connections,
            ),
            follow_redirects=False,
            trust_env=False,
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def scrub_line(self, text: str) -> str:
        """`text` with the API key replaced."""
        if self.endpoint.api_key:
            text = text.replace(self.endpoint.api_key, "***")
        return text

    def scrub(self, text: str) -> str:
        """`text` with the API key replaced, cut to a readable length."""
        return self.scrub_line(text)[:ERROR_SNIPPET_CHARS]

    async def complete(self, messages: list[dict[str, Any]]) -> ChatReply:
        """One completion, retried per the policy; ChatError when it fails for good."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self._attempt(messages, attempt)
            except _AttemptFailed as err:
                if not err.retryable or attempt > self.policy.retries:
                    raise ChatError(self.scrub(err.message), attempt, err.status) from None
                await asyncio.sleep(self.policy.delay(attempt, err.retry_after))

    async def _attempt(self, messages: list[dict[str, Any]], attempt: int) -> ChatReply:
        assert self._http is not None, "use ChatClient as an async context manager"
        body = {"model": self.endpoint.model, "messages": messages, **self.sampling.payload()}
        try:  # wait_for, not asyncio.timeout: Python 3.10 has no asyncio.timeout
            response = await asyncio.wait_for(
                self._http.post(self.endpoint.url, json=body), self.policy.timeout_s
            )
        except (TimeoutError, asyncio.TimeoutError, httpx.TimeoutException):
            raise _AttemptFailed(f"timed out after {self.policy.timeout_s:g} s", True) from None
        except httpx.TransportError as err:
            raise _AttemptFailed(f"connection error: {type(err).__name__}: {err}", True) from None
        status = response.status_code
        if status != 200:
            retryable = status in RETRY_STATUSES or status >= 500
            raise _AttemptFailed(
                f"HTTP {status}: {response.text.strip()}", retryable, status, _retry_after(response)
            )
        try:
            data = response.json()
            choice = data["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise _AttemptFailed(
                f"unreadable reply (no choices[0].message): {response.text.strip()}", True, status
            ) from None
        text = _message_text(message.get("content"))
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
        return ChatReply(
            text=text or "",
            usage=usage,
            finish_reason=choice.get("finish_reason"),
            attempts=attempt,
            reasoning=reasoning if isinstance(reasoning, str) else None,
        )


ENV_BASE_URL = ("TVR_VLM_BASE_URL", "OPENAI_BASE_URL")
ENV_MODEL = ("TVR_VLM_MODEL",)
ENV_API_KEY = ("TVR_VLM_API_KEY", "OPENAI_API_KEY")


def _first_env(environ: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    return next((environ[n] for n in names if environ.get(n)), None)


def resolve_endpoint(
    base_url: str | None, model: str | None, api_key: str | None, environ: Mapping[str, str]
) -> Endpoint:
    """The endpoint from options, else from the environment (TVR_VLM_* first, then OPENAI_*)."""
    base_url = base_url or _first_env(environ, ENV_BASE_URL)
    model = model or _first_env(environ, ENV_MODEL)
    api_key = api_key or _first_env(environ, ENV_API_KEY)
    if not base_url:
        raise UserError(
            "no endpoint: give --base-url or set TVR_VLM_BASE_URL (or OPENAI_BASE_URL), "
            "e.g. http://127.0.0.1:8000/v1"
        )
    if urlsplit(base_url).scheme not in ("http", "https") or not urlsplit(base_url).hostname:
        raise UserError(
            f"--base-url must be an http:// or https:// URL, got {public_url(base_url)!r}"
        )
    if not model:
        raise UserError("no model: give --model or set TVR_VLM_MODEL")
    return Endpoint(base_url, model, api_key)
