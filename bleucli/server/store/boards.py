"""Stored leaderboards: each records the count of its set's changes it was computed at, so a
reader can tell whether it counts a given run, and an older computation never overwrites a
newer one."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from bleucli.server import schema as t
from bleucli.server.db import writing
from bleucli.server.store.common import now


def save_leaderboard(engine: Any, testset_id: int, document: dict[str, Any], change: int) -> bool:
    """Store ``document``, computed at ``change``, unless a newer one is stored already."""
    text = json.dumps(document, ensure_ascii=False)
    board = t.leaderboards.c
    with writing(engine) as connection:
        done = connection.execute(
            update(t.leaderboards)
            .where(board.testset_id == testset_id, board.change <= change)
            .values(document=text, computed_at=now(), change=change)
        )
        if done.rowcount:
            return True
        exists = connection.execute(
            select(board.testset_id).where(board.testset_id == testset_id)
        ).first()
        if exists:
            return False
        try:
            with connection.begin_nested():
                connection.execute(
                    insert(t.leaderboards).values(
                        testset_id=testset_id, document=text, computed_at=now(), change=change
                    )
                )
        except IntegrityError:  # another worker stored one first
            return False
    return True


def leaderboard(engine: Any, testset_id: int) -> tuple[dict[str, Any], int] | None:
    """The stored document and the change count it was computed at."""
    with engine.connect() as connection:
        row = connection.execute(
            select(t.leaderboards.c.document, t.leaderboards.c.change).where(
                t.leaderboards.c.testset_id == testset_id
            )
        ).first()
    return (json.loads(row.document), int(row.change)) if row else None
