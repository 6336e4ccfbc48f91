"""The server's tables (SQLAlchemy Core). Alembic's migrations create them; this module is
what the queries in :mod:`.store` are written against, and must match the latest migration
(a test compares the two)."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)

metadata = MetaData()

#: Server-wide values: the signing key, the server's name.
settings = Table(
    "settings",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

teams = Table(
    "teams",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

#: API tokens, stored as SHA-256 hashes only; a token is a team's or an admin's.
tokens = Table(
    "tokens",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("hash", String(64), nullable=False, unique=True),
    Column("team_id", Integer, ForeignKey("teams.id"), nullable=True),
    Column("admin", Boolean, nullable=False, default=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

testsets = Table(
    "testsets",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("pair", String(64), nullable=False),
    Column("visibility", String(16), nullable=False),
    Column("opens_at", DateTime(timezone=True), nullable=True),
    Column("closes_at", DateTime(timezone=True), nullable=True),
    Column("limit_per_day", Integer, nullable=False),
    Column("limit_total", Integer, nullable=False),
    Column("limit_failures_per_day", Integer, nullable=False),
    Column("revealed", Boolean, nullable=False, default=False),
    Column("version_id", Integer, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # 0002: a private set belongs to one team; its badge may be public
    Column("owner_team_id", Integer, ForeignKey("teams.id"), nullable=True),
    Column("public_badge", Boolean, nullable=False, default=False),
    # 0003: the organiser's caps, and a counter of what changes the leaderboard (a scored
    # run, a new primary, a new version, a new deadline): a stored board records the count
    # it was computed at, so anyone can tell whether it counts a given run yet
    Column("max_line_chars", Integer, nullable=True),  # None: DEFAULT_LINE_CHARS (0005)
    Column("max_resamples", Integer, nullable=False, default=1000),
    Column("changes", Integer, nullable=False, default=0),
    # 0005: bounded work per run (seconds; tokens of neural metrics) and per team and day
    Column("max_scoring_seconds", Integer, nullable=True),  # None: DEFAULT_SCORING_SECONDS
    Column("max_neural_tokens", Integer, nullable=True),  # None: 128 per line on average
    Column("limit_scoring_seconds_per_day", Integer, nullable=True),  # None: the default
    # 0006: what the leaderboard ranks by: None, its first metric; "autorank" (WMT25's
    # recipe) or "autorank-wmt24": AutoRank over its metrics
    Column("rank_by", String(32), nullable=True),
)

#: What a test set scores against: references and options as of one add-testset run.
#: Submissions keep the version they were scored with.
versions = Table(
    "testset_versions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("testset_id", Integer, ForeignKey("testsets.id"), nullable=False),
    Column("args", Text, nullable=False),  # JSON: the scoring command's metric options
    Column("references", Text, nullable=False),  # JSON: [[line, ...], ...] per reference
    Column("references_sha256", Text, nullable=False),  # JSON: one per reference file
    Column("source", Text, nullable=True),  # JSON list of lines
    Column("docids", Text, nullable=True),  # JSON list of ids
    Column("n_lines", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # 0003: the version's number within its set; its secret (hex), which keys the blind
    # receipts' commitment to the references and picks the public part, published by
    # `reveal`; the public part's share of the lines (None: no split); the longest
    # reference line (characters), for the default line cap
    Column("number", Integer, nullable=True),
    Column("secret", String(64), nullable=True),
    Column("public_fraction", Float, nullable=True),
    Column("longest_line", Integer, nullable=True),
    Column("references_hmac", Text, nullable=True),  # JSON: HMAC-SHA256 of each file's bytes
    # 0004: the scoring request (bleucli.scoring) as JSON; ``args`` stays for the record
    Column("request", Text, nullable=True),
)

submissions = Table(
    "submissions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("testset_id", Integer, ForeignKey("testsets.id"), nullable=False, index=True),
    Column("version_id", Integer, ForeignKey("testset_versions.id"), nullable=False),
    Column("team_id", Integer, ForeignKey("teams.id"), nullable=False, index=True),
    Column("name", Text, nullable=False),
    Column("status", String(16), nullable=False, index=True),  # queued scoring scored failed
    Column("error", Text, nullable=True),
    Column("hypothesis_sha256", String(64), nullable=False),
    Column("result", Text, nullable=True),  # JSON: what `bleucli REF -i HYP -m ...` prints
    Column("scores", Text, nullable=True),  # JSON: {metric name: score}
    Column("receipt", Text, nullable=True),  # JSON: the signed receipt
    Column("primary_choice", Boolean, nullable=False, default=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("lease_until", Float, nullable=True),  # epoch seconds a worker holds the job
    Column("worker", String(128), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
    Column("finished_at", DateTime(timezone=True), nullable=True),
    # 0002: score history for CI
    Column("series", Text, nullable=True),
    Column("labels", Text, nullable=True),  # JSON {key: value}
    Column("intervals", Text, nullable=True),  # JSON {metric: [mean, half-width]} (95%)
    Column("promoted", Boolean, nullable=False, default=False),
    Column("gate", Text, nullable=True),  # JSON: the last gate verdict on this run
    # 0003: a run re-scored for a new version of its set (a copy of ``rescore_of``); whether
    # it counts against the team's limits (not when the server caused its failure, nor a
    # re-scoring copy); the client's Idempotency-Key; the set's change count once it was
    # scored; the scores of the public part and the rest (split sets)
    Column("rescore_of", Integer, nullable=True),
    Column("charged", Boolean, nullable=False, default=True),
    Column("idempotency_key", String(200), nullable=True),
    Column("board_change", Integer, nullable=True),
    Column("parts", Text, nullable=True),  # JSON {"public"|"rest": {"result", "scores"}}
    Column("scoring_seconds", Float, nullable=True),  # 0005: the worker time it took
)

#: One submission per team and Idempotency-Key (NULLs do not collide).
Index(
    "ix_submissions_idempotency",
    submissions.c.team_id,
    submissions.c.idempotency_key,
    unique=True,
)

#: A submission's large parts, apart from its row: the uploaded bytes and its per-sentence
#: statistics (SQLite walks a row's overflow pages to reach the columns after them, which
#: made a 1,000-run history ten times slower to read).
submission_data = Table(
    "submission_data",
    metadata,
    Column("submission_id", Integer, ForeignKey("submissions.id"), primary_key=True),
    Column("hypothesis", LargeBinary, nullable=False),
    Column("stats", Text, nullable=True),  # JSON: per metric, one JSON text of rows
    # JSON {"seed", "n", "scores": {metric: base64 float64}}: each metric's scores in the
    # seeded bootstrap resamples, so a leaderboard re-ranks without resampling
    Column("resampled", Text, nullable=True),
)

#: Refused uploads (wrong line count, not UTF-8, empty), counted against the daily cap.
refusals = Table(
    "refusals",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("testset_id", Integer, ForeignKey("testsets.id"), nullable=False),
    Column("team_id", Integer, ForeignKey("teams.id"), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
)

#: Web sessions: the cookie's value is only stored as a hash; each has its CSRF token.
web_sessions = Table(
    "web_sessions",
    metadata,
    Column("hash", String(64), primary_key=True),
    Column("team_id", Integer, ForeignKey("teams.id"), nullable=True),
    Column("admin", Boolean, nullable=False, default=False),
    Column("csrf", String(64), nullable=False),
    Column("expires_at", Float, nullable=False),
)

#: The leaderboard of a test set as last computed (after each scored submission).
leaderboards = Table(
    "leaderboards",
    metadata,
    Column("testset_id", Integer, ForeignKey("testsets.id"), primary_key=True),
    Column("document", Text, nullable=False),
    Column("computed_at", DateTime(timezone=True), nullable=False),
    Column("change", Integer, nullable=False, default=0),  # 0003: the set's count it is of
)

#: 0003: work other than scoring a submission, done by the workers so that no web request
#: computes for long: a gate, an analysis report, a leaderboard. The same lease as
#: submissions; ``result`` holds the verdict (JSON) or the report (HTML).
jobs = Table(
    "jobs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("kind", String(32), nullable=False),
    Column("testset_id", Integer, ForeignKey("testsets.id"), nullable=False),
    Column("submission_id", Integer, ForeignKey("submissions.id"), nullable=True),
    Column("team_id", Integer, ForeignKey("teams.id"), nullable=True),
    Column("payload", Text, nullable=True),  # JSON
    Column("status", String(16), nullable=False, index=True),  # queued running done failed
    Column("result", Text, nullable=True),
    Column("error", Text, nullable=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("lease_until", Float, nullable=True),
    Column("worker", String(128), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=True),
)

#: 0003: requests that make work for the workers (gates, reports, primary changes), per
#: team, for the per-team rate limits.
work_requests = Table(
    "work_requests",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("team_id", Integer, ForeignKey("teams.id"), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
)

#: 0005: each running worker, refreshed every few seconds (the health endpoint counts the
#: ones seen lately; a worker that stops cleanly removes its row).
workers = Table(
    "workers",
    metadata,
    Column("name", String(128), primary_key=True),
    Column("started_at", Float, nullable=False),
    Column("seen_at", Float, nullable=False),
    Column("job", String(64), nullable=True),
)
