"""The JSON API under ``/api/v1``: bearer tokens only. Handlers without a body are plain
functions (Starlette runs them on its thread pool, so a database call never blocks the
event loop); the others read their bounded body, then do the rest on the pool. Nothing here
computes for long: gates, reports and leaderboards are queued for the workers."""

from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from bleucli.server import store
from bleucli.server.access import (
    metric_names,
    own_submission,
    scored_in_full,
    seen_in_full,
    visible_testset,
)
from bleucli.server.auth import caller, required
from bleucli.server.http import (
    FORM_LIMIT,
    Problem,
    check_text,
    engine_of,
    json_body,
    limited_body,
    parse_id,
    problem_from,
)
from bleucli.server.present import csv_text, segment_scores, submission_document, team_time

#: Characters of an Idempotency-Key (printable ASCII, as the IETF draft's examples use).
MAX_KEY = 200


def check_series(series: Any, labels: Any) -> tuple[str | None, dict[str, str]]:
    """A series name and ``key=value`` labels as the API takes them."""
    check_text(series, "series")
    for item in labels.items() if isinstance(labels, dict) else labels or []:
        for part in item if isinstance(item, tuple) else (item,):
            check_text(part, "label")
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


def idempotency_key(request: Request) -> str | None:
    key = request.headers.get("idempotency-key")
    if key is None:
        return None
    if not 0 < len(key) <= MAX_KEY or not all(32 < ord(c) < 127 for c in key):
        raise Problem(400, f"an Idempotency-Key is 1 to {MAX_KEY} printable ASCII characters")
    return key


def accept(
    request: Request,
    who: store.Identity,
    testset_name: str,
    name: str,
    data: bytes,
    series: str | None = None,
    labels: dict[str, str] | None = None,
    key: str | None = None,
) -> tuple[int, bool]:
    """Check and store one upload: (submission id, whether its Idempotency-Key had made it
    already). The file is checked here, before any worker sees it."""
    from bleucli.errors import InputError
    from bleucli.hashing import sha256_hex as sha256
    from bleucli.server.scoring import hypothesis_lines

    if who.team_id is None:
        raise Problem(403, "admin tokens do not submit; use a team's token")
    check_text(testset_name, "testset")
    check_text(name, "name")
    engine = engine_of(request)
    testset = visible_testset(request, testset_name)
    if testset.version_id is None:
        raise Problem(409, f"{testset.name} has no references yet")
    name = name.strip() or "submission"
    if len(name) > 200:
        raise Problem(400, "a submission name has at most 200 characters")
    try:
        if key is None:  # a retry with its key gets its first answer, even past the deadline
            store.check_window(testset, store.now())
        store.check_failures(engine, testset, who.team_id)
    except store.Refused as refused:
        raise problem_from(refused) from None
    version = store.version(engine, testset.version_id)
    try:
        hypothesis_lines(data, version.n_lines, testset.line_cap)
    except InputError as err:
        store.record_refusal(engine, testset, who.team_id)
        raise Problem(422, str(err)) from None
    try:
        return store.add_submission(
            engine, testset, who.team_id, name, data, sha256(data), series, labels, key
        )
    except store.Refused as refused:
        raise problem_from(refused) from None


async def submit(request: Request) -> Response:
    who = await run_in_threadpool(required, request)  # before a byte of the body is read
    key = idempotency_key(request)
    body = await limited_body(request)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "application/json":
        payload = json_body(body)
        if not isinstance(payload, dict) or not isinstance(payload.get("hypothesis"), str):
            raise Problem(400, 'the JSON body needs "testset", "name" and "hypothesis" (a string)')
        testset, name = payload.get("testset"), payload.get("name", "")
        if not isinstance(testset, str) or not isinstance(name, str):
            raise Problem(400, '"testset" and "name" must be strings')
        try:
            data = payload["hypothesis"].encode("utf-8")
        except UnicodeEncodeError as err:
            raise Problem(
                422,
                f"the hypothesis is not valid Unicode: character {err.start + 1} is a lone "
                f"surrogate ({payload['hypothesis'][err.start]!a}); send UTF-8 text",
            ) from None
        series, labels = check_series(payload.get("series"), payload.get("labels", {}))
    elif kind == "multipart/form-data":
        testset, name, data, series, labels = await _multipart(request)
    else:
        raise Problem(
            415, "send multipart/form-data (testset, name, file hypothesis) or application/json"
        )
    submission_id, replayed = await run_in_threadpool(
        accept, request, who, testset, name, data, series, labels, key
    )
    headers = {"Idempotent-Replayed": "true"} if replayed else {}
    return JSONResponse(
        {"id": submission_id, "status": "queued", "replayed": replayed},
        status_code=202,
        headers=headers,
    )


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


def submission(request: Request) -> Response:
    row = own_submission(request, request.path_params["id"])
    testset = visible_testset(request, row.testset)
    return JSONResponse(submission_document(engine_of(request), testset, row))


def submissions(request: Request) -> Response:
    from bleucli.server.present import shown

    who = required(request)
    engine = engine_of(request)
    testset_id = None
    if "testset" in request.query_params:
        testset_id = visible_testset(request, request.query_params["testset"]).id
    rows = store.submissions(engine, testset_id, None if who.admin else who.team_id)
    sets = {ts.id: ts for ts in store.testsets(engine)}
    out = []
    for row in rows:
        scores = shown(sets[row.testset_id], row)[1] if row.status == "scored" else None
        out.append(
            {
                "id": row.id, "testset": row.testset, "version": row.version_number,
                "team": row.team, "name": row.name, "status": row.status, "scores": scores,
                "primary": bool(row.primary_choice), "rescore_of": row.rescore_of,
                "submitted": team_time(sets[row.testset_id], row.created_at),
            }
        )  # fmt: skip
    return JSONResponse(out)


def choose_primary(request: Request) -> int:
    """Make a run its team's primary (within the team's limits); the leaderboard is queued
    to re-rank."""
    row = own_submission(request, request.path_params["id"])
    engine = engine_of(request)
    try:
        store.request_work(engine, row.team_id, "primary")
        testset_id = store.choose_primary(engine, row.id, row.team_id)
    except store.Refused as refused:
        raise problem_from(refused) from None
    store.enqueue_once(engine, "leaderboard", testset_id)
    return int(row.id)


async def primary(request: Request) -> Response:
    submission_id = await run_in_threadpool(choose_primary, request)
    return JSONResponse({"id": submission_id, "primary": True, "leaderboard": "updating"})


def segments(request: Request) -> Response:
    row, _ = scored_in_full(request, "per-sentence scores")
    return JSONResponse(
        {"id": row.id, "testset": row.testset, "segments": segment_scores(engine_of(request), row)}
    )


def testsets(request: Request) -> Response:
    engine = engine_of(request)
    who = caller(request)
    out = []
    for ts in store.testsets(engine):
        if ts.visible_to(who):
            facts = ts.public(metric_names(engine, ts))
            facts["open"] = ts.open
            out.append(facts)
    return JSONResponse(out)


def testset(request: Request) -> Response:
    """One set's public facts and its versions; once it is revealed, each version's key (the
    secret its blind receipts' commitments and public part were made with)."""
    engine = engine_of(request)
    found = visible_testset(request, request.path_params["name"])
    facts = found.public(metric_names(engine, found))
    facts["open"] = found.open
    facts["versions"] = [
        {
            "number": v.number,
            "created": store.iso(v.created_at),
            "lines": v.n_lines,
            "public_fraction": v.public_fraction,
            "current": v.id == found.version_id,
            "key": v.secret if found.revealed else None,
        }
        for v in store.versions(engine, found.id)
    ]
    return JSONResponse(facts)


def leaderboard_of(request: Request, name: str) -> dict[str, Any]:
    from bleucli.server import leaderboard

    return leaderboard.current(engine_of(request), visible_testset(request, name))


def leaderboard(request: Request) -> Response:
    document = leaderboard_of(request, request.path_params["testset"])
    return JSONResponse(document, headers={"Cache-Control": "no-cache"})


def key(request: Request) -> Response:
    from bleucli.server.receipts import public_pem

    return PlainTextResponse(
        public_pem(store.signing_key(engine_of(request))),
        media_type="application/x-pem-file",
        headers={"Cache-Control": "no-cache"},
    )


def queue_gate(request: Request, options: Any) -> dict[str, Any]:
    from bleucli.server.gate import GateError, prepare

    row = own_submission(request, request.path_params["id"])
    testset = visible_testset(request, row.testset)
    seen_in_full(request, testset, "gates")
    engine = engine_of(request)
    try:
        payload = prepare(engine, testset, row, options)
        job_id = store.enqueue_for_team(engine, "gate", row.team_id, testset.id, row.id, payload)
    except GateError as err:
        raise Problem(err.status, err.message) from None
    except store.Refused as refused:
        raise problem_from(refused) from None
    return {"job": job_id, "status": "queued", "url": f"/api/v1/jobs/{job_id}"}


async def gate(request: Request) -> Response:
    """Queue the server-side gate of a scored run (server/gate.py): 202 and the job to poll."""
    await run_in_threadpool(own_submission, request, request.path_params["id"])
    options = json_body(await limited_body(request, FORM_LIMIT), {})
    answer = await run_in_threadpool(queue_gate, request, options)
    return JSONResponse(answer, status_code=202, headers={"Location": answer["url"]})


def job(request: Request) -> Response:
    """A queued job's state: a gate's verdict once done."""
    who = required(request)
    found = store.job(engine_of(request), parse_id(request.path_params["id"], "job"))
    if found is None or not (
        who.admin or (found.team_id is not None and found.team_id == who.team_id)
    ):
        raise Problem(404, f"no job {request.path_params['id'][:40]}")
    result = json.loads(found.result) if found.result and found.kind == "gate" else None
    return JSONResponse(
        {
            "id": found.id, "kind": found.kind, "status": found.status,
            "submission": found.submission_id, "result": result, "error": found.error,
            "submitted": store.iso(found.created_at), "finished": store.iso(found.finished_at),
        }
    )  # fmt: skip


def series_of(request: Request) -> tuple[store.TestSet, str, list[Any]]:
    """The caller's team's runs of a series (admins: ``?team=NAME``); 404 when it has none;
    403 on a blind set before its reveal."""
    from bleucli.errors import ConfigError

    who = required(request)
    testset = visible_testset(request, request.path_params["testset"])
    seen_in_full(request, testset, "series, trends and their CSV")
    series = request.path_params["series"]
    team_id = who.team_id
    if who.admin and "team" in request.query_params:
        try:
            team_id = store.team_id(engine_of(request), request.query_params["team"])
        except ConfigError as err:
            raise Problem(404, str(err)) from None
    runs = store.series_runs(engine_of(request), testset.id, team_id, series) if team_id else []
    if not runs:
        raise Problem(404, f"no series {series!r} of yours on {testset.name}")
    return testset, series, runs


def series(request: Request) -> Response:
    from bleucli.server.trend import run_document

    testset, name, runs = series_of(request)
    documents = [run_document(row) for row in runs]
    if request.query_params.get("format") == "csv":
        return PlainTextResponse(series_csv(documents), media_type="text/csv; charset=utf-8")
    return JSONResponse({"testset": testset.name, "series": name, "runs": documents})


def series_csv(runs: list[dict[str, Any]]) -> str:
    """One row per run: id, name, status, submitted, promoted, gate, each metric's score,
    interval and signature, each label (columns in first-seen order)."""
    metrics = list(dict.fromkeys(m for run in runs for m in run["scores"]))
    labels = list(dict.fromkeys(k for run in runs for k in run["labels"]))
    header = (
        ["id", "name", "status", "submitted", "promoted", "gate"]
        + [f"{m}{suffix}" for m in metrics for suffix in ("", " mean", " ci", " signature")]
        + [f"label:{k}" for k in labels]
    )
    rows = []
    for run in runs:
        gate = "" if run["gate"] is None else ("pass" if run["gate"]["passed"] else "fail")
        row = [run["id"], run["name"], run["status"], run["submitted"], int(run["promoted"]), gate]
        for metric in metrics:
            mean, half = run["intervals"].get(metric, ["", ""])
            row += [run["scores"].get(metric, ""), mean, half, run["signatures"].get(metric, "")]
        row += [run["labels"].get(k, "") for k in labels]
        rows.append(row)
    return csv_text(header, rows)


def health(request: Request) -> Response:
    """``/api/v1/health``: the database answers (else 503, as every route while it is
    away), how many workers were seen lately and how many are busy, and the queue: runs
    waiting and scoring, jobs waiting, and how long the oldest run has waited. Anyone may
    read it (it says nothing about teams); ``"status"`` is ``"ok"``, or ``"degraded"`` when
    runs wait and no worker is alive."""
    from bleucli.server.db import is_outage
    from bleucli.server.http import RETRY_AFTER_OUTAGE

    try:
        facts = store.health(engine_of(request))
    except Exception as err:
        if not is_outage(err):
            raise
        return JSONResponse(
            {"status": "unavailable", "database": "not answering", "error": "the server's "
             "database is not answering; retry in a few seconds"}, status_code=503,
            headers={"Retry-After": str(RETRY_AFTER_OUTAGE), "Cache-Control": "no-store"},
        )  # fmt: skip
    waiting = facts["queue"]["queued"] or facts["queue"]["jobs_queued"]
    status = "degraded" if waiting and not facts["workers"]["alive"] else "ok"
    return JSONResponse({"status": status, "database": "ok", **facts},
                        headers={"Cache-Control": "no-store"})  # fmt: skip


ROUTES = [
    ("/api/v1/health", health, ["GET"]),
    ("/api/v1/submissions", submit, ["POST"]),
    ("/api/v1/submissions", submissions, ["GET"]),
    ("/api/v1/submissions/{id}", submission, ["GET"]),
    ("/api/v1/submissions/{id}/primary", primary, ["POST"]),
    ("/api/v1/submissions/{id}/segments", segments, ["GET"]),
    ("/api/v1/submissions/{id}/gate", gate, ["POST"]),
    ("/api/v1/jobs/{id}", job, ["GET"]),
    ("/api/v1/testsets", testsets, ["GET"]),
    ("/api/v1/testsets/{name}", testset, ["GET"]),
    ("/api/v1/leaderboards/{testset}", leaderboard, ["GET"]),
    ("/api/v1/key", key, ["GET"]),
    ("/api/v1/series/{testset}/{series}", series, ["GET"]),
]
