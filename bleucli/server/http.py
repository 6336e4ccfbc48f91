"""What every route shares: one kind of refusal (:class:`Problem`, a status and one message),
the security headers on every answer (errors and 500s included: the catch-all sits inside
the header middleware), bounded bodies, JSON that cannot crash the parser, ids that cannot
overflow the database, and page rendering."""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

log = logging.getLogger("bleucli.server")

#: Default upload limit (bytes): a 2,000-line test set's output is well under 1 MB.
DEFAULT_MAX_UPLOAD = 20 * 1024 * 1024
#: Ids are 64-bit on every database: a longer number is a missing row, not a crash.
MAX_ID = 2**63 - 1
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    # nothing a team sees (receipts, its runs, its session's pages) is kept by a cache;
    # public answers that may be cached say so themselves
    "Cache-Control": "no-store",
}


class Problem(Exception):
    """An answer other than success: HTTP ``status`` and one clear message."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


def problem_from(refused: Any) -> Problem:
    """A :class:`bleucli.server.store.Refused` as an answer."""
    headers = {"Retry-After": str(refused.retry_after)} if refused.retry_after else {}
    return Problem(refused.status, refused.message, headers)


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every response (a header the
    response sets itself wins)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [
                    (k.lower().encode(), v.encode())
                    for k, v in SECURITY_HEADERS.items()
                    if k.lower().encode() not in present
                ]
                message["headers"] = list(message.get("headers", [])) + extra
            await send(message)

        await self.app(scope, receive, with_headers)


class CatchErrors:
    """ASGI middleware turning anything unexpected into a logged 500 with one line for the
    caller -- inside :class:`SecurityHeaders`, so the 500 carries the headers too."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watching(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watching)
        except Exception as err:  # noqa: BLE001 - the one place that catches everything
            from bleucli.server.db import is_outage

            status, headers = 500, {}
            if is_outage(err):  # not a bug: a client retries (bleucli submit does)
                status, headers = 503, {"Retry-After": str(RETRY_AFTER_OUTAGE)}
                message = (
                    "the server's database is not answering; retry in a few seconds "
                    "(nothing was stored by this request)"
                )
                _log_outage(scope, err)
            else:
                message = "internal error; the organisers can find it in the server's log"
                log.error("%s %s failed", scope.get("method"), scope.get("path"), exc_info=err)
            if started:
                raise
            response: Response
            if scope.get("path", "").startswith("/api/"):
                response = JSONResponse({"error": message}, status_code=status, headers=headers)
            else:
                response = HTMLResponse(
                    f"<!DOCTYPE html><title>error</title><p>{message}</p>",
                    status_code=status,
                    headers=headers,
                )
            await response(scope, receive, send)


#: Seconds a client is asked to wait while the database is away.
RETRY_AFTER_OUTAGE = 5
_last_outage_log = [0.0]


def _log_outage(scope: Any, err: BaseException) -> None:
    """One line (no traceback) at most every few seconds while the database is away."""
    import time

    moment = time.monotonic()
    if moment - _last_outage_log[0] >= RETRY_AFTER_OUTAGE:
        _last_outage_log[0] = moment
        first = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
        log.warning("database not answering (%s %s answered 503): %s",
                    scope.get("method"), scope.get("path"), first)  # fmt: skip


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be a name, a label or part of an address: a NUL or another
    control character (PostgreSQL refuses NUL in text; an ESC sequence rewrites an
    organiser's terminal), or a lone surrogate (not Unicode: no database stores it)."""
    for position, char in enumerate(value, 1):
        code = ord(char)
        if 0xD800 <= code <= 0xDFFF:
            return f"character {position} is a lone surrogate ({char!a})"
        if code < 0x20 or 0x7F <= code < 0xA0:
            return f"character {position} is a control character ({char!a})"
    return None


def check_text(value: Any, what: str) -> None:
    """Refuse (400) a text field that cannot be stored or shown (see :func:`text_problem`)."""
    if isinstance(value, str):
        reason = text_problem(value)
        if reason is not None:
            raise Problem(400, f"{what}: {reason}; send plain text")


class PlainAddresses:
    """ASGI middleware refusing an address whose path or query holds what no name can
    (a NUL, a control character, a lone surrogate): 404 for a path (no such thing exists),
    400 for a query -- before any route reaches the database with it."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            from urllib.parse import parse_qsl

            status, reason = 0, None
            path_reason = text_problem(scope.get("path", ""))
            if path_reason is not None:
                status, reason = 404, f"no such page: the address' {path_reason}"
            else:
                query = scope.get("query_string", b"").decode("latin-1")
                for key, value in parse_qsl(query, keep_blank_values=True):
                    found = text_problem(key) or text_problem(value)
                    if found is not None:
                        status, reason = 400, f"query parameter {key[:40]!a}: {found}"
                        break
            if status:
                response: Response
                if scope.get("path", "").startswith("/api/"):
                    response = JSONResponse({"error": reason}, status_code=status)
                else:
                    response = HTMLResponse(
                        f"<!DOCTYPE html><title>error</title><p>{reason}</p>", status_code=status
                    )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def engine_of(request: Request) -> Any:
    return request.app.state.engine


def is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def parse_id(text: str, what: str = "submission") -> int:
    """A path's id; anything that is not one (or overflows 64 bits) is a missing row."""
    if text.isascii() and text.isdigit() and 0 < int(text) <= MAX_ID:
        return int(text)
    raise Problem(404, f"no {what} {text[:40]}")


#: The largest body of a request that carries no file (a sign-in, a form button, a gate's
#: options): a few fields. Anything longer is refused before it is read.
FORM_LIMIT = 16 * 1024


async def limited_body(request: Request, limit: int | None = None) -> bytes:
    """The request body, refused with 413 past ``limit`` (default: the upload limit;
    :data:`FORM_LIMIT` for requests without a file) -- read no further."""
    limit = limit or request.app.state.max_upload
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise Problem(413, f"the upload is larger than the server's limit of {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise Problem(413, f"the upload is larger than the server's limit of {limit} bytes")
    request._body = bytes(body)  # Starlette's form parser reads the cached body
    return request._body


def json_body(body: bytes, default: Any = None) -> Any:
    """A JSON body; malformed or absurdly nested JSON is a 400, never a crash."""
    if not body and default is not None:
        return default
    try:
        return json.loads(body)
    except RecursionError:
        raise Problem(400, "malformed JSON: nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as err:
        raise Problem(400, f"malformed JSON: {err}") from None


async def form_of(request: Request, files: int = 0) -> Any:
    """A form body (within the upload limit with ``files``, else :data:`FORM_LIMIT`);
    malformed ones are a 400."""
    await limited_body(request, None if files else FORM_LIMIT)
    try:
        return await request.form(max_files=files or 1000, max_fields=20)
    except Exception as err:  # noqa: BLE001 - python-multipart's errors vary by version
        raise Problem(400, f"malformed form: {getattr(err, 'detail', err)}") from None
