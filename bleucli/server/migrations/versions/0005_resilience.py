"""Workers that outlive a database outage, and bounded neural work: a table where each
worker says it is alive (the health endpoint counts them), the scoring time of each run
(a team's daily budget of worker time), and the organiser's caps on a run's time and on
its tokens for neural metrics.

Revision ID: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "workers",
        sa.Column("name", sa.String(128), primary_key=True),
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Column("seen_at", sa.Float, nullable=False),
        sa.Column("job", sa.String(64), nullable=True),
    )
    op.add_column("submissions", sa.Column("scoring_seconds", sa.Float, nullable=True))
    op.add_column("testsets", sa.Column("max_scoring_seconds", sa.Integer, nullable=True))
    op.add_column("testsets", sa.Column("max_neural_tokens", sa.Integer, nullable=True))
    op.add_column("testsets", sa.Column("limit_scoring_seconds_per_day", sa.Integer, nullable=True))


def downgrade() -> None:
    op.drop_column("testsets", "limit_scoring_seconds_per_day")
    op.drop_column("testsets", "max_neural_tokens")
    op.drop_column("testsets", "max_scoring_seconds")
    op.drop_column("submissions", "scoring_seconds")
    op.drop_table("workers")
