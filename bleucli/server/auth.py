"""Who is asking, and whether a state change may come from them.

- The API (``/api/v1``) takes a bearer token and nothing else: a browser's session cookie
  never authorises an API call, so a page on another origin of the same site (another
  port, a sibling subdomain: SameSite does not stop those) cannot act for a signed-in team
  through it. A token that does not exist is its own 401 (mistyped, or rotated).
- Pages take the session cookie (or a token, for reading). Every form post, the sign-in
  included, carries a CSRF token -- the session's, or before sign-in one bound to a
  pre-session cookie -- and is refused when the browser says it comes from another origin
  (``Origin``, ``Sec-Fetch-Site``): a sibling site can plant a cookie, not an Origin.
- A sign-in always starts a new session (the id the browser came with is ended).
"""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request

from bleucli.server import store
from bleucli.server.http import Problem, engine_of, is_api

SESSION_COOKIE = "bleucli_session"
#: Before sign-in: binds the sign-in form's CSRF token to this browser.
PRESESSION_COOKIE = "bleucli_presession"
NEEDS_TOKEN = "this needs a team token: Authorization: Bearer TOKEN"


def _bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Problem(401, f"malformed Authorization header: {NEEDS_TOKEN}", _challenge())
    return token.strip()


def _challenge() -> dict[str, str]:
    return {"WWW-Authenticate": "Bearer"}


def bearer(request: Request) -> store.Identity | None:
    """The token's identity; None without a token; 401 for a token that is not one."""
    token = _bearer_token(request)
    if token is None:
        return None
    cached = request.scope.setdefault("bleucli", {})
    if "bearer" not in cached:
        cached["bearer"] = store.identify(engine_of(request), token)
    who = cached["bearer"]
    if who is None:
        raise Problem(
            401,
            "that token is not valid: it is mistyped, or the organisers replaced it "
            "(bleucli server rotate-token)",
            _challenge(),
        )
    return who


def page_session(request: Request) -> tuple[store.Identity, str] | None:
    """The signed-in session of a page request: (identity, CSRF token)."""
    if is_api(request):
        return None
    cached = request.scope.setdefault("bleucli", {})
    if "session" not in cached:
        cookie = request.cookies.get(SESSION_COOKIE, "")
        cached["session"] = store.session(engine_of(request), cookie) if cookie else None
    return cached["session"]


def caller(request: Request) -> store.Identity | None:
    """Who asks: the API's bearer token; on a page, the session, else a bearer token."""
    if is_api(request):
        return bearer(request)
    session = page_session(request)
    return session[0] if session else bearer(request)


def required(request: Request) -> store.Identity:
    who = caller(request)
    if who is not None:
        return who
    if is_api(request):
        hint = (
            "; the API does not take the sign-in cookie"
            if SESSION_COOKIE in request.cookies
            else ""
        )
        raise Problem(401, NEEDS_TOKEN + hint, _challenge())
    raise Problem(401, "sign in first (/signin)")


def same_origin(request: Request) -> None:
    """Refuse a form post a browser says comes from elsewhere (403)."""
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        raise Problem(403, "forms posted from another site are refused; use this site's pages")
    origin = request.headers.get("origin")
    if origin is not None:
        host = request.headers.get("host", "")
        if origin == "null" or urlsplit(origin).netloc.lower() != host.lower():
            raise Problem(
                403, "forms posted from another origin are refused; use this site's pages"
            )


def checked_form(request: Request, form: Any) -> tuple[store.Identity, str]:
    """The session of a form post from this site whose CSRF token matches it; else 401/403."""
    same_origin(request)
    session = page_session(request)
    if session is None:
        raise Problem(401, "sign in first (/signin)")
    _match(form, session[1])
    return session


def _match(form: Any, expected: str) -> None:
    sent = str(form.get("csrf", ""))
    if not sent or not expected or not secrets.compare_digest(sent, expected):
        raise Problem(
            403, "the form's CSRF token is missing or wrong: reload the page and try again"
        )


def presession(request: Request) -> str:
    """The sign-in form's CSRF token for this browser (its pre-session cookie's value, or a
    new one the response must set)."""
    return request.cookies.get(PRESESSION_COOKIE) or secrets.token_urlsafe(32)


def check_signin(request: Request, form: Any) -> None:
    """A sign-in post must come from this site's own sign-in form."""
    same_origin(request)
    _match(form, request.cookies.get(PRESESSION_COOKIE, ""))


def set_cookie(response: Any, request: Request, name: str, value: str, max_age: int) -> None:
    response.set_cookie(
        name, value, max_age=max_age, httponly=True, samesite="strict",
        secure=request.url.scheme == "https", path="/",
    )  # fmt: skip
