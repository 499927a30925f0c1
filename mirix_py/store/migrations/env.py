"""Alembic environment: the connection comes from `mirix_py.store.migrations.upgrade`."""

from alembic import context
from sqlmodel import SQLModel

import mirix_py.store.tables  # noqa: F401  (registers the tables on the metadata)

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through mirix_py.store.migrations.upgrade(engine)")
context.configure(connection=connection, target_metadata=SQLModel.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
