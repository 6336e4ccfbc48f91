"""Every query of the server, in one package: the web app, the workers and the
administration commands call these functions and never write SQL of their own. Rooms:
:mod:`.common` (times, tokens, identities, settings), :mod:`.models` (typed rows),
:mod:`.teams` (teams, tokens, sessions), :mod:`.testsets` (sets and versions),
:mod:`.submissions` (accepting and reading runs, primaries), :mod:`.queue` (the workers'
leases and the per-team work limits) and :mod:`.boards` (stored leaderboards). Times are
UTC."""

from bleucli.server.store.boards import leaderboard, save_leaderboard
from bleucli.server.store.common import (
    Identity,
    Refused,
    initialise,
    iso,
    new_token,
    now,
    server_name,
    set_server_name,
    signing_key,
    token_hash,
    utc,
)
from bleucli.server.store.models import Job, TestSet, Version
from bleucli.server.store.queue import (
    HEARTBEAT_SECONDS,
    LEASE_SECONDS,
    MAX_ATTEMPTS,
    MAX_PENDING_JOBS,
    WORK_PER_HOUR,
    claim,
    enqueue_for_team,
    enqueue_once,
    finish,
    finish_job,
    forget_worker,
    health,
    heartbeat,
    job,
    latest_job,
    listing,
    pending,
    queue_counts,
    release,
    renew,
    request_work,
)
from bleucli.server.store.submissions import (
    add_submission,
    check_failures,
    check_window,
    choose_primary,
    encode_stats,
    hypothesis,
    primaries,
    primary_ids,
    record_refusal,
    resampled,
    save_gate,
    series_runs,
    stats,
    submission,
    submissions,
    waiting_teams,
)
from bleucli.server.store.teams import (
    SESSION_SECONDS,
    add_admin_token,
    add_team,
    close_session,
    identify,
    open_session,
    rotate_token,
    session,
    team_id,
    teams,
)
from bleucli.server.store.testsets import (
    edit_testset,
    reveal,
    save_testset,
    testset,
    testset_by_id,
    testsets,
    version,
    versions,
)

__all__ = [
    "HEARTBEAT_SECONDS", "forget_worker", "health", "heartbeat", "LEASE_SECONDS", "MAX_ATTEMPTS", "MAX_PENDING_JOBS", "SESSION_SECONDS", "WORK_PER_HOUR",
    "Identity", "Job", "Refused", "TestSet", "Version", "add_admin_token", "add_submission",
    "add_team", "check_failures", "check_window", "choose_primary", "claim", "close_session",
    "edit_testset", "encode_stats", "enqueue_for_team", "enqueue_once", "finish", "finish_job",
    "hypothesis", "identify", "initialise", "iso", "job", "latest_job", "leaderboard",
    "listing", "new_token", "now", "open_session", "pending", "primaries", "primary_ids",
    "queue_counts", "record_refusal", "release", "renew", "request_work", "resampled",
    "reveal", "rotate_token", "save_gate", "save_leaderboard", "save_testset", "series_runs",
    "server_name", "session", "set_server_name", "signing_key", "stats", "submission",
    "submissions", "team_id", "teams", "testset", "testset_by_id", "testsets", "token_hash",
    "utc", "version", "versions", "waiting_teams",
]  # fmt: skip
