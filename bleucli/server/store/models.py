"""The store's typed rows: test sets, their versions and jobs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from bleucli.server.store.common import Identity, iso, now, utc

if TYPE_CHECKING:
    from bleucli.scoring import ScoringRequest

#: The default cap on a hypothesis line (characters): far above a real sentence's output,
#: far below a file built to exhaust a worker. Fixed, never derived from the references: a
#: limit computed from the longest hidden line would tell every team that line's length.
DEFAULT_LINE_CHARS = 5000
#: The default cap on a run's scoring time (seconds): a real system's 2,000 lines take
#: well under a minute with COMET on a CPU.
DEFAULT_SCORING_SECONDS = 600
#: The default cap on the tokens neural metrics read from a run, per line on average (a
#: real sentence has 20-60; the models truncate a segment at 512).
DEFAULT_TOKENS_PER_LINE = 128
#: The default worker time a team's runs on one set may take in a UTC day (seconds).
DEFAULT_SCORING_SECONDS_PER_DAY = 1800


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
    max_scoring_seconds: int | None = None
    max_neural_tokens: int | None = None
    limit_scoring_seconds_per_day: int | None = None
    rank_by: str | None = None

    __test__ = False  # not a pytest class

    @property
    def line_cap(self) -> int:
        """The longest hypothesis line (characters) a submission may have."""
        return self.max_line_chars or DEFAULT_LINE_CHARS

    @property
    def scoring_seconds(self) -> int:
        """The most worker time one run may take."""
        return self.max_scoring_seconds or DEFAULT_SCORING_SECONDS

    @property
    def scoring_seconds_per_day(self) -> int:
        """The worker time a team's runs may take in a day."""
        return self.limit_scoring_seconds_per_day or DEFAULT_SCORING_SECONDS_PER_DAY

    def neural_tokens(self, n_lines: int) -> int:
        """The most tokens neural metrics may read from one run of ``n_lines`` lines."""
        return self.max_neural_tokens or DEFAULT_TOKENS_PER_LINE * max(n_lines, 1)

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
                "max_line_chars": self.line_cap,
                "max_scoring_seconds": self.scoring_seconds,
                "max_neural_tokens": self.max_neural_tokens,
                "scoring_seconds_per_day": self.scoring_seconds_per_day,
            },
            "rank_by": self.rank_by or "first-metric",
        }


def testset_from(row: Any) -> TestSet:
    return TestSet(
        row.id, row.name, row.pair, row.visibility, utc(row.opens_at), utc(row.closes_at),
        row.limit_per_day, row.limit_total, row.limit_failures_per_day, bool(row.revealed),
        row.version_id, row.owner_team_id, bool(row.public_badge), row.max_line_chars,
        int(row.max_resamples if row.max_resamples is not None else 1000), int(row.changes or 0),
        row.max_scoring_seconds, row.max_neural_tokens, row.limit_scoring_seconds_per_day,
        getattr(row, "rank_by", None),
    )  # fmt: skip


@dataclass
class Version:
    """A test set's references and scoring request as of one add-testset run. The request
    is read on first use: one that no longer loads (a metric plugin uninstalled since)
    fails the work that needs it, not every page that shows the set."""

    id: int
    request_text: str
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

    @cached_property
    def request(self) -> ScoringRequest:
        from bleucli.scoring import ScoringRequest

        return ScoringRequest.from_json(self.request_text, f"test set version {self.id}")

    @property
    def metric_names(self) -> list[str]:
        """The ``-m`` names of the request, without loading the metrics."""
        return [str(m.get("name", "?")) for m in json.loads(self.request_text)["metrics"]]


def version_from(row: Any) -> Version:
    references = json.loads(row.references)
    longest = row.longest_line
    if longest is None:
        longest = max((len(line) for ref in references for line in ref), default=0)
    request = row.request
    if not request:  # before 0004 (the migration converts them; kept for old copies)
        from bleucli.scoring import ScoringRequest

        request = ScoringRequest.from_args(json.loads(row.args)).dumps()
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
