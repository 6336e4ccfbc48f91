"""Alembic's environment: migrations run on the connection ``bleucli server init`` hands
over (never on a URL from a config file)."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection)
with context.begin_transaction():
    context.run_migrations()
