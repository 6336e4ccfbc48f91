"""Cookies never authorise the API, every form carries a CSRF token and must come from this
site, a sign-in always starts a new session, and tokens can be rotated. In-process, on SQLite
and PostgreSQL (the browser's own behaviour: tests/server/test_attacks_browser.py)."""

from __future__ import annotations

import re
from pathlib import Path

from bleucli.server.auth import PRESESSION_COOKIE, SESSION_COOKIE
from tests.server.conftest import HYP, Local


def _csrf(text: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', text).group(1)


def test_a_session_cookie_alone_never_authorises_the_api(local: Local) -> None:
    run = local.scored("alpha")
    local.sign_in("alpha")
    assert SESSION_COOKIE in local.client.cookies
    before = len(local.client.get("/api/v1/submissions", headers=local.auth("alpha")).json())
    for method, path, kwargs in (
        ("POST", "/api/v1/submissions", {"data": {"testset": "news"}, "files": {"hypothesis": ("h", Path(HYP).read_bytes())}}),
        ("POST", f"/api/v1/submissions/{run['id']}/primary", {}),
        ("POST", f"/api/v1/submissions/{run['id']}/gate", {"json": {}}),
        ("GET", f"/api/v1/submissions/{run['id']}", {}),
    ):  # fmt: skip
        answer = local.client.request(method, path, **kwargs)
        assert answer.status_code == 401, (path, answer.text)
        assert answer.json()["error"] == (
            "this needs a team token: Authorization: Bearer TOKEN; the API does not take the "
            "sign-in cookie"
        )
        assert answer.headers["www-authenticate"] == "Bearer"
    after = local.client.get("/api/v1/submissions", headers=local.auth("alpha")).json()
    assert len(after) == before  # nothing was planted
    local.drain()
    assert local.client.get("/api/v1/jobs/1", headers=local.auth("alpha")).status_code == 404


def test_tokens_are_told_apart_from_no_token(local: Local) -> None:
    missing = local.client.get("/api/v1/submissions")
    assert missing.status_code == 401 and missing.json()["error"].startswith(
        "this needs a team token"
    )
    wrong = local.client.get("/api/v1/submissions", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and "that token is not valid" in wrong.json()["error"]
    malformed = local.client.get("/api/v1/submissions", headers={"Authorization": "Basic eA=="})
    assert malformed.status_code == 401 and "malformed Authorization header" in malformed.text
    # a wrong token is refused even where no token is needed
    assert (
        local.client.get("/api/v1/testsets", headers={"Authorization": "Bearer nope"}).status_code
        == 401
    )
    assert local.client.get("/api/v1/testsets").status_code == 200


def test_sign_in_needs_this_sites_form(local: Local) -> None:
    client = local.client
    token = local.tokens["alpha"]
    form = client.get("/signin")
    csrf = _csrf(form.text)
    assert client.cookies[PRESESSION_COOKIE] == csrf
    refused = [
        ({"token": token}, {}),  # no CSRF token (a form on another site)
        ({"token": token, "csrf": "guess"}, {}),
        ({"token": token, "csrf": csrf}, {"Origin": "http://127.0.0.1:9999"}),
        ({"token": token, "csrf": csrf}, {"Origin": "null"}),
        ({"token": token, "csrf": csrf}, {"Sec-Fetch-Site": "same-site"}),
        ({"token": token, "csrf": csrf}, {"Sec-Fetch-Site": "cross-site"}),
    ]
    for data, headers in refused:
        answer = client.post("/signin", data=data, headers=headers, follow_redirects=False)
        assert answer.status_code == 403, (data, headers, answer.status_code)
        assert SESSION_COOKIE not in answer.cookies
    # the cookie another site planted cannot stand in for this browser's form either
    client.cookies.clear()  # one cookie of that name (jars differ on a second, domainless one)
    client.cookies.set(PRESESSION_COOKIE, "planted")
    answer = client.post("/signin", data={"token": token, "csrf": csrf}, follow_redirects=False)
    assert answer.status_code == 403
    client.cookies.clear()
    client.cookies.set(PRESESSION_COOKIE, csrf)
    answer = client.post(
        "/signin", data={"token": token, "csrf": csrf},
        headers={"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}, follow_redirects=False,
    )  # fmt: skip
    assert answer.status_code == 303 and SESSION_COOKIE in answer.cookies


def test_a_sign_in_starts_a_new_session(local: Local) -> None:
    local.sign_in("alpha")
    first = local.client.cookies[SESSION_COOKIE]
    local.sign_in("beta")  # the same browser signs in again (a planted session, say)
    second = local.client.cookies[SESSION_COOKIE]
    assert first != second
    local.client.cookies.clear()
    local.client.cookies.set(SESSION_COOKIE, first)
    assert "signed in as" not in local.client.get("/").text  # the old id is gone
    local.client.cookies.set(SESSION_COOKIE, second)
    assert "signed in as beta" in local.client.get("/").text


def test_form_posts_from_another_origin_are_refused(local: Local) -> None:
    first = local.scored("alpha")["id"]
    second = local.scored("alpha")["id"]  # the primary by default: the latest
    local.sign_in("alpha")
    page = local.client.get(f"/submissions/{first}")
    csrf = _csrf(page.text)
    assert "Make this run the team's primary" in page.text
    for headers in ({"Origin": "http://127.0.0.1:9999"}, {"Sec-Fetch-Site": "same-site"}):
        answer = local.client.post(
            f"/submissions/{first}/primary", data={"csrf": csrf}, headers=headers
        )
        assert answer.status_code == 403
    assert local.client.post(f"/submissions/{first}/primary", data={}).status_code == 403
    mine = local.client.get("/api/v1/submissions", headers=local.auth("alpha")).json()
    assert [run["id"] for run in mine if run["primary"]] == []  # nothing chosen yet
    moved = local.client.post(
        f"/submissions/{first}/primary", data={"csrf": csrf}, headers={"Origin": "http://testserver"},
        follow_redirects=False,
    )  # fmt: skip
    assert moved.status_code == 303 and moved.headers["location"] == f"/submissions/{first}"
    mine = local.client.get("/api/v1/submissions", headers=local.auth("alpha")).json()
    assert [run["id"] for run in mine if run["primary"]] == [first] and second != first
    # the sign-out form too
    assert local.client.post("/signout", data={"csrf": "x"}).status_code == 403


def test_rotating_a_token_locks_the_old_one_out_at_once(local: Local) -> None:
    from bleucli.commands.server import rotate_token, teams

    local.scored("alpha")
    local.sign_in("alpha")
    old = local.tokens["alpha"]
    new = rotate_token(local.db, "alpha").splitlines()[-1]
    assert new != old
    assert (
        local.client.get(
            "/api/v1/submissions", headers={"Authorization": f"Bearer {old}"}
        ).status_code
        == 401
    )
    assert "signed in as" not in local.client.get("/").text  # its web sessions ended too
    mine = local.client.get("/api/v1/submissions", headers={"Authorization": f"Bearer {new}"})
    assert mine.status_code == 200 and len(mine.json()) == 1
    listing = teams(local.db)
    assert re.search(r"alpha\s+1\s+\S+\s+1", listing) and re.search(r"beta\s+0\s+-\s+1", listing)
