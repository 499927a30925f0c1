# Sourced by scripts/setup.sh and scripts/crewai_venv.sh: install packages into a venv with uv (pinned),
# which resolves the same set as pip from the same index and installs it in seconds instead of a
# minute and a half; pip when uv cannot be had or fails. MIRIX_NO_UV=1 always uses pip.
#   venv_install VENV LOG ARG...        # ARG... as for `pip install` (-c FILE, -e ".[all]", ...)
#   venv_install_shown VENV LOG ARG...  # the same, with the log's tail on failure and a line of what it added
#   install_stamp VPY REPO SALT         # what an install of the repo depends on, as one hash
# Every word either tool prints goes to LOG; each returns the installer's exit code.
UV_VERSION="0.13.8"

venv_install() {
    local venv="$1" log="$2"
    shift 2
    local vpy="$venv/bin/python" uv="$venv/bin/uv"
    : >"$log"
    if [[ "${MIRIX_NO_UV:-0}" != 1 ]]; then
        if [[ "$("$uv" --version 2>/dev/null)" != "uv $UV_VERSION"* ]]; then
            "$vpy" -m pip install -q "uv==$UV_VERSION" </dev/null >>"$log" 2>&1 || true
        fi
        if [[ -x "$uv" ]]; then
            # uv reads neither pip's config nor its find-links: the torch already installed (setup.sh
            # hands uv the CPU wheel by its path) stays as it is, pinned by the caller's constraints
            "$uv" pip install --python "$vpy" "$@" </dev/null >>"$log" 2>&1 && return 0
            echo "[venv_install] uv failed; installing with pip" >>"$log"
        fi
    fi
    "$vpy" -m pip install "$@" </dev/null >>"$log" 2>&1
}

# What the last install added, one line (pip: "Successfully installed ..."; uv: " + name==version" lines).
installed_summary() {
    local log="$1"
    if grep -qE '^Successfully installed' "$log"; then
        grep -E '^Successfully installed' "$log" | cut -c1-300
    else
        local n
        n="$(grep -cE '^ \+ ' "$log" || true)"
        [[ "$n" -gt 0 ]] && echo "installed $n packages with uv: $(grep -E '^ \+ ' "$log" | sed 's/^ + //' | head -8 | tr '\n' ' ')..."
    fi
    return 0
}

# venv_install, with the last 40 lines of LOG on stderr when it fails and what it added when it works.
venv_install_shown() {
    local venv="$1" log="$2"
    if ! venv_install "$@"; then
        tail -n 40 "$log" >&2
        return 1
    fi
    installed_summary "$log"
}

# A hash of what an editable install of REPO depends on (SALT, the repo's path, the venv's Python,
# pyproject.toml): the callers keep it in a stamp file and install again when it changes.
install_stamp() {
    local vpy="$1" repo="$2" salt="$3"
    {
        echo "$salt"
        echo "$repo"
        "$vpy" -c 'import sys; print(sys.version)'
        cat "$repo/pyproject.toml"
    } | sha256sum | cut -d' ' -f1
}
