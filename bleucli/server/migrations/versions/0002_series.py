"""Score history for CI: private test sets with an owner and a public-badge switch;
submissions in series with labels, intervals, promotion and gate verdicts. Columns are
added in place (SQLite's ALTER TABLE ADD COLUMN too: no table is rebuilt, so a database
full of submissions migrates in a moment).

Revision ID: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # SQLite cannot add a constraint in place: the owner is checked by the store there
    owner = [] if op.get_bind().dialect.name == "sqlite" else [sa.ForeignKey("teams.id")]
    op.add_column("testsets", sa.Column("owner_team_id", sa.Integer, *owner, nullable=True))
    op.add_column(
        "testsets", sa.Column("public_badge", sa.Boolean, nullable=False, server_default=sa.false())
    )
    op.add_column("submissions", sa.Column("series", sa.Text, nullable=True))
    op.add_column("submissions", sa.Column("labels", sa.Text, nullable=True))
    op.add_column("submissions", sa.Column("intervals", sa.Text, nullable=True))
    op.add_column(
        "submissions", sa.Column("promoted", sa.Boolean, nullable=False, server_default=sa.false())
    )
    op.add_column("submissions", sa.Column("gate", sa.Text, nullable=True))
    op.create_index("ix_submissions_series", "submissions", ["testset_id", "team_id", "series"])


def downgrade() -> None:
    op.drop_index("ix_submissions_series", "submissions")
    for column in ("gate", "promoted", "intervals", "labels", "series"):
        op.drop_column("submissions", column)
    op.drop_column("testsets", "public_badge")
    op.drop_column("testsets", "owner_team_id")
