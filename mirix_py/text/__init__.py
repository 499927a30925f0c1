"""Text as the engine reads it: words and query terms (`words`), dates in words and relative time
phrases (`dates`), what of a long memory goes into a prompt (`passages`). Pure functions, below the records."""
