"""The path test of the rating pages' file route (`/img/{index}/{state}`) and static mounts
(issue 38): only JPEG or PNG state images that lie in the states folder once resolved are sent."""

from __future__ import annotations

from tests.web.paths import link_cases, traversal_cases


def test_no_file_outside_the_states_folder_is_sent(make_client, tmp_path):
    client = make_client()
    target = client.app.state.study.state_image(0, 1)
    statuses, failures = link_cases(client.app, "/img/0/1", target, tmp_path / "outside")
    more, bad = traversal_cases(client.app, ["/img/{index}/{state}"], {"index": "0", "state": "1"})
    statuses += more
    failures += bad
    print(f"\npath test (vtt): {sum(statuses.values())} cases, {len(failures)} failures; "
          f"statuses {dict(sorted(statuses.items()))}")  # fmt: skip
    assert not failures, failures[:10]
    assert set(statuses) <= {400, 404, 405, 422}
