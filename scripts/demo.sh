#!/usr/bin/env bash
# Run the end-to-end demo: set up (idempotent), then `mirix demo` offline.
#   bash scripts/demo.sh [mirix demo options]
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

bash scripts/setup.sh

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False OMP_THREAD_LIMIT=1

[[ -x .venv/bin/mirix ]] || { echo "[demo] .venv/bin/mirix not found" >&2; exit 1; }
exec .venv/bin/mirix demo "$@"
