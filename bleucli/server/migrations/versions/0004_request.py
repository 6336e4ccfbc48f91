"""Each test set version stores its scoring request (:mod:`bleucli.scoring`) as JSON instead
of the scoring command's arguments: the workers, leaderboards and gates read it without a
command-line parser. Existing versions are converted from their stored arguments (read with
the metrics' own option declarations); the arguments stay, unused, for the record.

Revision ID: 0004
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from bleucli.scoring import ScoringRequest

    op.add_column("testset_versions", sa.Column("request", sa.Text, nullable=True))
    bind = op.get_bind()
    for version_id, args in bind.execute(sa.text("SELECT id, args FROM testset_versions")).all():
        request = ScoringRequest.from_args(json.loads(args))
        bind.execute(
            sa.text("UPDATE testset_versions SET request = :r WHERE id = :i"),
            {"r": request.dumps(), "i": version_id},
        )


def downgrade() -> None:
    op.drop_column("testset_versions", "request")
