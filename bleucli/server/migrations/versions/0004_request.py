"""Each test set version stores its scoring request (:mod:`bleucli.scoring`) as JSON instead
of the scoring command's arguments: the workers, leaderboards and gates read it without a
command-line parser. Existing versions are converted from their stored arguments (read with
the metrics' own option declarations); the arguments stay, unused, for the record.

New versions carry the test set's language pair (its target picks BLEU's tokeniser, as
``-l`` does for the scoring command). Old versions were scored without it, so a converted
one whose target would pick another tokeniser than 13a keeps 13a, named: its scores do not
change.

Revision ID: 0004
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import op

if TYPE_CHECKING:
    from bleucli.scoring import ScoringRequest

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from bleucli.scoring import ScoringRequest

    op.add_column("testset_versions", sa.Column("request", sa.Text, nullable=True))
    bind = op.get_bind()
    rows = bind.execute(
        sa.text(
            "SELECT v.id, v.args, t.pair FROM testset_versions v "
            "JOIN testsets t ON t.id = v.testset_id"
        )
    ).all()
    for version_id, args, pair in rows:
        request = as_scored(ScoringRequest.from_args(json.loads(args)), pair)
        bind.execute(
            sa.text("UPDATE testset_versions SET request = :r WHERE id = :i"),
            {"r": request.dumps(), "i": version_id},
        )


def as_scored(request: ScoringRequest, pair: str) -> ScoringRequest:
    """``request`` with the pair, BLEU's tokeniser pinned to what scored it before."""
    from bleucli.tokenizers import default_tokenizer

    metrics = []
    for metric in request.metrics:
        options = dict(metric.options)
        unset = metric.name == "bleu" and options.get("tokenize") is None
        if unset and default_tokenizer(pair.split("-")[-1]) != "13a":
            options["tokenize"] = "13a"
        metrics.append(replace(metric, options=options))
    return replace(request, metrics=tuple(metrics), language_pair=pair)


def downgrade() -> None:
    op.drop_column("testset_versions", "request")
