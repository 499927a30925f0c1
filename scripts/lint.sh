#!/usr/bin/env bash
# Lint and type-check the package (configuration in pyproject.toml: [tool.ruff], [tool.mypy]).
#   bash scripts/lint.sh          # ruff on mirix_py and mirix_synth, then mypy
# Exits non-zero on the first failing check; scripts/test.sh runs this before the tests.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO" || exit 1
VPY="${VPY:-$REPO/.venv/bin/python}"

for tool in ruff mypy; do
    "$VPY" -m "$tool" --version >/dev/null 2>&1 || { echo "[lint] $tool is missing: pip install -e '.[dev]'" >&2; exit 1; }
done
echo "[lint] ruff check mirix_py mirix_synth"
"$VPY" -m ruff check --no-cache mirix_py mirix_synth || { echo "[lint] ruff found problems" >&2; exit 1; }
echo "[lint] mypy (files and strictness from pyproject.toml)"
# The machine's cache, shared by clones: mypy trusts a cached module whose source hash matches, whatever
# its path or mtime, so a fresh clone checks only what changed.
export MYPY_CACHE_DIR="${MYPY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mirix/mypy}"
"$VPY" -m mypy || { echo "[lint] mypy found problems" >&2; exit 1; }
