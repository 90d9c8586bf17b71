"""Scripted verifiers for a testbed build: people who see the truth in the images.

A verifier is driven through the verification app's JSON API (`POST /api/start`, `GET
/api/next`, `POST /api/answer`, `POST /api/review`; any client with `get` and `post`, e.g.
FastAPI's TestClient), exactly as a person uses the pages: it answers each served item blind,
from what the item's images show (here: the testbed's truth, the answer the generators give on
the truth's metadata), and only then sees the generated answer. Where the two differ it flags
"wrong answer" and gives its own answer as the fix. A question it cannot answer with the
options shown (the truth's answer is not among them) is flagged "the correct option is
missing"; a question the truth does not ask at all (wrong metadata wrote it, e.g. about an
object that is not in the stack) is flagged "ambiguous".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tvr.core.jsonl import iter_jsonl, read_json


def true_answers(build: str | Path) -> dict[int, dict[str, Any]]:
    """Served item index -> {"answer": the true answer in the form `/api/answer` takes (a
    letter, a count as text, a list of objects)}, or {"flag": "missing_option"} where the
    item's options cannot give it, or {"flag": "ambiguous"} where the truth has no such
    question. The index is the verification app's (the build's distinct items in order)."""
    from tvr.visualtrans.build.check import truth_answers
    from tvr.visualtrans.data.dataset import CHOICE_LETTERS, load_dataset, question_options

    build = Path(build)
    config = read_json(build / "config.json")
    truth = truth_answers(build, Path(config["truth"]), config["seed"])
    keys = {r["id"]: r["key"] for _, r in iter_jsonl(build / "questions" / "families.jsonl")}
    items = load_dataset(build / "questions" / "VisualTrans.json").unique_items()
    out: dict[int, dict[str, Any]] = {}
    for index, item in enumerate(items):
        content = truth.get(keys.get(item.id, ""))
        answer: Any = None
        if content is None:
            out[index] = {"flag": "ambiguous"}
            continue
        if item.answer_format == "choice":
            options = (list(item.images[2:]) if item.task_type == "procedural_interm"
                       else question_options(item))  # fmt: skip
            if content in options:
                answer = CHOICE_LETTERS[options.index(content)]
        elif item.answer_format == "set":
            names = [] if content == "none" else content.split(", ")
            if set(names) <= set(question_options(item)):
                answer = names
        else:
            answer = content
        out[index] = {"flag": "missing_option"} if answer is None else {"answer": answer}
    return out


def first_option(item: dict[str, Any]) -> Any:
    """An answer to give when none of the shown options is right."""
    kind = item["widget"]["kind"]
    return "A" if kind == "choice" else "0" if kind == "count" else []


def verify_from_truth(client: Any, name: str, answers: dict[int, dict[str, Any]]) -> dict[str, int]:
    """Sign in as `name` and verify every item the app serves; counts of what was done."""
    r = client.post("/api/start", json={"name": name})
    r.raise_for_status()
    done = {"items": 0, "agreed": 0, "wrong_answer": 0, "missing_option": 0, "ambiguous": 0}
    while not (nxt := client.get("/api/next").json())["finished"]:
        item = nxt["item"]
        seen = answers.get(item["index"], {"flag": "ambiguous"})
        truth = seen.get("answer")
        r = client.post("/api/answer", json={
            "serving": nxt["serving"], "answer": first_option(item) if truth is None else truth,
            "key": f"{name}-{done['items']:08d}"})  # fmt: skip
        r.raise_for_status()
        body: dict[str, Any] = {"serving": nxt["serving"], "flags": []}
        if truth is None:
            body["flags"] = [seen["flag"]]
            done[seen["flag"]] += 1
        elif r.json()["agrees"]:
            done["agreed"] += 1
        else:
            body |= {"flags": ["wrong_answer"], "fix": truth}
            done["wrong_answer"] += 1
        client.post("/api/review", json=body).raise_for_status()
        done["items"] += 1
    return done
