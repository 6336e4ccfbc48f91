"""The server under attack, and an organiser's life cycle: caps on lines and resamples per
test set, a counter of what changes its leaderboard, numbered versions with a secret
(keyed commitments in blind receipts, the public part of a split set), re-scoring copies,
charged and idempotent submissions, the workers' job queue and the per-team work
requests. Columns are added in place; existing versions are numbered and given their
longest line, and keep no secret (their receipts stay plain SHA-256).

Revision ID: 0003
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"

    def foreign(target: str) -> list:
        # SQLite cannot add a constraint in place: the store keeps these consistent there
        return [] if sqlite else [sa.ForeignKey(target)]

    op.add_column("testsets", sa.Column("max_line_chars", sa.Integer, nullable=True))
    op.add_column(
        "testsets",
        sa.Column("max_resamples", sa.Integer, nullable=False, server_default="1000"),
    )
    op.add_column("testsets", sa.Column("changes", sa.Integer, nullable=False, server_default="0"))
    op.add_column("testset_versions", sa.Column("number", sa.Integer, nullable=True))
    op.add_column("testset_versions", sa.Column("secret", sa.String(64), nullable=True))
    op.add_column("testset_versions", sa.Column("public_fraction", sa.Float, nullable=True))
    op.add_column("testset_versions", sa.Column("longest_line", sa.Integer, nullable=True))
    op.add_column("testset_versions", sa.Column("references_hmac", sa.Text, nullable=True))
    op.add_column("submissions", sa.Column("rescore_of", sa.Integer, nullable=True))
    op.add_column(
        "submissions", sa.Column("charged", sa.Boolean, nullable=False, server_default=sa.true())
    )
    op.add_column("submissions", sa.Column("idempotency_key", sa.String(200), nullable=True))
    op.add_column("submissions", sa.Column("board_change", sa.Integer, nullable=True))
    op.add_column("submissions", sa.Column("parts", sa.Text, nullable=True))
    op.create_index(
        "ix_submissions_idempotency", "submissions", ["team_id", "idempotency_key"], unique=True
    )
    op.add_column(
        "leaderboards", sa.Column("change", sa.Integer, nullable=False, server_default="0")
    )
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("testset_id", sa.Integer, sa.ForeignKey("testsets.id"), nullable=False),
        sa.Column("submission_id", sa.Integer, sa.ForeignKey("submissions.id"), nullable=True),
        sa.Column("team_id", sa.Integer, sa.ForeignKey("teams.id"), nullable=True),
        sa.Column("payload", sa.Text, nullable=True),
        sa.Column("status", sa.String(16), nullable=False, index=True),
        sa.Column("result", sa.Text, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("lease_until", sa.Float, nullable=True),
        sa.Column("worker", sa.String(128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "work_requests",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("team_id", sa.Integer, *foreign("teams.id"), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, index=True),
    )
    # number the existing versions of each set and note their longest line
    bind = op.get_bind()
    rows = bind.execute(
        sa.text('SELECT id, testset_id, "references" FROM testset_versions ORDER BY id')
    ).all()
    numbers: dict[int, int] = {}
    for version_id, testset_id, references in rows:
        numbers[testset_id] = numbers.get(testset_id, 0) + 1
        longest = max((len(line) for ref in json.loads(references) for line in ref), default=0)
        bind.execute(
            sa.text("UPDATE testset_versions SET number = :n, longest_line = :l WHERE id = :i"),
            {"n": numbers[testset_id], "l": longest, "i": version_id},
        )


def downgrade() -> None:
    op.drop_table("work_requests")
    op.drop_table("jobs")
    op.drop_column("leaderboards", "change")
    op.drop_index("ix_submissions_idempotency", "submissions")
    for column in ("parts", "board_change", "idempotency_key", "charged", "rescore_of"):
        op.drop_column("submissions", column)
    for column in ("references_hmac", "longest_line", "public_fraction", "secret", "number"):
        op.drop_column("testset_versions", column)
    for column in ("changes", "max_resamples", "max_line_chars"):
        op.drop_column("testsets", column)
