#!/usr/bin/env bash
# Run the test suite: set up (idempotent), start throwaway PostgreSQL + Chroma
# servers on loopback, run pytest with any arguments given, stop the servers.
#   bash scripts/test.sh                 # whole suite
#   bash scripts/test.sh -q -k search    # pytest arguments pass through
# Exits with pytest's exit code; "no tests collected" (pytest's 5) counts as failure.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO" || exit 1

bash scripts/setup.sh || { echo "[test] setup failed" >&2; exit 1; }

# Leave servers alone if someone started them before us; otherwise stop them on exit.
if bash scripts/services.sh status >/dev/null 2>&1; then
    echo "[test] services already running; leaving them running"
else
    trap 'bash "$REPO/scripts/services.sh" stop' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    bash scripts/services.sh start </dev/null || { echo "[test] could not start services" >&2; exit 1; }
fi

# shellcheck disable=SC1091
. .services/env

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False OMP_THREAD_LIMIT=1

echo "[test] MIRIX_TEST_PG_URL=$MIRIX_TEST_PG_URL MIRIX_TEST_CHROMA_URL=$MIRIX_TEST_CHROMA_URL"
.venv/bin/python -m pytest "$@" </dev/null
rc=$?
if [[ $rc -eq 5 ]]; then
    echo "[test] ERROR: pytest collected no tests" >&2
    exit 1
fi
exit $rc
