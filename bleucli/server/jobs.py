"""The workers' jobs other than scoring a submission, by kind: a gate verdict, an analysis
report, a leaderboard. Each returns what the job stores (JSON or HTML) or raises
:class:`JobFailed` with the message its requester reads."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from bleucli.server import store

log = logging.getLogger("bleucli.server")


class JobFailed(Exception):
    """A job that cannot be done, with the message for whoever asked for it."""


def gate(engine: Any, job: store.Job) -> str:
    from bleucli.errors import BleucliError
    from bleucli.server.gate import evaluate

    assert job.payload is not None
    try:
        return json.dumps(evaluate(engine, job.payload))
    except BleucliError as err:
        raise JobFailed(str(err)) from None


def report(engine: Any, job: store.Job) -> str:
    """``bleucli analyze``'s HTML report of a submission, with a link back to it."""
    from bleucli.analysis.report import html_report
    from bleucli.server.scoring import hypothesis_lines

    assert job.submission_id is not None
    row = store.submission(engine, job.submission_id)
    version = store.version(engine, row.version_id)
    lines = hypothesis_lines(store.hypothesis(engine, row.id), len(version.references[0]))
    return html_report(
        version.request,
        version.references,
        [(row.name or "submission", lines)],
        without_plots="Figures are not drawn on this server.",
        back=(f"/submissions/{row.id}", f"← submission {row.id}"),
    )


def leaderboard(engine: Any, job: store.Job) -> str:
    from bleucli.server.leaderboard import refresh

    refresh(engine, job.testset_id)
    return "{}"


#: Job kinds and what does them.
HANDLERS: dict[str, Callable[[Any, store.Job], str]] = {
    "gate": gate,
    "report": report,
    "leaderboard": leaderboard,
}


def run(engine: Any, job: store.Job, worker: str) -> str:
    """Do one held job and store its outcome; the status it ends in."""
    try:
        result = HANDLERS[job.kind](engine, job)
    except JobFailed as err:
        store.finish_job(engine, job, worker, "failed", None, str(err))
        return "failed"
    except Exception as err:  # noqa: BLE001 - a failed job, never a dead worker
        log.exception("%s job %s failed", job.kind, job.id)
        message = f"internal error ({type(err).__name__}); the organisers can see the log"
        store.finish_job(engine, job, worker, "failed", None, message)
        return "failed"
    written = store.finish_job(engine, job, worker, "done", result, None)
    return "done" if written else "lost"
