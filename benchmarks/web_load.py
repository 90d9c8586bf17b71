"""Load test of `tvr serve` on loopback: N simulated testers answer concurrently for a while.

    python benchmarks/web_load.py [--testers 50] [--duration 60] [--data DIR] [--json OUT]

Starts the server itself (`python -m tvr serve`, a subprocess on a free port, a fresh SQLite
database in a temporary folder); without --data it first makes a small Event dataset with
`tvr generate` (raster, preview). Each simulated tester has its own cookie jar: it starts a
test, then loops GET /api/next -> POST /api/answer (the reference or a perturbed answer); one
answer in ten is sent a second time with the same idempotency key, as a browser retry would.
A tester who finishes the split is replaced by a new one. At the end the database is read back:
every acknowledged submission must be stored exactly once, retries never, and no request may
fail. Prints requests/s, latency percentiles, errors and stored vs acknowledged; exits 1 on any
error or mismatch. The client runs on the same machine as the server, so the figures include
the client's own CPU use.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_dataset(out: Path, test: int) -> Path:
    subprocess.run(
        [sys.executable, "-m", "tvr", "generate", "--setting", "event", "--out", str(out),
         "--split-sizes", f"train=4,test={test}", "--backend", "raster", "--preset", "preview",
         "--quiet"],
        check=True, env=_env(), stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return out


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    return env


def reference_steps(data: Path) -> dict[str, list[dict]]:
    """sample id -> reference steps, read from the dataset (the client's answer key)."""
    from tvr.trance.data.store import open_dataset

    ds = open_dataset(data)
    out = {}
    for name in ds.splits:
        for s in ds.split(name).samples():
            out[s.id] = [{"obj": st.obj, "value": s_value(st.value)} for st in s.steps]
    return out


def s_value(v: int) -> str:
    from tvr.trance.world.vocab import VALUES

    return VALUES[v]


class Stats:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = {"start": [], "next": [], "answer": [], "retry": []}
        self.errors: list[str] = []
        self.acked: set[str] = set()
        self.retries = 0
        self.retry_stored = 0
        self.testers = 0


async def timed(stats: Stats, kind: str, call) -> httpx.Response | None:
    t0 = time.perf_counter()
    try:
        r = await call
    except httpx.HTTPError as err:
        stats.errors.append(f"{kind}: {type(err).__name__}: {err}")
        return None
    stats.latency[kind].append(time.perf_counter() - t0)
    if r.status_code != 200:
        stats.errors.append(f"{kind}: HTTP {r.status_code}: {r.text[:200]}")
        return None
    return r


async def tester(k: int, url: str, deadline: float, answers: dict, stats: Stats, seed: int) -> None:
    rng = random.Random(seed * 1000 + k)
    gen = 0
    limits = httpx.Limits(max_connections=1)
    while time.monotonic() < deadline:
        gen += 1
        async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
            r = await timed(
                stats, "start", client.post("/api/start", json={"name": f"load-{k}-{gen}"})
            )
            if r is None:
                return
            stats.testers += 1
            n = 0
            while time.monotonic() < deadline:
                r = await timed(stats, "next", client.get("/api/next/event/test"))
                if r is None:
                    return
                nxt = r.json()
                if nxt["done"]:
                    break
                steps = [dict(s) for s in answers[nxt["sample_id"]]]
                if rng.random() < 0.4:  # a wrong answer now and then
                    steps[rng.randrange(len(steps))]["obj"] = rng.randrange(10)
                n += 1
                body = {
                    "problem": "event", "split": nxt["split"], "sample_id": nxt["sample_id"],
                    "practice": nxt["practice"], "steps": steps, "key": f"load-{seed}-{k}-{gen}-{n:05d}",
                    "client_seconds": rng.uniform(5, 60),
                }  # fmt: skip
                r = await timed(stats, "answer", client.post("/api/answer", json=body))
                if r is None:
                    return
                if r.json()["stored"]:
                    stats.acked.add(body["key"])
                if rng.random() < 0.1:  # the browser retries the same submission
                    stats.retries += 1
                    r2 = await timed(stats, "retry", client.post("/api/answer", json=body))
                    if r2 is not None and r2.json()["stored"]:
                        stats.retry_stored += 1


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000 if xs else float("nan")


async def drive(
    url: str, testers: int, duration: float, answers: dict, seed: int
) -> tuple[Stats, float]:
    stats = Stats()
    t0 = time.monotonic()
    deadline = t0 + duration
    await asyncio.gather(*(tester(k, url, deadline, answers, stats, seed) for k in range(testers)))
    return stats, time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--testers", type=int, default=50)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    ap.add_argument("--data", type=Path, help="an Event dataset (default: make one)")
    ap.add_argument("--test-size", type=int, default=100, help="test samples of the made dataset")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="tvr-web-load-"))
    data = args.data or make_dataset(tmp / "event", args.test_size)
    answers = reference_steps(data)
    db = tmp / "load.sqlite"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "tvr", "serve", "--data", str(data), "--port", str(port),
         "--db", f"sqlite:///{db}", "--practice", "1"],
        env=_env(),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + "/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the server did not start")
            time.sleep(0.2)
        cpu0 = os.times()
        stats, wall = asyncio.run(drive(url, args.testers, args.duration, answers, args.seed))
        cpu1 = os.times()
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
    from sqlalchemy import create_engine, text

    engine = create_engine(f"sqlite:///{db}")
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT idempotency_key FROM answers")).scalars().all()
    stored_keys = set(rows)
    requests = sum(len(v) for v in stats.latency.values())
    submissions = len(stats.latency["answer"])
    all_lat = [x for v in stats.latency.values() for x in v]
    figures = {
        "testers": args.testers,
        "duration_s": round(wall, 1),
        "tester_sessions": stats.testers,
        "requests": requests,
        "requests_per_s": round(requests / wall, 1),
        "submissions": submissions,
        "submissions_per_s": round(submissions / wall, 1),
        "retries": stats.retries,
        "latency_ms_all": {"p50": round(pct(all_lat, 0.5), 1), "p95": round(pct(all_lat, 0.95), 1), "p99": round(pct(all_lat, 0.99), 1)},
        "latency_ms_answer": {"p50": round(pct(stats.latency["answer"], 0.5), 1), "p95": round(pct(stats.latency["answer"], 0.95), 1)},
        "latency_ms_next": {"p50": round(pct(stats.latency["next"], 0.5), 1), "p95": round(pct(stats.latency["next"], 0.95), 1)},
        "errors": len(stats.errors),
        "acknowledged": len(stats.acked),
        "stored_rows": len(rows),
        "stored_distinct": len(stored_keys),
        "retries_stored_again": stats.retry_stored,
        "client_cpu_s": round((cpu1.user - cpu0.user) + (cpu1.system - cpu0.system), 1),
        "cpus": os.cpu_count(),
    }  # fmt: skip
    ok = (
        not stats.errors
        and stats.retry_stored == 0
        and len(rows) == len(stored_keys) == len(stats.acked)
        and stored_keys == stats.acked
    )
    figures["ok"] = ok
    print(json.dumps(figures, indent=2))
    for e in stats.errors[:10]:
        print("error:", e, file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
