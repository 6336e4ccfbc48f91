"""The first schema: teams, tokens, test sets and their versions, submissions (their
uploaded bytes and statistics in a table of their own), refusals, web sessions,
leaderboards, settings.

Revision ID: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

NOW = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "settings",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    op.create_table(
        "teams",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.Text, nullable=False, unique=True),
        sa.Column("created_at", NOW, nullable=False),
    )
    op.create_table(
        "tokens",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("hash", sa.String(64), nullable=False, unique=True),
        sa.Column("team_id", sa.Integer, sa.ForeignKey("teams.id"), nullable=True),
        sa.Column("admin", sa.Boolean, nullable=False),
        sa.Column("created_at", NOW, nullable=False),
    )
    op.create_table(
        "testsets",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.Text, nullable=False, unique=True),
        sa.Column("pair", sa.String(64), nullable=False),
        sa.Column("visibility", sa.String(16), nullable=False),
        sa.Column("opens_at", NOW, nullable=True),
        sa.Column("closes_at", NOW, nullable=True),
        sa.Column("limit_per_day", sa.Integer, nullable=False),
        sa.Column("limit_total", sa.Integer, nullable=False),
        sa.Column("limit_failures_per_day", sa.Integer, nullable=False),
        sa.Column("revealed", sa.Boolean, nullable=False),
        sa.Column("version_id", sa.Integer, nullable=True),
        sa.Column("created_at", NOW, nullable=False),
    )
    op.create_table(
        "testset_versions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("testset_id", sa.Integer, sa.ForeignKey("testsets.id"), nullable=False),
        sa.Column("args", sa.Text, nullable=False),
        sa.Column("references", sa.Text, nullable=False),
        sa.Column("references_sha256", sa.Text, nullable=False),
        sa.Column("source", sa.Text, nullable=True),
        sa.Column("docids", sa.Text, nullable=True),
        sa.Column("n_lines", sa.Integer, nullable=False),
        sa.Column("created_at", NOW, nullable=False),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("testset_id", sa.Integer, sa.ForeignKey("testsets.id"), nullable=False),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("testset_versions.id"), nullable=False),
        sa.Column("team_id", sa.Integer, sa.ForeignKey("teams.id"), nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("hypothesis_sha256", sa.String(64), nullable=False),
        sa.Column("result", sa.Text, nullable=True),
        sa.Column("scores", sa.Text, nullable=True),
        sa.Column("receipt", sa.Text, nullable=True),
        sa.Column("primary_choice", sa.Boolean, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("lease_until", sa.Float, nullable=True),
        sa.Column("worker", sa.String(128), nullable=True),
        sa.Column("created_at", NOW, nullable=False),
        sa.Column("finished_at", NOW, nullable=True),
    )
    op.create_index("ix_submissions_testset_id", "submissions", ["testset_id"])
    op.create_index("ix_submissions_team_id", "submissions", ["team_id"])
    op.create_index("ix_submissions_status", "submissions", ["status"])
    op.create_index("ix_submissions_created_at", "submissions", ["created_at"])
    op.create_table(
        "submission_data",
        sa.Column("submission_id", sa.Integer, sa.ForeignKey("submissions.id"), primary_key=True),
        sa.Column("hypothesis", sa.LargeBinary, nullable=False),
        sa.Column("stats", sa.Text, nullable=True),
        sa.Column("resampled", sa.Text, nullable=True),
    )
    op.create_table(
        "refusals",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("testset_id", sa.Integer, sa.ForeignKey("testsets.id"), nullable=False),
        sa.Column("team_id", sa.Integer, sa.ForeignKey("teams.id"), nullable=False),
        sa.Column("created_at", NOW, nullable=False),
    )
    op.create_index("ix_refusals_created_at", "refusals", ["created_at"])
    op.create_table(
        "web_sessions",
        sa.Column("hash", sa.String(64), primary_key=True),
        sa.Column("team_id", sa.Integer, sa.ForeignKey("teams.id"), nullable=True),
        sa.Column("admin", sa.Boolean, nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    op.create_table(
        "leaderboards",
        sa.Column("testset_id", sa.Integer, sa.ForeignKey("testsets.id"), primary_key=True),
        sa.Column("document", sa.Text, nullable=False),
        sa.Column("computed_at", NOW, nullable=False),
    )


def downgrade() -> None:
    for table in ("leaderboards", "web_sessions", "refusals", "submission_data", "submissions",
                  "testset_versions", "testsets", "tokens", "teams", "settings"):  # fmt: skip
        op.drop_table(table)
