"""Alembic migrations of the server's database (run by ``bleucli server init``)."""
