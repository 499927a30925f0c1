"""Keeping a data dir sound and portable: the consistency doctor (`doctor`), backups and
restores (`backup`), export and import as JSON lines (`portability`)."""
