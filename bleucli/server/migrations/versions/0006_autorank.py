"""A test set's leaderboard may rank by WMT's AutoRank over its metrics instead of by its
first metric: the organiser's choice, per set.

Revision ID: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("testsets", sa.Column("rank_by", sa.String(32), nullable=True))


def downgrade() -> None:
    op.drop_column("testsets", "rank_by")
