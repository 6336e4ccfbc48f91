"""The web app (Starlette): the JSON API under ``/api/v1`` and the HTML pages. Routes are
thin: parse, call :mod:`.store`, render. Every response carries a Content-Security-Policy
and ``X-Content-Type-Options``; no response holds a traceback; every user string is escaped
(Jinja2's autoescape); forms carry a CSRF token bound to the session.

What a participant can read: public facts of test sets, leaderboards (corpus scores), its
own submissions (result, receipt), and -- once a blind set is revealed, or on a public
set -- its own per-sentence scores and analysis report. References never appear in any
response: they are read only by the worker and the report, which a participant reaches
only on a revealed or public set.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Route

from bleucli.server import store

log = logging.getLogger("bleucli.server")

#: Default upload limit (bytes): a 2,000-line test set's output is well under 1 MB.
DEFAULT_MAX_UPLOAD = 20 * 1024 * 1024
SESSION_COOKIE = "bleucli_session"
#: Runs listed under a trend (newest first; ``?all`` lists every one): the figure has all.
TABLE_RUNS = 100
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


class Problem(Exception):
    """An answer other than success: HTTP ``status`` and one clear message."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every response."""

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


# -- shared parts -----------------------------------------------------------------------------


def engine_of(request: Request) -> Any:
    return request.app.state.engine


def wants_html(request: Request) -> bool:
    return not request.url.path.startswith("/api/")


def bearer(request: Request) -> store.Identity | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return store.identify(engine_of(request), token.strip())


def web_identity(request: Request) -> tuple[store.Identity, str] | None:
    return store.session(engine_of(request), request.cookies.get(SESSION_COOKIE, ""))


def caller(request: Request) -> store.Identity | None:
    """The API token's identity, else the web session's."""
    found = bearer(request)
    if found is not None:
        return found
    session = web_identity(request)
    return session[0] if session else None


def required(request: Request) -> store.Identity:
    who = caller(request)
    if who is None:
        raise Problem(
            401,
            "this needs a team token: Authorization: Bearer TOKEN",
            {"WWW-Authenticate": "Bearer"},
        )
    return who


async def limited_body(request: Request) -> bytes:
    """The request body, refused with 413 past the upload limit (read no further)."""
    limit = request.app.state.max_upload
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


def visible_testset(request: Request, name: str) -> store.TestSet:
    """The test set ``name`` if the caller may know it exists (a private set: its owning
    team and admins); else the same 404 as for a name that does not exist."""
    found = store.testset(engine_of(request), name)
    if found is None or not found.visible_to(caller(request)):
        raise Problem(404, f"no test set named {name!r}")
    return found


def metric_names(engine: Any, testset: store.TestSet) -> list[str]:
    if testset.version_id is None:
        return []
    args = store.version(engine, testset.version_id).args
    from bleucli.cli import scoring_options

    return list(scoring_options(["REF", "-i", "HYP", *args]).metrics)


def own_submission(request: Request, submission_id: str) -> Any:
    """A submission the caller may see (its team's, or any for an admin); else 404."""
    who = required(request)
    row = (
        store.submission(engine_of(request), int(submission_id))
        if submission_id.isdigit()
        else None
    )
    if row is None or not (who.admin or row.team_id == who.team_id):
        raise Problem(404, f"no submission {submission_id}")
    return row


def submission_document(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "testset": row.testset,
        "team": row.team,
        "name": row.name,
        "status": row.status,
        "error": row.error,
        "result": json.loads(row.result) if row.result else None,
        "receipt": json.loads(row.receipt) if row.receipt else None,
        "primary": bool(row.primary_choice),
        "submitted": store.iso(row.created_at),
        "finished": store.iso(row.finished_at),
    }


def check_series(series: Any, labels: Any) -> tuple[str | None, dict[str, str]]:
    """A series name and ``key=value`` labels as the API takes them."""
    if series is not None and (
        not isinstance(series, str) or not 0 < len(series) <= 100 or "/" in series
    ):
        raise Problem(400, "a series is named by 1 to 100 characters without '/'")
    if isinstance(labels, list):  # form fields: label=key=value
        pairs = {}
        for item in labels:
            key, sep, value = str(item).partition("=")
            if not sep or not key.strip():
                raise Problem(400, f"label {item!r} is not KEY=VALUE")
            pairs[key.strip()] = value
        labels = pairs
    if (
        not isinstance(labels, dict)
        or len(labels) > 50
        or not all(
            isinstance(k, str) and isinstance(v, str) and 0 < len(k) <= 100 and len(v) <= 500
            for k, v in labels.items()
        )
    ):
        raise Problem(400, "labels are at most 50 KEY=VALUE pairs of strings")
    return series, labels


async def accept(
    request: Request,
    who: store.Identity,
    testset_name: str,
    name: str,
    data: bytes,
    series: str | None = None,
    labels: dict[str, str] | None = None,
) -> int:
    """Check and store one upload; the submission id (the caller answers 202)."""
    from bleucli.errors import InputError
    from bleucli.server.scoring import hypothesis_lines, sha256

    if who.team_id is None:
        raise Problem(403, "admin tokens do not submit; use a team's token")
    engine = engine_of(request)
    testset = visible_testset(request, testset_name)
    if testset.version_id is None:
        raise Problem(409, f"{testset.name} has no references yet")
    name = name.strip() or "submission"
    if len(name) > 200:
        raise Problem(400, "a submission name has at most 200 characters")
    try:
        store.check_window(testset, store.now())
        store.check_failures(engine, testset, who.team_id)
    except store.Refused as refused:
        raise _problem(refused) from None
    n_lines = store.version(engine, testset.version_id).n_lines
    try:
        hypothesis_lines(data, n_lines)
    except InputError as err:
        store.record_refusal(engine, testset, who.team_id)
        raise Problem(422, str(err)) from None
    try:
        return store.add_submission(
            engine, testset, who.team_id, name, data, sha256(data), series, labels
        )
    except store.Refused as refused:
        raise _problem(refused) from None


def _problem(refused: store.Refused) -> Problem:
    headers = {"Retry-After": str(refused.retry_after)} if refused.retry_after else {}
    return Problem(refused.status, refused.message, headers)


# -- the API ----------------------------------------------------------------------------------


async def api_submit(request: Request) -> Response:
    who = required(request)
    body = await limited_body(request)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "application/json":
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError) as err:
            raise Problem(400, f"malformed JSON: {err}") from None
        if not isinstance(payload, dict) or not isinstance(payload.get("hypothesis"), str):
            raise Problem(400, 'the JSON body needs "testset", "name" and "hypothesis" (a string)')
        testset, name = payload.get("testset"), payload.get("name", "")
        if not isinstance(testset, str) or not isinstance(name, str):
            raise Problem(400, '"testset" and "name" must be strings')
        data = payload["hypothesis"].encode("utf-8")
        series, labels = check_series(payload.get("series"), payload.get("labels", {}))
    elif kind == "multipart/form-data":
        testset, name, data, series, labels = await _multipart(request)
    else:
        raise Problem(
            415, "send multipart/form-data (testset, name, file hypothesis) or application/json"
        )
    submission_id = await accept(request, who, testset, name, data, series, labels)
    return JSONResponse({"id": submission_id, "status": "queued"}, status_code=202)


async def _multipart(request: Request) -> tuple[str, str, bytes, str | None, dict[str, str]]:
    try:
        form = await request.form(max_files=2, max_fields=20)
    except Exception as err:  # noqa: BLE001 - python-multipart's errors vary by version
        raise Problem(400, f"malformed multipart body: {getattr(err, 'detail', err)}") from None
    upload = form.get("hypothesis")
    testset = form.get("testset")
    name = form.get("name") or ""
    if (
        upload is None
        or isinstance(upload, str)
        or not isinstance(testset, str)
        or not isinstance(name, str)
    ):
        raise Problem(400, "the form needs the fields testset and name and the file hypothesis")
    series, labels = check_series(form.get("series"), form.getlist("label"))
    return testset, name, await upload.read(), series, labels


async def api_submission(request: Request) -> Response:
    return JSONResponse(submission_document(own_submission(request, request.path_params["id"])))


async def api_submissions(request: Request) -> Response:
    who = required(request)
    engine = engine_of(request)
    testset_id = None
    if "testset" in request.query_params:
        testset_id = visible_testset(request, request.query_params["testset"]).id
    rows = store.submissions(engine, testset_id, None if who.admin else who.team_id)
    return JSONResponse(
        [
            {
                "id": row.id, "testset": row.testset, "team": row.team, "name": row.name,
                "status": row.status, "scores": json.loads(row.scores) if row.scores else None,
                "primary": bool(row.primary_choice), "submitted": store.iso(row.created_at),
            }
            for row in rows
        ]
    )  # fmt: skip


async def api_primary(request: Request) -> Response:
    row = own_submission(request, request.path_params["id"])
    engine = engine_of(request)
    try:
        testset_id = store.choose_primary(engine, row.id, row.team_id)
    except store.Refused as refused:
        raise _problem(refused) from None
    from bleucli.server import leaderboard

    leaderboard.refresh(engine, testset_id)
    return JSONResponse({"id": row.id, "primary": True})


async def api_segments(request: Request) -> Response:
    row = own_submission(request, request.path_params["id"])
    return JSONResponse(segment_scores(request, row))


def segment_scores(request: Request, row: Any) -> dict[str, Any]:
    """Per-sentence scores of a scored submission; refused on a blind, unrevealed set (they
    would leak the references)."""
    from bleucli.analysis.compute import sentence_scorer
    from bleucli.server.scoring import metrics_for

    engine = engine_of(request)
    testset = visible_testset(request, row.testset)
    if not testset.sees_everything(caller(request)):
        raise Problem(
            403,
            f"{testset.name} is blind: per-sentence scores appear when the organisers reveal it",
        )
    if row.status != "scored":
        raise Problem(409, f"submission {row.id} is {row.status}")
    version = store.version(engine, row.version_id)
    metrics = metrics_for(version.references, version.args)
    stats = store.stats(engine, [row.id])[row.id]
    out = {}
    for key, metric in metrics.items():
        scorer = sentence_scorer(metric)
        out[metric.score_from_values(stats[key][0]).name] = [
            scorer.score_from_values(values).score for values in stats[key]
        ]
    return {"id": row.id, "testset": row.testset, "segments": out}


async def api_testsets(request: Request) -> Response:
    engine = engine_of(request)
    who = caller(request)
    return JSONResponse(
        [ts.public(metric_names(engine, ts)) for ts in store.testsets(engine) if ts.visible_to(who)]
    )


async def api_leaderboard(request: Request) -> Response:
    return JSONResponse(leaderboard_of(request, request.path_params["testset"]))


def leaderboard_of(request: Request, name: str) -> dict[str, Any]:
    from bleucli.server import leaderboard

    return leaderboard.current(engine_of(request), visible_testset(request, name))


async def api_key(request: Request) -> Response:
    from bleucli.server.receipts import public_pem

    return PlainTextResponse(
        public_pem(store.signing_key(engine_of(request))), media_type="application/x-pem-file"
    )


async def api_gate(request: Request) -> Response:
    """The server-side gate of a scored run against its series' baseline (server/gate.py)."""
    from bleucli.server.gate import GateError, evaluate

    row = own_submission(request, request.path_params["id"])
    body = await limited_body(request)
    try:
        options = json.loads(body or b"{}")
    except ValueError as err:
        raise Problem(400, f"malformed JSON: {err}") from None
    if not isinstance(options, dict):
        raise Problem(400, "the gate's options are a JSON object")
    try:
        return JSONResponse(evaluate(engine_of(request), row, options))
    except GateError as err:
        raise Problem(err.status, err.message) from None


def series_of(request: Request) -> tuple[store.TestSet, str, list[Any]]:
    """The caller's team's runs of a series (admins: ``?team=NAME``); 404 when it has none."""
    who = required(request)
    testset = visible_testset(request, request.path_params["testset"])
    series = request.path_params["series"]
    team_id = who.team_id
    if who.admin and "team" in request.query_params:
        team_id = store.team_id(engine_of(request), request.query_params["team"])
    runs = store.series_runs(engine_of(request), testset.id, team_id, series) if team_id else []
    if not runs:
        raise Problem(404, f"no series {series!r} of yours on {testset.name}")
    return testset, series, runs


async def api_series(request: Request) -> Response:
    from bleucli.server.trend import run_document

    testset, series, runs = series_of(request)
    documents = [run_document(row) for row in runs]
    if request.query_params.get("format") == "csv":
        return PlainTextResponse(series_csv(documents), media_type="text/csv; charset=utf-8")
    return JSONResponse({"testset": testset.name, "series": series, "runs": documents})


def series_csv(runs: list[dict[str, Any]]) -> str:
    """One row per run: id, name, status, submitted, promoted, gate, each metric's score,
    interval and signature, each label (columns in first-seen order)."""
    import csv
    import io

    metrics = list(dict.fromkeys(m for run in runs for m in run["scores"]))
    labels = list(dict.fromkeys(k for run in runs for k in run["labels"]))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        ["id", "name", "status", "submitted", "promoted", "gate"]
        + [f"{m}{suffix}" for m in metrics for suffix in ("", " mean", " ci", " signature")]
        + [f"label:{k}" for k in labels]
    )
    for run in runs:
        gate = "" if run["gate"] is None else ("pass" if run["gate"]["passed"] else "fail")
        row = [run["id"], run["name"], run["status"], run["submitted"], int(run["promoted"]), gate]
        for metric in metrics:
            mean, half = run["intervals"].get(metric, ["", ""])
            row += [run["scores"].get(metric, ""), mean, half, run["signatures"].get(metric, "")]
        row += [run["labels"].get(k, "") for k in labels]
        writer.writerow(row)
    return out.getvalue()


async def page_series(request: Request) -> Response:
    from bleucli.server.trend import run_document, svg

    testset, series, runs = series_of(request)
    documents = [run_document(row) for row in runs]
    metrics = list(dict.fromkeys(m for run in documents for m in run["scores"]))
    shown = documents if "all" in request.query_params else documents[-TABLE_RUNS:]
    return render(
        request, "series.html", testset=testset, series=series, runs=documents,
        figure=svg(documents, metrics), metrics=metrics, table=shown[::-1],
    )  # fmt: skip


async def badge(request: Request) -> Response:
    """``/badges/{testset}/{series}.svg``: a series' latest score and last verdict. With a
    team's token: that team's series; without one, only a private set's owning team's, and
    only where it allows it (``add-testset --public-badge``)."""
    from bleucli.server.trend import badge as draw
    from bleucli.server.trend import run_document

    engine = engine_of(request)
    found = store.testset(engine, request.path_params["testset"])
    series = request.path_params["series"]
    who = caller(request)
    if found is None or (who is not None and not found.visible_to(who)):
        raise Problem(404, "no such badge")
    team_id = who.team_id if who else (found.owner_team_id if found.public_badge else None)
    rows = store.series_runs(engine, found.id, team_id, series) if team_id is not None else []
    scored = [run for run in map(run_document, rows) if run["scores"]]
    if not scored:
        raise Problem(404, "no such badge")
    last = scored[-1]
    metric, value = next(iter(last["scores"].items()))
    if last["gate"] is None:
        verdict, colour = "", "#6f6f6f"
    else:
        verdict, colour = (" pass", "#2e7d32") if last["gate"]["passed"] else (" fail", "#c62828")
    body = draw(f"{found.name} {series}", f"{metric} {value}{verdict}", colour)
    return Response(body, media_type="image/svg+xml", headers={"Cache-Control": "no-cache"})


# -- pages --------------------------------------------------------------------------------------


def render(request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    from bleucli.analysis.page import CSS

    session = web_identity(request)
    html = request.app.state.templates.get_template(template).render(
        css=CSS, who=session[0] if session else None, csrf=session[1] if session else "", **values
    )
    return HTMLResponse(html, status_code=status)


async def page_index(request: Request) -> Response:
    engine = engine_of(request)
    who = caller(request)
    sets = [(ts, metric_names(engine, ts)) for ts in store.testsets(engine) if ts.visible_to(who)]
    return render(request, "index.html", testsets=sets)


async def page_testset(request: Request) -> Response:
    engine = engine_of(request)
    testset = visible_testset(request, request.path_params["name"])
    board = leaderboard_of(request, testset.name)
    who = caller(request)
    mine = store.submissions(engine, testset.id, who.team_id) if who and who.team_id else []
    scores = {row.id: json.loads(row.scores) if row.scores else None for row in mine}
    return render(
        request, "testset.html", testset=testset, board=board, mine=mine, scores=scores,
        metrics=metric_names(engine, testset),
    )  # fmt: skip


async def page_submission(request: Request) -> Response:
    row = own_submission(request, request.path_params["id"])
    testset = visible_testset(request, row.testset)
    segments = None
    if row.status == "scored" and testset.sees_everything(caller(request)):
        segments = segment_scores(request, row)["segments"]
    document = submission_document(row)
    return render(
        request, "submission.html", row=row, document=document, testset=testset,
        segments=segments, receipt=json.dumps(document["receipt"], indent=1, ensure_ascii=False),
    )  # fmt: skip


async def page_report(request: Request) -> Response:
    """``bleucli analyze``'s HTML report of a submission (a revealed or public set)."""
    row = own_submission(request, request.path_params["id"])
    testset = visible_testset(request, row.testset)
    if not testset.sees_everything(caller(request)):
        raise Problem(
            403, f"{testset.name} is blind: the report appears when the organisers reveal it"
        )
    if row.status != "scored":
        raise Problem(409, f"submission {row.id} is {row.status}")
    return HTMLResponse(analysis_report(engine_of(request), row))


def analysis_report(engine: Any, row: Any) -> str:
    import tempfile

    from bleucli.cli import scoring_options
    from bleucli.commands.analyze import analyze
    from bleucli.server.scoring import write_inputs

    version = store.version(engine, row.version_id)
    with tempfile.TemporaryDirectory(prefix="bleucli-report-") as folder:
        paths, hyp = write_inputs(folder, version.references, store.hypothesis(engine, row.id))
        label = row.name.replace(":", " ") or "submission"  # NAME:FILE splits at the first ':'
        options = scoring_options([*paths, "-i", f"{label}:{hyp}", *version.args, "-q"])
        options.fmt = "text"
        report = os.path.join(folder, "report.html")
        analyze(options, None, None, 5, None, report)
        with open(report, encoding="utf-8") as handle:
            return handle.read().replace(folder + os.sep, "")  # no temporary paths shown


async def page_signin(request: Request) -> Response:
    if request.method == "GET":
        return render(request, "signin.html")
    await limited_body(request)  # the size limit; the form parser reads the cached body
    form = await request.form()
    token = str(form.get("token", "")).strip()
    who = store.identify(engine_of(request), token)
    if who is None:
        return render(request, "signin.html", status=401, error="that token is not valid")
    cookie, _ = store.open_session(engine_of(request), who)
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(
        SESSION_COOKIE, cookie, max_age=store.SESSION_SECONDS, httponly=True, samesite="strict",
        secure=request.url.scheme == "https", path="/",
    )  # fmt: skip
    return response


def checked_form(request: Request, form: Any) -> tuple[store.Identity, str]:
    """The session of a form post whose CSRF token matches it; else 403."""
    session = web_identity(request)
    if session is None:
        raise Problem(401, "sign in first (/signin)")
    sent = str(form.get("csrf", ""))
    if not sent or not secrets.compare_digest(sent, session[1]):
        raise Problem(
            403, "the form's CSRF token is missing or wrong: reload the page and try again"
        )
    return session


async def page_signout(request: Request) -> Response:
    await limited_body(request)
    form = await request.form()
    checked_form(request, form)
    store.close_session(engine_of(request), request.cookies.get(SESSION_COOKIE, ""))
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


async def page_submit(request: Request) -> Response:
    engine = engine_of(request)
    if request.method == "GET":
        if web_identity(request) is None:
            return RedirectResponse("/signin", status_code=303)
        who = caller(request)
        visible = [ts for ts in store.testsets(engine) if ts.visible_to(who)]
        return render(request, "submit.html", testsets=visible)
    await limited_body(request)
    try:
        form = await request.form(max_files=2, max_fields=20)
    except Exception as err:  # noqa: BLE001
        raise Problem(400, f"malformed form: {getattr(err, 'detail', err)}") from None
    who, _ = checked_form(request, form)
    upload = form.get("hypothesis")
    if upload is None or isinstance(upload, str):
        raise Problem(400, "choose the file to submit")
    submission_id = await accept(
        request, who, str(form.get("testset", "")), str(form.get("name", "")), await upload.read()
    )
    return RedirectResponse(f"/submissions/{submission_id}", status_code=303)


# -- errors --------------------------------------------------------------------------------------


async def on_problem(request: Request, err: Exception) -> Response:
    assert isinstance(err, Problem)
    if wants_html(request):
        response: Response = render(request, "error.html", status=err.status, message=err.message)
    else:
        response = JSONResponse({"error": err.message}, status_code=err.status)
    response.headers.update(err.headers)
    return response


async def on_error(request: Request, err: Exception) -> Response:
    """Anything unexpected: logged for the organisers, one line for the caller."""
    log.error("%s %s failed", request.method, request.url.path, exc_info=err)
    message = "internal error; the organisers can find it in the server's log"
    if wants_html(request):
        return HTMLResponse(f"<!DOCTYPE html><title>error</title><p>{message}</p>", status_code=500)
    return JSONResponse({"error": message}, status_code=500)


async def on_http(request: Request, err: Exception) -> Response:
    from starlette.exceptions import HTTPException

    assert isinstance(err, HTTPException)
    return await on_problem(request, Problem(err.status_code, str(err.detail)))


def create_app(url: str, max_upload: int = DEFAULT_MAX_UPLOAD) -> Starlette:
    from jinja2 import Environment, PackageLoader, select_autoescape
    from starlette.exceptions import HTTPException

    from bleucli.server.db import connect

    routes = [
        Route("/api/v1/submissions", api_submit, methods=["POST"]),
        Route("/api/v1/submissions", api_submissions, methods=["GET"]),
        Route("/api/v1/submissions/{id}", api_submission, methods=["GET"]),
        Route("/api/v1/submissions/{id}/primary", api_primary, methods=["POST"]),
        Route("/api/v1/submissions/{id}/segments", api_segments, methods=["GET"]),
        Route("/api/v1/testsets", api_testsets, methods=["GET"]),
        Route("/api/v1/leaderboards/{testset}", api_leaderboard, methods=["GET"]),
        Route("/api/v1/key", api_key, methods=["GET"]),
        Route("/api/v1/submissions/{id}/gate", api_gate, methods=["POST"]),
        Route("/api/v1/series/{testset}/{series}", api_series, methods=["GET"]),
        Route("/testsets/{testset}/series/{series}", page_series, methods=["GET"]),
        Route("/badges/{testset}/{series}.svg", badge, methods=["GET"]),
        Route("/", page_index, methods=["GET"]),
        Route("/testsets/{name}", page_testset, methods=["GET"]),
        Route("/submissions/{id}", page_submission, methods=["GET"]),
        Route("/submissions/{id}/report", page_report, methods=["GET"]),
        Route("/signin", page_signin, methods=["GET", "POST"]),
        Route("/signout", page_signout, methods=["POST"]),
        Route("/submit", page_submit, methods=["GET", "POST"]),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(SecurityHeaders)],
        exception_handlers={Problem: on_problem, HTTPException: on_http, Exception: on_error},
    )
    app.state.engine = connect(url)
    app.state.max_upload = max_upload
    app.state.templates = Environment(
        loader=PackageLoader("bleucli.server", "templates"),
        autoescape=select_autoescape(default=True),
    )
    return app
