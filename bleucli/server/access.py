"""Which test sets and runs a caller may reach: a private set exists only for its owning team
(everyone else gets the 404 of a name never created), a run only for its team and admins,
and a blind set before its reveal shows nothing finer than its leaderboard."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from bleucli.server import store
from bleucli.server.auth import caller, required
from bleucli.server.http import Problem, engine_of, parse_id


def visible_testset(request: Request, name: str) -> store.TestSet:
    """The test set ``name`` if the caller may know it exists; else the 404 of a name that
    does not exist."""
    found = store.testset(engine_of(request), name)
    if found is None or not found.visible_to(caller(request)):
        raise Problem(404, f"no test set named {name!r}")
    return found


def own_submission(request: Request, text: str) -> Any:
    """A submission the caller may see (its team's, or any for an admin); else 404."""
    who = required(request)
    row = store.submission(engine_of(request), parse_id(text))
    if row is None or not (who.admin or row.team_id == who.team_id):
        raise Problem(404, f"no submission {text[:40]}")
    return row


def seen_in_full(request: Request, testset: store.TestSet, what: str) -> None:
    """Refuse (403) what would tell more of a blind set than its leaderboard before the
    reveal: per-sentence scores, series, gates, trends, badges, reports."""
    if not testset.sees_everything(caller(request)):
        raise blind_refusal(testset, what)


def scored_in_full(request: Request, what: str) -> tuple[Any, store.TestSet]:
    """The caller's scored run of the path's id, on a set that shows ``what`` (per-sentence
    scores, reports) to it: (row, test set); else 404, 403 or 409."""
    row = own_submission(request, request.path_params["id"])
    testset = visible_testset(request, row.testset)
    seen_in_full(request, testset, what)
    if row.status != "scored":
        raise Problem(409, f"submission {row.id} is {row.status}")
    return row, testset


def blind_refusal(testset: store.TestSet, what: str) -> Problem:
    return Problem(
        403,
        f"{testset.name} is blind until the organisers reveal it: {what} need a public or "
        "private test set",
    )


def metric_names(engine: Any, testset: store.TestSet) -> list[str]:
    if testset.version_id is None:
        return []
    return store.version(engine, testset.version_id).metric_names


def precision_of(engine: Any, testset: store.TestSet) -> Any:
    """The decimals of each of the set's metrics (:class:`bleucli.precision.Precision`)."""
    from bleucli.errors import BleucliError
    from bleucli.precision import Precision

    if testset.version_id is None:
        return Precision()
    try:
        return store.version(engine, testset.version_id).request.precision
    except BleucliError:  # a request that no longer loads: the pages still show the set
        return Precision()
