"""The chat client against a real local HTTP server: retries, time-out, errors, headers, images."""

import asyncio
import json

import pytest
from PIL import Image

from tests.vlm.chat_server import ChatServer
from tvr.core.errors import UserError
from tvr.vlm.client import (
    ChatClient,
    ChatError,
    Endpoint,
    RetryPolicy,
    Sampling,
    public_url,
    resolve_endpoint,
)
from tvr.vlm.images import image_data_url, image_mime_type

KEY = "sk-test-THIS-IS-SECRET-42"
FAST = RetryPolicy(timeout_s=0.3, retries=3, backoff_s=0.01, backoff_max_s=0.05)


def ask(server, text, policy=FAST, sampling=None, key=KEY):
    async def go():
        endpoint = Endpoint(server.base_url, "test-model", key)
        async with ChatClient(endpoint, sampling, policy) as client:
            return await client.complete(
                [{"role": "user", "content": [{"type": "text", "text": text}]}]
            )

    return asyncio.run(go())


def test_answer_usage_and_request_shape():
    with ChatServer({"K1": "<answer>A</answer>"}) as server:
        reply = ask(
            server, "question K1", sampling=Sampling(temperature=0.0, max_tokens=64, seed=7)
        )
    assert reply.text == "<answer>A</answer>" and reply.attempts == 1
    assert reply.usage == {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107}
    assert reply.finish_reason == "stop"
    (req,) = server.requests
    assert req.path == "/v1/chat/completions"
    body = json.loads(req.body)
    assert body["model"] == "test-model"
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.0, 64, 7)


def test_unset_sampling_options_are_left_out_and_field_name_is_configurable():
    with ChatServer({"K1": "x"}) as server:
        ask(server, "K1")
        ask(server, "K1", sampling=Sampling(max_tokens=5, max_tokens_field="max_completion_tokens"))
    first, second = (json.loads(r.body) for r in server.requests)
    assert set(first) == {"model", "messages"}
    assert second["max_completion_tokens"] == 5 and "max_tokens" not in second


def test_retries_on_429_and_500_then_succeeds():
    with ChatServer({"K1": "ok"}, script={"K1": ["429", "500", "503"]}) as server:
        reply = ask(server, "K1")
    assert reply.text == "ok" and reply.attempts == 4
    assert server.attempts["K1"] == 4


def test_a_reply_slower_than_the_timeout_is_retried():
    with ChatServer({"K1": "late but fine"}, script={"K1": ["sleep"]}, sleep_s=1.0) as server:
        reply = ask(server, "K1")
    assert reply.text == "late but fine" and reply.attempts == 2


def test_gives_up_after_the_retries_with_the_last_status():
    server = ChatServer({"K1": "never"}, script={"K1": ["500"] * 10})
    with server, pytest.raises(ChatError) as err:
        ask(server, "K1", policy=RetryPolicy(timeout_s=1, retries=2, backoff_s=0.01))
    assert err.value.attempts == 3 and err.value.status == 500
    assert "HTTP 500" in err.value.message and server.attempts["K1"] == 3


def test_client_errors_are_not_retried():
    server = ChatServer({"K1": "never"}, script={"K1": ["400"]})
    with server, pytest.raises(ChatError) as err:
        ask(server, "K1")
    assert err.value.attempts == 1 and err.value.status == 400 and server.attempts["K1"] == 1


def test_connection_refused_is_an_error_after_retries():
    with ChatServer({}) as server:
        url = server.base_url
    with pytest.raises(ChatError, match="connection error") as err:
        ask(type("Gone", (), {"base_url": url})(), "K1", policy=RetryPolicy(1, 1, 0.01))
    assert err.value.attempts == 2


def test_the_key_travels_only_in_the_authorization_header():
    with ChatServer({"K1": "ok"}, script={"K1": ["429"]}) as server:
        ask(server, "K1")
    assert len(server.requests) == 2
    for req in server.requests:
        assert req.headers["Authorization"] == f"Bearer {KEY}"
        others = [v for k, v in req.headers.items() if k.lower() != "authorization"]
        assert not any(KEY in v for v in others)
        assert KEY not in req.path and KEY.encode() not in req.body


def test_no_key_no_authorization_header():
    with ChatServer({"K1": "ok"}) as server:
        ask(server, "K1", key=None)
    assert "Authorization" not in server.requests[0].headers


def test_error_texts_are_scrubbed_of_the_key():
    client = ChatClient(Endpoint("http://127.0.0.1:1/v1", "m", KEY))
    assert KEY not in client.scrub(f"echo: {KEY}") and "***" in client.scrub(f"echo: {KEY}")
    assert KEY not in repr(client.endpoint)


def test_resolve_endpoint_from_options_and_environment():
    env = {"OPENAI_BASE_URL": "http://a:1/v1", "TVR_VLM_BASE_URL": "http://b:2/v1",
           "TVR_VLM_MODEL": "m", "OPENAI_API_KEY": "k1"}  # fmt: skip
    e = resolve_endpoint(None, None, None, env)
    assert (e.base_url, e.model, e.api_key) == ("http://b:2/v1", "m", "k1")
    e = resolve_endpoint("http://c:3/v1", "n", "k2", env)
    assert (e.base_url, e.model, e.api_key) == ("http://c:3/v1", "n", "k2")
    with pytest.raises(UserError, match="no endpoint"):
        resolve_endpoint(None, "m", None, {})
    with pytest.raises(UserError, match="no model"):
        resolve_endpoint("http://a/v1", None, None, {})
    with pytest.raises(UserError, match="http:// or https://"):
        resolve_endpoint("ftp://a/v1", "m", None, {})


def test_public_url_drops_user_info_and_query():
    assert public_url("https://user:pw@host:8443/v1/chat?key=s") == "https://host:8443/v1/chat"


def test_mime_type_comes_from_the_bytes(tmp_path):
    png_named_jpg = tmp_path / "a.jpg"
    Image.new("RGB", (2, 2)).save(png_named_jpg, format="PNG")
    assert image_data_url(png_named_jpg).startswith("data:image/png;base64,")
    jpeg = tmp_path / "b.png"
    Image.new("RGB", (2, 2)).save(jpeg, format="JPEG")
    assert image_data_url(jpeg).startswith("data:image/jpeg;base64,")
    webp = tmp_path / "c.webp"
    Image.new("RGB", (2, 2)).save(webp, format="WEBP")
    assert image_data_url(webp).startswith("data:image/webp;base64,")
    assert image_mime_type(b"GIF89a....") == "image/gif"
    (tmp_path / "d.jpg").write_text("not an image")
    with pytest.raises(UserError, match="not a PNG, JPEG"):
        image_data_url(tmp_path / "d.jpg")
    with pytest.raises(UserError, match="image not found"):
        image_data_url(tmp_path / "missing.jpg")
