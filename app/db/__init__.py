"""Database plumbing: the async engine, sessions, column types and migrations.

Queries live in `app.repositories`; tables in `app.models`.
"""
