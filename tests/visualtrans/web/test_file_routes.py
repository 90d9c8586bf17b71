"""The path test of the verification pages' file route (`/img/{index}/{k}`) and static mounts
(issue 38): only JPEG or PNG images that lie in the build's image folder once resolved are sent."""

from __future__ import annotations

from tests.web.paths import link_cases, traversal_cases


def test_no_file_outside_the_build_images_is_sent(make_client, tmp_path):
    client = make_client()
    verification = client.app.state.verification
    target = verification.images / verification.image(0, 0)
    statuses, failures = link_cases(client.app, "/img/0/0", target, tmp_path / "outside")
    more, bad = traversal_cases(client.app, ["/img/{index}/{k}"], {"index": "0", "k": "0"})
    statuses += more
    failures += bad
    print(f"\npath test (visualtrans verify): {sum(statuses.values())} cases, {len(failures)} "
          f"failures; statuses {dict(sorted(statuses.items()))}")  # fmt: skip
    assert not failures, failures[:10]
    assert set(statuses) <= {400, 404, 405, 422}
