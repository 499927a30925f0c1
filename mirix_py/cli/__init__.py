"""The `mirix` command (`commands`), what it makes of its arguments (`args`), the writes it sends
to the server that owns a data dir (`remote`), and the commands that run a whole: the desktop assistant
(`assistant`), the demo (`demo`), schema export (`schemas`), the move of vectors into PostgreSQL
(`migrate_vectors`)."""
