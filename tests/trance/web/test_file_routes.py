"""The path test of TRANCE's file route (`/img/...`) on the study server and on the viewer, and
of their static mounts (issue 38: a symlink to /etc/passwd among a dataset's images was sent as
image/png)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web.paths import link_cases, traversal_cases

ROUTE = "/img/{problem}/{split}/{index}/{stage}/{view_file}"


def image_file(client, problem: str, stage: str, view: str) -> Path:
    return Path(client.app.state.catalog.split(problem, "test").store.image_path(0, stage, view))


@pytest.mark.parametrize(
    ("options", "stage", "view"), [({}, "init", "C"), ({"viewer": True}, "fin", "L")]
)
def test_no_file_outside_the_dataset_is_sent(make_client, tmp_path, options, stage, view):
    client = make_client(**options)
    url = f"/img/event/test/0/{stage}/{view}.png"
    statuses, failures = link_cases(
        client.app, url, image_file(client, "event", stage, view), tmp_path / "outside"
    )
    served = {"problem": "event", "split": "test", "index": "0", "stage": stage,
              "view_file": f"{view}.png"}  # fmt: skip
    more, bad = traversal_cases(client.app, [ROUTE], served)
    statuses += more
    failures += bad
    print(f"\npath test (trance {'viewer' if options else 'study'}): {sum(statuses.values())} "
          f"cases, {len(failures)} failures; statuses {dict(sorted(statuses.items()))}")  # fmt: skip
    assert not failures, failures[:10]
    assert set(statuses) <= {400, 404, 405, 422}
