"""The path test of every file route of a `tvr serve` app (issue 38), imported by each server's
tests: the file a route sends is replaced in turn by a symlink out of the data folder, a hard
link to a file outside, a directory, a link to a directory, and a file of the wrong content under
the right name (and its folder by a link to a copy outside); then every path parameter of every
file route (and the static mounts) is set to encoded traversals and absolute paths, sent raw as a
browser or curl would (the ASGI scope uvicorn makes). A leak is an answer that holds the secret
planted outside the data folder, or /etc/passwd's first line."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote

SECRET = b"tvr-path-test-secret root:x:0:0:root:/root:/bin/bash\n"
PASSWD = b"root:x:0:0:"
DEPTH = 16  # "../" enough times to reach / from any test folder
TRAVERSALS: tuple[str, ...] = tuple(
    [
        "../" * DEPTH + "etc/passwd",
        "%2e%2e/" * DEPTH + "etc/passwd",
        "%2E%2E%2F" * DEPTH + "etc%2Fpasswd",
        "..%2f" * DEPTH + "etc%2fpasswd",
        ".%2e/" * DEPTH + "etc/passwd",
        "%252e%252e%252f" * DEPTH + "etc%252fpasswd",
        "..%5c" * DEPTH + "etc%5cpasswd",
        "%c0%ae%c0%ae/" * DEPTH + "etc/passwd",
        "....//" * DEPTH + "etc/passwd",
        "../secret.txt",
        "..%2fsecret.txt",
        "%2e%2e%2f%2e%2e%2fsecret.txt",
        "/etc/passwd",  # an absolute path: the URL holds "//etc/passwd"
        "%2fetc%2fpasswd",
        "%2Fetc%2Fpasswd%00",
        "%00",
        "..",
        "%2e%2e",
    ]
)


def asgi_get(app, raw_path: str) -> tuple[int, bytes]:
    """(status, body) of GET `raw_path` sent to `app` as uvicorn passes it on (the path
    percent-decoded once, nothing normalized; Host localhost)."""

    async def run() -> tuple[int, bytes]:
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
            "scheme": "http", "path": unquote(raw_path), "raw_path": raw_path.encode("ascii"),
            "root_path": "", "query_string": b"", "headers": [(b"host", b"localhost:8000")],
            "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
        }  # fmt: skip
        status, body = 0, bytearray()
        asked, done = False, asyncio.Event()

        async def receive() -> dict:
            nonlocal asked
            if not asked:
                asked = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await done.wait()  # the client stays until the answer is whole
            return {"type": "http.disconnect"}

        async def send(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                body.extend(message.get("body", b""))
                if not message.get("more_body", False):
                    done.set()

        await app(scope, receive, send)
        return status, bytes(body)

    return asyncio.run(run())


def leaked(body: bytes) -> bool:
    return SECRET in body or PASSWD in body


@contextmanager
def _aside(path: Path) -> Iterator[Path]:
    """Move `path` to a sibling name (same inode, same links) and back afterwards."""
    kept = path.with_name(f".{path.name}.path-test")
    os.replace(path, kept)
    try:
        yield kept
    finally:
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
        os.replace(kept, path)


def _plants(target: Path, outside: Path):
    """(name, how to plant it at `target` given the file moved aside) of every link case."""
    secret_text = outside / "secret.txt"
    secret_same_kind = outside / ("secret" + target.suffix)

    def symlink_text(kept):
        target.symlink_to(secret_text)

    def symlink_same_kind(kept):
        target.symlink_to(secret_same_kind)

    def hard_link(kept):
        os.link(secret_same_kind, target)

    def directory(kept):
        target.mkdir()

    def directory_link(kept):
        target.symlink_to(outside, target_is_directory=True)

    def wrong_content(kept):
        target.write_bytes(SECRET)

    return [("symlink to a text file outside", symlink_text),
            ("symlink to a file of the right kind outside", symlink_same_kind),
            ("hard link to a file of the right kind outside", hard_link),
            ("a directory under the file's name", directory),
            ("a link to a directory under the file's name", directory_link),
            ("the wrong content under the right name", wrong_content)]  # fmt: skip


def link_cases(app, url: str, target: Path, outside: Path) -> tuple[Counter, list[str]]:
    """Every link and content case planted at `target`, the file `url` sends, and the folder of
    `target` replaced by a link to a copy of it outside; (statuses, the failures: a leak or an
    answer other than 404). `url` must be sent (200) before and after."""
    outside.mkdir(parents=True, exist_ok=True)
    statuses: Counter = Counter()
    failures: list[str] = []
    original = target.read_bytes()
    (outside / "secret.txt").write_bytes(SECRET)
    (outside / ("secret" + target.suffix)).write_bytes(original + SECRET)  # right magic bytes

    def check(name: str) -> None:
        status, body = asgi_get(app, url)
        statuses[status] += 1
        if leaked(body) or status != 404:
            failures.append(f"{url} ({name}): {status}{', leaked' if leaked(body) else ''}")

    assert asgi_get(app, url) == (200, original), f"{url} is not sent before the test"
    for name, plant in _plants(target, outside):
        with _aside(target) as kept:
            plant(kept)
            check(name)
    copy = outside / f"copy-of-{target.parent.name}"
    shutil.copytree(target.parent, copy, symlinks=True)
    (copy / target.name).write_bytes(original + SECRET)
    with _aside(target.parent):
        target.parent.symlink_to(copy, target_is_directory=True)
        check("its folder a link to a copy outside")
    assert asgi_get(app, url) == (200, original), f"{url} is not sent after the test"
    return statuses, failures


def file_routes(app) -> list[str]:
    """The path templates of `app`'s static mounts ("/static/tvr/{path}", "/static/{path}");
    the caller names its data file routes."""
    out = []
    for route in app.routes:
        path = getattr(route, "path", "")
        if route.__class__.__name__ == "Mount":
            out.append(f"{path}/{{path}}")
    return out


def traversal_cases(app, templates: list[str], served: dict[str, str]) -> tuple[Counter, list[str]]:
    """Every path parameter of each route template (and of every static mount of `app`) set to
    each of TRAVERSALS, the others to `served`; (statuses, the failures: a leak or a 2xx)."""
    statuses: Counter = Counter()
    failures: list[str] = []
    for template in [*templates, *file_routes(app)]:
        for name in re.findall(r"{(\w+)}", template):
            for value in TRAVERSALS:
                url = re.sub(r"{(\w+)}", lambda m, v=value, n=name: v if m.group(1) == n
                             else served.get(m.group(1), "x.png"), template)  # fmt: skip
                status, body = asgi_get(app, url)
                statuses[status] += 1
                if leaked(body) or 200 <= status < 300:
                    failures.append(f"{url[:120]}: {status}{', leaked' if leaked(body) else ''}")
    return statuses, failures
