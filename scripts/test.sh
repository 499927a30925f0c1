#!/usr/bin/env bash
# Run the test suite: set up (idempotent), start throwaway PostgreSQL + Chroma
# servers on loopback, run pytest with any arguments given, stop the servers.
#   bash scripts/test.sh                 # whole suite
#   bash scripts/test.sh -q -k search    # pytest arguments pass through
#   MIRIX_SKIP_LINT=1 bash scripts/test.sh ...   # without ruff and mypy (scripts/lint.sh) first
#   MIRIX_TEST_WORKERS=1 bash scripts/test.sh ...  # one pytest process (default: 2 workers, pytest-xdist,
#                                                  # a test file's tests on one worker)
# The CrewAI tests run beside them in their own venv (scripts/crewai_venv.sh; MIRIX_SKIP_CREWAI=1 skips them).
# Exits with pytest's exit code (1 if only the CrewAI tests failed); "no tests collected" (pytest's 5)
# counts as failure.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO" || exit 1

bash scripts/setup.sh || { echo "[test] setup failed" >&2; exit 1; }
# The CrewAI adapter's tests, in .venv-crewai (crewai cannot be installed beside .[all]; see
# scripts/crewai_venv.sh): its venv is built and its tests run in the background from here on, their
# output shown after pytest's; their failure fails the run. MIRIX_SKIP_CREWAI=1 leaves them out.
crewai_pid=""
crewai_log=""
if [[ "${MIRIX_SKIP_CREWAI:-0}" != 1 ]]; then
    crewai_log="$(mktemp -t mirix-crewai.XXXXXX)"
    bash scripts/crewai_venv.sh -q </dev/null >"$crewai_log" 2>&1 &
    crewai_pid=$!
fi
# ruff and mypy on the package before any test: a lint or type error fails the run (MIRIX_SKIP_LINT=1 skips).
# They run while the services and model servers start (mostly waiting on disk and sockets); pytest waits for them.
lint_pid=""
if [[ "${MIRIX_SKIP_LINT:-0}" != 1 ]]; then
    bash scripts/lint.sh </dev/null &
    lint_pid=$!
fi
started_models=()

# Leave servers alone if someone started them before us; otherwise stop them on exit.
started_services=0
cleanup() {
    for pid in $lint_pid $crewai_pid; do  # still running: we left before they ended
        pkill -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null
    done
    [[ -n "$crewai_log" ]] && rm -f "$crewai_log"
    [[ $started_services -eq 1 ]] && bash "$REPO/scripts/services.sh" stop
    for m in "${started_models[@]}"; do bash "$REPO/scripts/local_model.sh" stop "$m"; done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if bash scripts/services.sh status >/dev/null 2>&1; then
    echo "[test] services already running; leaving them running"
else
    started_services=1
    bash scripts/services.sh start </dev/null || { echo "[test] could not start services" >&2; exit 1; }
fi

# shellcheck disable=SC1091
. .services/env

# A real local model on both server modes, for the real-model tier (tests/llm/test_real_model.py).
# Built and downloaded once into the machine's cache; MIRIX_SKIP_REAL_MODEL=1 leaves it out.
if [[ "${MIRIX_SKIP_REAL_MODEL:-0}" != 1 ]]; then
    bash scripts/local_model.sh provision </dev/null || { echo "[test] local model provisioning failed" >&2; exit 1; }
    for mode in functions template; do
        # ours to stop only if this run started it: a busy server can miss a status check's deadline
        # One thread each: beside pytest's workers a two-thread server's threads wait on each other
        # whenever the scheduler parks one (docs/setup.md, "Where the suite's time goes").
        said="$(MIRIX_MODEL_THREADS="${MIRIX_MODEL_THREADS:-1}" bash scripts/local_model.sh start "$mode" </dev/null 2>&1 >/dev/null)" \
            || { echo "$said" >&2; echo "[test] could not start the $mode model server" >&2; exit 1; }
        echo "$said" >&2
        [[ "$said" == *"already answering"* ]] || started_models+=("$mode")
        eval "$(bash scripts/local_model.sh env "$mode")"
    done
fi

if [[ -n "$lint_pid" ]]; then
    wait "$lint_pid"; lint_rc=$?; lint_pid=""
    [[ $lint_rc -eq 0 ]] || { echo "[test] lint failed" >&2; exit 1; }
fi

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False OMP_THREAD_LIMIT=1

echo "[test] MIRIX_TEST_PG_URL=$MIRIX_TEST_PG_URL MIRIX_TEST_CHROMA_URL=$MIRIX_TEST_CHROMA_URL" \
     "MIRIX_TEST_LLM_FUNCTIONS_URL=${MIRIX_TEST_LLM_FUNCTIONS_URL:-} MIRIX_TEST_LLM_TEMPLATE_URL=${MIRIX_TEST_LLM_TEMPLATE_URL:-}"
# Two workers by default: much of a test's time is waiting on a server, a subprocess or the disk, and
# every test has its own data dir, schema and Chroma database. tests/conftest.py schedules a file's
# tests on one worker (its module-scoped servers start once) and the real-model tier first, as one
# unit; `--no-loadscope-reorder` keeps that order.
workers="${MIRIX_TEST_WORKERS:-2}"
parallel=()
[[ "$workers" -gt 1 ]] && parallel=(-n "$workers" --no-loadscope-reorder)
.venv/bin/python -m pytest "${parallel[@]}" --durations=15 "$@" </dev/null  # the slowest tests named: where the suite's time goes
rc=$?
if [[ $rc -eq 5 ]]; then
    echo "[test] ERROR: pytest collected no tests" >&2
    exit 1
fi
if [[ -n "$crewai_pid" ]]; then
    wait "$crewai_pid"; crewai_rc=$?; crewai_pid=""
    cat "$crewai_log"
    if [[ $crewai_rc -ne 0 ]]; then
        echo "[test] ERROR: the CrewAI tests failed (scripts/crewai_venv.sh)" >&2
        [[ $rc -eq 0 ]] && rc=1
    fi
fi
exit $rc
