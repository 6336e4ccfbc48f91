"""The store's typed rows: test sets, their versions and jobs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from bleucli.server.store.common import Identity, iso, now, utc

if TYPE_CHECKING:
    from bleucli.scoring import ScoringRequest

#: The default cap on a hypothesis line, in multiples of the longest reference line: far
#: above any real output, far below a file built to exhaust a worker.
LINE_CAP_FACTOR = 20


@dataclass
class TestSet:
    id: int
    name: str
    pair: str
    visibility: str
    opens_at: datetime | None
    closes_at: datetime | None
    limit_per_day: int
    limit_total: int
    limit_failures_per_day: int
    revealed: bool
    version_id: int | None
    owner_team_id: int | None = None
    public_badge: bool = False
    max_line_chars: int | None = None
    max_resamples: int = 1000
    changes: int = 0

    __test__ = False  # not a pytest class

    def visible_to(self, who: Identity | None) -> bool:
        """A private set exists only for its owning team (and admins)."""
        if self.visibility != "private":
            return True
        return who is not None and (who.admin or who.team_id == self.owner_team_id)

    @property
    def blind(self) -> bool:
        return self.visibility == "blind" and not self.revealed

    @property
    def closed(self) -> bool:
        """Past its deadline: no submissions, no primary changes."""
        return self.closes_at is not None and now() >= self.closes_at

    @property
    def open(self) -> bool:
        """Taking submissions now."""
        moment = now()
        return not self.closed and (self.opens_at is None or moment >= self.opens_at)

    def sees_everything(self, who: Identity | None) -> bool:
        """Per-sentence scores, series, gates and reports: a public or revealed set, or the
        owner of a private one."""
        return not self.blind and self.visible_to(who)

    def public(self, metrics: list[str]) -> dict[str, Any]:
        """What anyone may know of it."""
        return {
            "name": self.name,
            "pair": self.pair,
            "metrics": metrics,
            "visibility": self.visibility,
            "revealed": self.revealed,
            "opens": iso(self.opens_at),
            "closes": iso(self.closes_at),
            "limits": {
                "per_day": self.limit_per_day,
                "total": self.limit_total,
                "failures_per_day": self.limit_failures_per_day,
                "max_resamples": self.max_resamples,
                "max_line_chars": self.max_line_chars,
            },
        }


def testset_from(row: Any) -> TestSet:
    return TestSet(
        row.id, row.name, row.pair, row.visibility, utc(row.opens_at), utc(row.closes_at),
        row.limit_per_day, row.limit_total, row.limit_failures_per_day, bool(row.revealed),
        row.version_id, row.owner_team_id, bool(row.public_badge), row.max_line_chars,
        int(row.max_resamples if row.max_resamples is not None else 1000), int(row.changes or 0),
    )  # fmt: skip


@dataclass
class Version:
    id: int
    request: ScoringRequest
    references: list[list[str]]
    references_sha256: list[str]
    source: list[str] | None
    docids: list[str] | None
    n_lines: int
    number: int = 1
    secret: str | None = None
    public_fraction: float | None = None
    longest_line: int = 0
    created_at: datetime | None = None
    references_hmac: list[str] | None = None

    def line_cap(self, testset: TestSet) -> int:
        """The longest hypothesis line (characters) a submission may have."""
        if testset.max_line_chars is not None:
            return testset.max_line_chars
        return LINE_CAP_FACTOR * max(self.longest_line, 1)


def version_from(row: Any) -> Version:
    references = json.loads(row.references)
    longest = row.longest_line
    if longest is None:
        longest = max((len(line) for ref in references for line in ref), default=0)
    from bleucli.scoring import ScoringRequest

    request = (
        ScoringRequest.from_json(row.request, f"test set version {row.id}")
        if row.request
        else ScoringRequest.from_args(json.loads(row.args))
    )
    return Version(
        row.id,
        request,
        references,
        json.loads(row.references_sha256),
        json.loads(row.source) if row.source else None,
        json.loads(row.docids) if row.docids else None,
        row.n_lines,
        int(row.number or 1),
        row.secret,
        row.public_fraction,
        int(longest),
        utc(row.created_at),
        json.loads(row.references_hmac) if row.references_hmac else None,
    )


@dataclass
class Job:
    """A held job: a submission to score (``kind`` "score") or a job of the jobs table."""

    id: int
    attempt: int
    testset_id: int
    version_id: int | None = None
    kind: str = "score"
    submission_id: int | None = None
    team_id: int | None = None
    payload: dict[str, Any] | None = None
