"""``bleucli server``: a shared evaluation server for shared tasks and teams.

Rooms: :mod:`.schema` (the tables) and :mod:`.migrations` (Alembic), :mod:`.store` (every
query), :mod:`.scoring` (the worker's scoring: the command line's own code path),
:mod:`.worker` (the durable job queue), :mod:`.receipts` (Ed25519 signed receipts),
:mod:`.auth` (tokens, sessions, CSRF), :mod:`.leaderboard` (ranks and significance
clusters from stored statistics), :mod:`.app` (the web app: routes parse, call, render) and
``templates/``. Needs the ``bleucli[server]`` extra; nothing outside imports this package
but the ``server`` command.
"""

INSTALL_HINT = "pip install 'bleucli[server]'"
