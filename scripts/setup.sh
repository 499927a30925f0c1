#!/usr/bin/env bash
# Set up everything mirix-py needs on a Debian machine: system packages, .venv,
# torch (CPU, pinned), and the package itself with all extras.
# Idempotent: each step checks first and is skipped when nothing is missing.
#
# Environment knobs:
#   PYTHON=python3        interpreter used to create .venv
#   MIRIX_SKIP_APT=1      skip the system-package step
#   MIRIX_FORCE_PIP=1     re-run the install even if the stamp matches
#   MIRIX_NO_UV=1         install with pip instead of uv (scripts/venv_install.sh)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

PYTHON="${PYTHON:-python3}"
VENV="$REPO/.venv"
VPY="$VENV/bin/python"
STAMP="$VENV/.mirix-installed"
TORCH_VERSION="2.13.0"
APT_PACKAGES=(tesseract-ocr fonts-dejavu-core postgresql curl chromium chromium-driver xvfb openbox xdotool)
# chromium: the viewer's browser test; fonts: synthetic screenshots; xvfb + openbox + xdotool: capture from a real X display

# shellcheck source=scripts/venv_install.sh
. "$REPO/scripts/venv_install.sh"

say() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- apt packages
pkg_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

pg_bin_present() {
    compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

if [[ "${MIRIX_SKIP_APT:-0}" != 1 ]]; then
    missing=()
    for p in "${APT_PACKAGES[@]}"; do
        pkg_installed "$p" || missing+=("$p")
    done
    # The postgresql meta-package may be installed while the server binaries are
    # not (e.g. removed by hand); initdb/pg_ctl are what services.sh needs.
    if [[ ${#missing[@]} -eq 0 ]] && ! pg_bin_present; then
        missing+=(postgresql)
    fi
    if [[ ${#missing[@]} -gt 0 ]]; then
        command -v apt-get >/dev/null || die "apt-get not found; install by hand: ${missing[*]}"
        [[ $(id -u) -eq 0 ]] || die "need root to install: ${missing[*]}"
        say "installing system packages: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq </dev/null
        apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
        pg_bin_present || die "postgresql installed but no /usr/lib/postgresql/*/bin/initdb"
    else
        say "system packages present: ${APT_PACKAGES[*]}"
    fi
fi

# ------------------------------------------------------------------------ venv
if [[ ! -x "$VPY" ]] || ! "$VPY" -c 'import sys' 2>/dev/null; then
    say "creating .venv with $PYTHON ($("$PYTHON" --version 2>&1))"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
else
    say ".venv present ($("$VPY" --version 2>&1))"
fi

dist_version() {  # version of an installed distribution, without importing it
    "$VPY" - "$1" <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version, PackageNotFoundError
try:
    print(version(sys.argv[1]))
except PackageNotFoundError:
    sys.exit(1)
EOF
}

export PIP_DISABLE_PIP_VERSION_CHECK=1
# Keep pip from ever replacing the CPU torch by a CUDA build from the registry.
CONSTRAINTS="$VENV/.mirix-constraints.txt"
printf 'torch==%s\n' "$TORCH_VERSION" >"$CONSTRAINTS"

# ----------------------------------------------------------------------- torch
have_torch="$(dist_version torch || true)"
if [[ "${have_torch%%+*}" == "$TORCH_VERSION" ]]; then
    say "torch $have_torch present"
else
    PIPLOG="$VENV/.mirix-pip-torch.log"
    # The CPU wheel where pip's configuration keeps wheels (its find-links, read from pip itself rather
    # than guessed): given by its path, uv installs it too. Without it, pip and its configuration choose.
    torch_wheel=""
    find_links="${PIP_FIND_LINKS:-} $("$VPY" -m pip config get global.find-links 2>/dev/null || true)"
    for dir in $find_links; do
        torch_wheel="$(compgen -G "${dir#file://}/torch-$TORCH_VERSION+cpu-*.whl" | head -n 1 || true)"
        [[ -n "$torch_wheel" ]] && break
    done
    if [[ -n "$torch_wheel" ]]; then
        say "installing torch==$TORCH_VERSION from $torch_wheel${have_torch:+, replacing $have_torch}"
        venv_install_shown "$VENV" "$PIPLOG" "$torch_wheel" || die "installing $torch_wheel failed (full log: $PIPLOG)"
    else
        say "pip install torch==$TORCH_VERSION${have_torch:+, replacing $have_torch}"
        if ! "$VPY" -m pip install "torch==$TORCH_VERSION" </dev/null >"$PIPLOG" 2>&1; then
            tail -n 40 "$PIPLOG" >&2
            die "pip install torch==$TORCH_VERSION failed (full log: $PIPLOG)"
        fi
    fi
fi

# ------------------------------------------------------------- mirix-py itself
want_stamp="$(install_stamp "$VPY" "$REPO" "stamp-v1")"
have_stamp="$(cat "$STAMP" 2>/dev/null || true)"

if [[ "${MIRIX_FORCE_PIP:-0}" != 1 && "$want_stamp" == "$have_stamp" ]] \
        && dist_version mirix-py >/dev/null; then
    say "mirix-py[all] installed (stamp matches pyproject.toml)"
else
    say "installing -e .[all]"
    rm -f "$STAMP"
    PIPLOG="$VENV/.mirix-pip.log"
    venv_install_shown "$VENV" "$PIPLOG" -c "$CONSTRAINTS" -e ".[all]" \
        || die "installing -e .[all] failed (full log: $PIPLOG)"
    got_torch="$(dist_version torch || true)"
    [[ "${got_torch%%+*}" == "$TORCH_VERSION" ]] \
        || die "torch changed to '$got_torch' during install; expected $TORCH_VERSION"
    echo "$want_stamp" >"$STAMP"
fi

say "done"
