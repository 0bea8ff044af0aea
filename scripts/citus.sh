#!/usr/bin/env bash
# Bring up a local Citus cluster for the scale-out tests, idempotently (Debian 12, PostgreSQL 15, root):
#
#   coordinator  127.0.0.1:5440   PostgreSQL cluster 15/citus_coord
#   worker 1     127.0.0.1:5441   PostgreSQL cluster 15/citus_w1
#   worker 2     127.0.0.1:5442   PostgreSQL cluster 15/citus_w2
#
# Each node is a cluster of its own (Citus needs shared_preload_libraries = 'citus'), so the main
# cluster on 5432 is never reconfigured or restarted. Loopback trust auth, superuser role `root`.
#
# Citus 13.2.2 is not packaged for Debian 12: it is built from the release source kept in
# ../shared/vendor/citus (override with CITUS_VENDOR) and installed into PostgreSQL 15's lib directory,
# so later runs on the same machine skip the build (it is skipped whenever citus.so is present).
# Timings on 2 cores: build ~7 min (busy) / ~3.5 min (quiet); clusters created 10 s; all up 0.3 s.
#
# A database usable by memstrata on Citus is made with `scripts/citus.sh createdb NAME`: Citus does
# not propagate CREATE DATABASE, so the database and the `citus` and `vector` extensions are created
# on every node and the workers are registered from inside the new database. `dropdb NAME` undoes it.
#
# Extra nodes for the operations tests (a worker added and rebalanced onto, a cluster set up from the
# docs): `node-up PORT [password]` creates and starts the cluster 15/citus_<PORT> (the same settings;
# with `password`, every TCP connection, the superuser's included, must authenticate with SCRAM, and only
# the Unix socket trusts), `node-drop PORT` stops and deletes it. The three clusters above are never touched.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

log() { printf '[citus %(%H:%M:%S)T] %s\n' -1 "$*"; }
die() { log "ERROR: $*"; exit 1; }

PG_MAJOR=15
PG_BIN=/usr/lib/postgresql/$PG_MAJOR/bin
COORD_PORT=5440
WORKER_PORTS=(5441 5442)
declare -A NAME_OF=([5440]=citus_coord [5441]=citus_w1 [5442]=citus_w2)
name_of() { echo "${NAME_OF[$1]:-citus_$1}"; }
ALL_PORTS=("$COORD_PORT" "${WORKER_PORTS[@]}")
HERE=$(cd "$(dirname "$0")" && pwd)
VENDOR=${CITUS_VENDOR:-$HERE/../../shared/vendor/citus}
[ -d "$VENDOR" ] || VENDOR=/work/shared/vendor/citus

node_up() { pg_isready -q -h 127.0.0.1 -p "$1" 2>/dev/null; }
psql_at() { # psql_at PORT DB SQL...
  local port=$1 db=$2
  shift 2
  PGOPTIONS='-c client_min_messages=warning' \
    psql -h 127.0.0.1 -p "$port" -U postgres -d "$db" -v ON_ERROR_STOP=1 -qtAX "$@"
}

# ---------------------------------------------------------------- build
build_citus() {
  local libdir
  libdir=$("$PG_BIN/pg_config" --pkglibdir)
  if [ -f "$libdir/citus.so" ]; then
    log "Citus already installed in $libdir"
    return
  fi
  [ -f "$VENDOR/citus-13.2.2.tar.gz" ] || die "no Citus source at $VENDOR (set CITUS_VENDOR)"
  log "building Citus 13.2.2 from $VENDOR (several minutes on 2 cores)"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "postgresql-server-dev-$PG_MAJOR" make gcc \
    libzstd-dev liblz4-dev libcurl4-openssl-dev libkrb5-dev libselinux1-dev libxslt1-dev \
    libpam0g-dev libreadline-dev >/dev/null
  local build
  build=$(mktemp -d)
  (
    cd "$build"
    tar xzf "$VENDOR/citus-13.2.2.tar.gz"
    cd citus-13.2.2
    patch -s -p1 <"$VENDOR/pg15-minor-release.patch"
    ./configure -q PG_CONFIG="$PG_BIN/pg_config" >/dev/null
    make -s -j"$(nproc)" >/dev/null 2>&1 || make -j1 # on failure, rerun serially to show the error
    make -s install >/dev/null
  )
  rm -rf "$build"
  [ -f "$libdir/citus.so" ] || die "Citus build finished but citus.so is not in $libdir"
  log "Citus installed"
}

# ---------------------------------------------------------------- clusters
configure_node() { # configure_node PORT [password]
  local name conf auth=trust
  name=$(name_of "$1")
  conf=/etc/postgresql/$PG_MAJOR/$name
  [ "${2:-}" = password ] && auth=scram-sha-256
  cat >"$conf/conf.d/memstrata-citus.conf" <<EOF
# written by memstrata scripts/citus.sh
listen_addresses = '127.0.0.1'
shared_preload_libraries = 'citus'
max_connections = 200
shared_buffers = 128MB
max_prepared_transactions = 200
wal_level = logical
citus.max_cached_conns_per_worker = 2
EOF
  cat >"$conf/pg_hba.conf" <<EOF
# written by memstrata scripts/citus.sh: loopback $auth (trust: as on the main test cluster)
local all all trust
host all all 127.0.0.1/32 $auth
host all all ::1/128 $auth
EOF
  chown postgres:postgres "$conf/conf.d/memstrata-citus.conf" "$conf/pg_hba.conf"
  log "configured $name"
}

start_node() { # start_node PORT [password]
  local port=$1 name
  name=$(name_of "$1")
  if node_up "$port"; then return; fi
  if [ ! -d "/etc/postgresql/$PG_MAJOR/$name" ]; then
    pg_createcluster "$PG_MAJOR" "$name" -p "$port" >/dev/null
    configure_node "$port" "${2:-}"
  fi
  pg_ctlcluster --skip-systemctl-redirect "$PG_MAJOR" "$name" start
  for _ in $(seq 60); do node_up "$port" && break; sleep 0.5; done
  node_up "$port" || {
    tail -20 "/var/log/postgresql/postgresql-$PG_MAJOR-$name.log" || true
    die "$name did not start"
  }
  [ "$(psql_sock "$port" -c "select count(*) from pg_roles where rolname = 'root'")" = 1 ] \
    || psql_sock "$port" -c 'create role root superuser login'
  log "$name started on $port"
}

psql_sock() { # psql_sock PORT SQL...: as postgres through the Unix socket (trusted on every node)
  local port=$1
  shift
  su postgres -c "psql -p $port -d postgres -v ON_ERROR_STOP=1 -qtAX $(printf '%q ' "$@")"
}

drop_node() { # drop_node PORT: stop and delete an extra node's cluster
  local name
  name=$(name_of "$1")
  [ -z "${NAME_OF[$1]:-}" ] || die "refusing to drop $name: it is one of the three test nodes"
  [ -d "/etc/postgresql/$PG_MAJOR/$name" ] || return 0
  pg_dropcluster --stop "$PG_MAJOR" "$name" 2>/dev/null || true
  rm -rf "/etc/postgresql/$PG_MAJOR/$name" # pg_dropcluster leaves conf.d/memstrata-citus.conf behind
  log "$name dropped"
}

# Make the ts_match_vq operator usable by GIN under RLS (see docs/postgres.md, "Keyword search").
leakproof_fts() { # leakproof_fts PORT DB (once: on a worker in the metadata Citus refuses the DDL)
  [ "$(psql_at "$1" "$2" -c "select proleakproof from pg_proc where proname = 'ts_match_vq'")" = t ] \
    || psql_at "$1" "$2" -c 'alter function ts_match_vq(tsvector, tsquery) leakproof' >/dev/null
}

createdb_all() { # createdb_all NAME: the database, extensions and worker registration on every node
  local db=$1 port
  for port in "${ALL_PORTS[@]}"; do
    [ "$(psql_at "$port" postgres -c "select count(*) from pg_database where datname = '$db'")" = 1 ] \
      || psql_at "$port" postgres -c "create database \"$db\" owner root"
    # only when missing: a worker already in the metadata refuses even CREATE EXTENSION IF NOT EXISTS
    for ext in citus vector; do
      [ "$(psql_at "$port" "$db" -c "select count(*) from pg_extension where extname = '$ext'")" = 1 ] \
        || psql_at "$port" "$db" -c "create extension $ext"
    done
    leakproof_fts "$port" "$db"
  done
  psql_at "$COORD_PORT" "$db" -c "select citus_set_coordinator_host('127.0.0.1', $COORD_PORT)" >/dev/null
  for port in "${WORKER_PORTS[@]}"; do
    psql_at "$COORD_PORT" "$db" -c "select citus_add_node('127.0.0.1', $port)" >/dev/null
  done
}

dropdb_all() { # dropdb_all NAME
  local port
  for port in "${ALL_PORTS[@]}"; do
    psql_at "$port" postgres -c "drop database if exists \"$1\" with (force)"
  done
}

case "${1:-up}" in
  up)
    build_citus
    for port in "${ALL_PORTS[@]}"; do start_node "$port"; done
    createdb_all memstrata
    log "Citus up: coordinator 127.0.0.1:$COORD_PORT, workers ${WORKER_PORTS[*]}, database memstrata"
    ;;
  createdb) createdb_all "${2:?database name}" ;;
  dropdb) dropdb_all "${2:?database name}" ;;
  node-up) start_node "${2:?port}" "${3:-}" ;;
  node-drop) drop_node "${2:?port}" ;;
  stop)
    for port in "${ALL_PORTS[@]}"; do
      pg_ctlcluster --skip-systemctl-redirect "$PG_MAJOR" "${NAME_OF[$port]}" stop 2>/dev/null || true
    done
    ;;
  *) die "usage: $0 [up|createdb NAME|dropdb NAME|node-up PORT [password]|node-drop PORT|stop]" ;;
esac
