"""`python -m mirix_py.cli`: the `mirix` command, as the console script runs it."""

from mirix_py.cli.commands import app

if __name__ == "__main__":  # pragma: no cover
    app()
