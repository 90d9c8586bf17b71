"""The scripted annotator: an OpenAI-compatible chat endpoint on loopback that answers the build's
filter and annotate prompts from the testbed's truth.

It reads the prompt's `Episode:` and `Stage:` lines, looks the episode up in truth.jsonl and
replies with the truth as JSON: the filter's verdict, or the episode's metadata. Two settings
make it a worse annotator, each decided by a hash of the seed and the request, so a rerun gets
the same replies:

* `error_rate`: the share of episodes whose metadata is wrong (two stack layers swapped, two
  books of the final row swapped, one food item fewer on the plate or in the basket, one bead
  group more); the same episodes are wrong in every attempt;
* `malformed_rate`: the share of requests answered with text that is not JSON (decided per
  request text, so the pipeline's second attempt, whose prompt says why, may succeed).

Served by the standard library's threaded HTTP server on 127.0.0.1 (a free port), in a thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tvr.core.jsonl import iter_jsonl


def _unit(*parts: Any) -> float:
    """A number in [0, 1) from the parts (a stable hash)."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def wrong_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """The metadata an annotator that errs would write: one plausible mistake."""
    m = json.loads(json.dumps(meta))
    if "stack" in m:
        m["stack"][-1], m["stack"][-2] = m["stack"][-2], m["stack"][-1]
        s = m["stack"]
        m["steps"] = [{"object": s[0], "onto": "surface"}] + [
            {"object": s[j], "onto": s[j - 1]} for j in range(1, len(s))
        ]
    elif "final_order" in m:
        m["final_order"][0], m["final_order"][1] = m["final_order"][1], m["final_order"][0]
    elif "plate_after" in m:
        gained_plate = len(set(m["plate_after"]) - set(m["plate_before"]))
        gained_basket = len(set(m["basket_after"]) - set(m["basket_before"]))
        side = "basket" if gained_basket > gained_plate else "plate"
        other = "plate" if side == "basket" else "basket"
        new = [n for n in m[f"{side}_after"] if n not in m[f"{side}_before"]]
        # still every item in one place (schemas.FoodMeta): an item seen on the wrong side
        if len(new) > 1:  # one moved item fewer than truly
            m[f"{side}_after"].remove(new[0])
            m[f"{other}_after"].append(new[0])
        elif m[f"{other}_after"]:  # one more item than truly moved
            m[f"{side}_after"].append(m[f"{other}_after"].pop(0))
    elif "groups_after" in m:
        m["groups_after"] += 1
    return m


class ScriptedAnnotator:
    """The replies, from truth."""

    def __init__(self, truth: str | Path, error_rate: float = 0.0, malformed_rate: float = 0.0,
                 seed: int = 0) -> None:  # fmt: skip
        self.truth = {r["episode"]: r for _, r in iter_jsonl(truth)}
        self.error_rate = error_rate
        self.malformed_rate = malformed_rate
        self.seed = seed
        self.requests = 0

    def is_wrong(self, episode: str) -> bool:
        return _unit(self.seed, "wrong", episode) < self.error_rate

    def reply(self, text: str) -> str:
        self.requests += 1
        episode = re.search(r"^Episode: (\S+)", text, re.M)
        stage = re.search(r"^Stage: (\S+)", text, re.M)
        if not episode or not stage or episode.group(1) not in self.truth:
            return "I cannot tell which episode this is."
        t = self.truth[episode.group(1)]
        if _unit(self.seed, "malformed", text) < self.malformed_rate:
            return "The images show a table with some objects on it."
        if stage.group(1) == "filter":
            n = len(t["metadata"].get("objects", [])) or 2
            return json.dumps({"usable": t["usable"], "reason": t["reason"],
                               "manipulated_objects": n})  # fmt: skip
        meta = t["metadata"]
        if self.is_wrong(t["episode"]):
            meta = wrong_metadata(meta)
        return "```json\n" + json.dumps(meta) + "\n```"


def _handler(annotator: ScriptedAnnotator) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            if not self.path.endswith("/chat/completions"):
                self.send_error(404)
                return
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            parts = body["messages"][-1]["content"]
            text = parts if isinstance(parts, str) else "\n".join(
                p.get("text", "") for p in parts if p.get("type") == "text")  # fmt: skip
            reply = annotator.reply(text)
            data = json.dumps({"id": "scripted", "object": "chat.completion",
                               "model": body.get("model"),
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": reply}}],
                               "usage": {"prompt_tokens": 0, "completion_tokens": 0,
                                         "total_tokens": 0}}).encode()  # fmt: skip
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextlib.contextmanager
def serve_scripted(truth: str | Path, error_rate: float = 0.0, malformed_rate: float = 0.0,
                   seed: int = 0) -> Iterator[str]:  # fmt: skip
    """Serve the scripted annotator on 127.0.0.1 for the `with` block; yields its base URL."""
    annotator = ScriptedAnnotator(truth, error_rate, malformed_rate, seed)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(annotator))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
