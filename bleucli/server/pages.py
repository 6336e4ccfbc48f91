"""The HTML pages: a signed-in team's session (or a token, for reading). Every form post
carries its CSRF token and must come from this site (:mod:`.auth`). Like the API, no page
computes for long: a report is made by a worker while the page says so."""

from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from bleucli.server import store
from bleucli.server.access import (
    blind_refusal,
    metric_names,
    own_submission,
    precision_of,
    scored_in_full,
    visible_testset,
)
from bleucli.server.auth import (
    PRESESSION_COOKIE,
    SESSION_COOKIE,
    caller,
    check_signin,
    checked_form,
    page_session,
    presession,
    set_cookie,
)
from bleucli.server.http import Problem, engine_of, form_of, problem_from
from bleucli.server.present import csv_text, segment_scores, shown, submission_document
from bleucli.server.templating import render

#: Runs listed under a trend (newest first; ``?all`` lists every one): the figure has all.
TABLE_RUNS = 100


def index(request: Request) -> Response:
    engine = engine_of(request)
    who = caller(request)
    sets = [(ts, metric_names(engine, ts)) for ts in store.testsets(engine) if ts.visible_to(who)]
    return render(request, "index.html", testsets=sets)


def testset(request: Request) -> Response:
    from bleucli.server import leaderboard

    engine = engine_of(request)
    found = visible_testset(request, request.path_params["name"])
    board = leaderboard.current(engine, found)
    who = caller(request)
    mine = store.submissions(engine, found.id, who.team_id) if who and who.team_id else []
    scores = {row.id: shown(found, row)[1] if row.status == "scored" else None for row in mine}
    ranked = {row["submission"] for row in board.get("rows", [])}
    return render(
        request, "testset.html", testset=found, board=board, mine=mine, scores=scores,
        metrics=metric_names(engine, found), ranked=ranked, precision=precision_of(engine, found),
    )  # fmt: skip


def submission(request: Request) -> Response:
    engine = engine_of(request)
    row = own_submission(request, request.path_params["id"])
    found = visible_testset(request, row.testset)
    segments = None
    if row.status == "scored" and found.sees_everything(caller(request)):
        segments = segment_scores(engine, row)
    document = submission_document(engine, found, row)
    return render(
        request, "submission.html", row=row, document=document, testset=found,
        segments=segments, receipt=json.dumps(document["receipt"], indent=1, ensure_ascii=False),
        precision=precision_of(engine, found),
    )  # fmt: skip


def receipt(request: Request) -> Response:
    row = own_submission(request, request.path_params["id"])
    if not row.receipt:
        raise Problem(409, f"submission {row.id} is {row.status}: it has no receipt yet")
    text = json.dumps(json.loads(row.receipt), indent=1, ensure_ascii=False) + "\n"
    return Response(
        text,
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="receipt-{row.id}.json"'},
    )


def segments_csv(request: Request) -> Response:
    row, _ = scored_in_full(request, "per-sentence scores")
    scores = segment_scores(engine_of(request), row)
    names = list(scores)
    rows = [[k + 1, *(scores[n][k] for n in names)] for k in range(len(scores[names[0]]))]
    return PlainTextResponse(
        csv_text(["line", *names], rows),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="segments-{row.id}.csv"'},
    )


def report(request: Request) -> Response:
    """``bleucli analyze``'s HTML report of a submission (a revealed or public set), made by
    a worker: while it is being made, a page that says so and reloads itself."""
    engine = engine_of(request)
    row, found = scored_in_full(request, "analysis reports")
    made = store.latest_job(engine, "report", row.id)
    if made is not None and made.status == "done":
        return HTMLResponse(made.result)
    if made is not None and made.status == "failed":
        return render(request, "report.html", row=row, failed=made.error)
    if made is None:
        try:
            store.enqueue_for_team(engine, "report", row.team_id, found.id, row.id)
        except store.Refused as refused:
            raise problem_from(refused) from None
    return render(request, "report.html", row=row, failed=None)


async def signed_in_form(request: Request) -> Any:
    """The form of a signed-in page's button: the session checked before a byte of the
    body is read (an anonymous 20 MB post is refused at once, unread)."""
    if await run_in_threadpool(page_session, request) is None:
        raise Problem(401, "sign in first (/signin)")
    return await form_of(request)


async def primary(request: Request) -> Response:
    """The submission page's "make primary" form."""
    form = await signed_in_form(request)

    def choose() -> int:
        checked_form(request, form)
        from bleucli.server.api import choose_primary

        return choose_primary(request)

    submission_id = await run_in_threadpool(choose)
    return RedirectResponse(f"/submissions/{submission_id}", status_code=303)


async def signin(request: Request) -> Response:
    if request.method == "GET":
        token = presession(request)
        response = render(request, "signin.html", signin_csrf=token)
        set_cookie(response, request, PRESESSION_COOKIE, token, 3600)
        return response
    form = await form_of(request)

    def sign_in() -> Response:
        check_signin(request, form)
        token = str(form.get("token", "")).strip()
        who = store.identify(engine_of(request), token)
        if who is None:
            return render(
                request, "signin.html", status=401, error="that token is not valid",
                signin_csrf=presession(request),
            )  # fmt: skip
        cookie, _ = store.open_session(
            engine_of(request), who, request.cookies.get(SESSION_COOKIE, "")
        )
        moved = RedirectResponse("/", status_code=303)
        set_cookie(moved, request, SESSION_COOKIE, cookie, store.SESSION_SECONDS)
        moved.delete_cookie(PRESESSION_COOKIE, path="/")
        return moved

    return await run_in_threadpool(sign_in)


async def signout(request: Request) -> Response:
    form = await signed_in_form(request)

    def sign_out() -> Response:
        checked_form(request, form)
        store.close_session(engine_of(request), request.cookies.get(SESSION_COOKIE, ""))
        answer = RedirectResponse("/", status_code=303)
        answer.delete_cookie(SESSION_COOKIE, path="/")
        return answer

    return await run_in_threadpool(sign_out)


def submit_page(request: Request) -> Response:
    engine = engine_of(request)
    if page_session(request) is None:
        return RedirectResponse("/signin", status_code=303)
    who = caller(request)
    open_sets = [ts for ts in store.testsets(engine) if ts.visible_to(who) and ts.open]
    return render(request, "submit.html", testsets=open_sets)


async def submit(request: Request) -> Response:
    if request.method == "GET":
        return await run_in_threadpool(submit_page, request)
    # the session before a byte of the body is read
    if await run_in_threadpool(page_session, request) is None:
        raise Problem(401, "sign in first (/signin)")
    form = await form_of(request, files=2)
    upload = form.get("hypothesis")

    def take(data: bytes) -> int:
        from bleucli.server.api import accept

        who, _ = checked_form(request, form)
        if upload is None or isinstance(upload, str):
            raise Problem(400, "choose the file to submit")
        return accept(request, who, str(form.get("testset", "")), str(form.get("name", "")), data)[
            0
        ]

    data = b"" if upload is None or isinstance(upload, str) else await upload.read()
    submission_id = await run_in_threadpool(take, data)
    return RedirectResponse(f"/submissions/{submission_id}", status_code=303)


def series_page(request: Request) -> Response:
    from bleucli.server.api import series_of
    from bleucli.server.trend import run_document, svg

    found, series, runs = series_of(request)
    documents = [run_document(row) for row in runs]
    metrics = list(dict.fromkeys(m for run in documents for m in run["scores"]))
    listed = documents if "all" in request.query_params else documents[-TABLE_RUNS:]
    promoted = [run["id"] for run in documents if run["promoted"]]
    return render(
        request, "series.html", testset=found, series=series, runs=documents,
        figure=svg(documents, metrics), metrics=metrics, table=listed[::-1],
        baseline=promoted[-1] if promoted else None,
        precision=precision_of(engine_of(request), found), team=series_team(request),
    )  # fmt: skip


def series_team(request: Request) -> str:
    """The team whose series a page shows (an admin names it with ``?team=``)."""
    who = caller(request)
    return (who.team if who and who.team else None) or request.query_params.get("team", "")


def badge(request: Request) -> Response:
    """``/badges/{testset}/{series}.svg``: a series' latest score and last verdict. With a
    team's token: that team's series. Without one: on a public (or revealed) set the series
    of ``?team=NAME``; on a private set only its owner's, where it allows it
    (``add-testset --public-badge``). Never on a blind set before its reveal."""
    from bleucli.errors import ConfigError
    from bleucli.server.trend import badge as draw
    from bleucli.server.trend import run_document

    engine = engine_of(request)
    found = store.testset(engine, request.path_params["testset"])
    series = request.path_params["series"]
    who = caller(request)
    if found is None or (who is not None and not found.visible_to(who)):
        raise Problem(404, "no such badge")
    if found.blind:
        raise blind_refusal(found, "badges")
    team_id: int | None = None
    if who is not None:
        team_id = who.team_id
    elif found.visibility == "private":
        team_id = found.owner_team_id if found.public_badge else None
    elif "team" in request.query_params:
        try:
            team_id = store.team_id(engine, request.query_params["team"])
        except ConfigError:
            team_id = None
    rows = store.series_runs(engine, found.id, team_id, series) if team_id is not None else []
    scored = [(row, run) for row, run in zip(rows, map(run_document, rows)) if run["scores"]]
    if not scored:
        raise Problem(404, "no such badge")
    row, last = scored[-1]
    from bleucli.server.scoring import first_metric_name

    metric = first_metric_name(store.version(engine, row.version_id).request, row.result)
    value = last["scores"][metric]
    if last["gate"] is None:
        verdict, colour = "", "#6f6f6f"
    else:
        verdict, colour = (" pass", "#2e7d32") if last["gate"]["passed"] else (" fail", "#c62828")
    body = draw(f"{found.name} {series}", f"{metric} {value}{verdict}", colour)
    return Response(body, media_type="image/svg+xml", headers={"Cache-Control": "no-cache"})


ROUTES: list[tuple[str, Any, list[str]]] = [
    ("/", index, ["GET"]),
    ("/testsets/{name}", testset, ["GET"]),
    ("/testsets/{testset}/series/{series}", series_page, ["GET"]),
    ("/badges/{testset}/{series}.svg", badge, ["GET"]),
    ("/submissions/{id}", submission, ["GET"]),
    ("/submissions/{id}/report", report, ["GET"]),
    ("/submissions/{id}/receipt.json", receipt, ["GET"]),
    ("/submissions/{id}/segments.csv", segments_csv, ["GET"]),
    ("/submissions/{id}/primary", primary, ["POST"]),
    ("/signin", signin, ["GET", "POST"]),
    ("/signout", signout, ["POST"]),
    ("/submit", submit, ["GET", "POST"]),
]
