#!/usr/bin/env bash
# The CrewAI adapter in a venv of its own: every crewai 1.15.x pins mcp~=1.26 and openai<3, which
# `.[all]` cannot hold (the MCP server needs mcp 2.x, openai-agents needs openai 3). Builds
# .venv-crewai with `-e .[crewai,llm,dev]` (idempotent: skipped while the stamp matches
# pyproject.toml), then runs tests/integrations/test_crewai.py in it. scripts/test.sh calls this.
#   bash scripts/crewai_venv.sh              # build if needed, run the CrewAI tests
#   bash scripts/crewai_venv.sh -x -vv       # pytest arguments pass through
#   bash scripts/crewai_venv.sh --no-test    # build only (then: .venv-crewai/bin/python examples/crewai_memory.py)
#   MIRIX_FORCE_PIP=1 ...                    # reinstall even if the stamp matches
# Exits with pytest's exit code; "no tests collected" (pytest's 5) counts as failure.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO" || exit 1

PYTHON="${PYTHON:-python3}"
VENV="$REPO/.venv-crewai"
VPY="$VENV/bin/python"
STAMP="$VENV/.mirix-installed"
TORCH_VERSION="2.13.0"  # as scripts/setup.sh: should anything pull torch in, the CPU build it pins
EXTRAS="crewai,llm,dev"

# shellcheck source=scripts/venv_install.sh
. "$REPO/scripts/venv_install.sh"

say() { printf '[crewai] %s\n' "$*"; }
die() { printf '[crewai] ERROR: %s\n' "$*" >&2; exit 1; }

if [[ ! -x "$VPY" ]] || ! "$VPY" -c 'import sys' 2>/dev/null; then
    say "creating .venv-crewai with $PYTHON ($("$PYTHON" --version 2>&1))"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" || die "could not create $VENV"
fi

export PIP_DISABLE_PIP_VERSION_CHECK=1
CONSTRAINTS="$VENV/.mirix-constraints.txt"
printf 'torch==%s\n' "$TORCH_VERSION" >"$CONSTRAINTS"

want_stamp="$(install_stamp "$VPY" "$REPO" "crewai-stamp-v1 $EXTRAS")"
have_stamp="$(cat "$STAMP" 2>/dev/null || true)"

if [[ "${MIRIX_FORCE_PIP:-0}" != 1 && "$want_stamp" == "$have_stamp" ]]; then
    say "mirix-py[$EXTRAS] installed (stamp matches pyproject.toml)"
else
    say "installing -e .[$EXTRAS]"
    rm -f "$STAMP"
    PIPLOG="$VENV/.mirix-pip.log"
    venv_install_shown "$VENV" "$PIPLOG" -c "$CONSTRAINTS" -e ".[$EXTRAS]" \
        || die "installing -e .[$EXTRAS] failed (full log: $PIPLOG)"
    echo "$want_stamp" >"$STAMP"
fi

if [[ "${1:-}" == "--no-test" ]]; then
    exit 0
fi

# MIRIX_EMBEDDER=none: the engine's search runs on full text, so no embedding model (or torch) is needed;
# CrewAI's own vectors come from the test's embedder
export MIRIX_EMBEDDER=none CREWAI_DISABLE_TELEMETRY=true OTEL_SDK_DISABLED=true ANONYMIZED_TELEMETRY=False
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
say "pytest tests/integrations/test_crewai.py"
"$VPY" -m pytest -p no:cacheprovider tests/integrations/test_crewai.py "$@" </dev/null
rc=$?
if [[ $rc -eq 5 ]]; then
    echo "[crewai] ERROR: pytest collected no tests" >&2
    exit 1
fi
exit $rc
