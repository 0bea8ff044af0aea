#!/usr/bin/env bash
# Bring up the services the test suite needs, idempotently (Debian 12, run as root):
#
#   PostgreSQL  127.0.0.1:5432, trust auth on loopback, superuser role `root`, databases `root` and `test`,
#               with the pgvector extension (>= 0.8 for hnsw.iterative_scan) available
#   Redis       127.0.0.1:6379, no persistence
#
# What it touches depends on the machine:
#   * services already running: nothing is reconfigured or restarted; pgvector is built only if
#     `vector` is missing from pg_available_extensions (Debian 12 has no pgvector package).
#   * plain machine (PostgreSQL preinstalled but stopped, no Redis): adds loopback trust lines to
#     pg_hba.conf, starts the cluster, creates `root`/`root`/`test`, builds pgvector, installs and
#     starts Redis.
# pgvector is built from Debian 13's *source* package against postgresql-server-dev-<running major>;
# the source-only apt entry reuses the machine's own Debian mirror, so no host name lives here.
# Timings on 2 cores: everything up 0.4 s; daemons stopped 3 s; pgvector build 25-45 s.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

log() { printf '[services %(%H:%M:%S)T] %s\n' -1 "$*"; }
die() { log "ERROR: $*"; exit 1; }

APT_UPDATED=0
apt_update() { if [ "$APT_UPDATED" = 0 ]; then apt-get update -qq; APT_UPDATED=1; fi; }
apt_install() {
  [ "$(id -u)" = 0 ] || die "need root to install: $*"
  apt_update
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

PG_HOST=127.0.0.1
PG_PORT=5432
pg_up() { pg_isready -q -h "$PG_HOST" -p "$PG_PORT" 2>/dev/null; }
psql_su() { psql -h "$PG_HOST" -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -qtAX "$@"; }
vector_version() { psql_su -c "select coalesce(max(default_version), '') from pg_available_extensions where name = 'vector'"; }

redis_up() { # no redis-cli needed: speak RESP over bash's /dev/tcp
  (exec 3<>/dev/tcp/127.0.0.1/6379 && printf 'PING\r\n' >&3 && timeout 2 head -c 5 <&3 | grep -q PONG) 2>/dev/null
}

debian_mirror() { # first Debian archive URI in the machine's apt sources (deb822 or one-line format)
  (cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null || true) \
    | grep -E '^(URIs:|deb )' \
    | grep -oE '[a-z]+://[^ ]+/debian/?( |$)' | grep -oE '[a-z]+://[^ ]+/debian' | head -1 || true
}

# ---------------------------------------------------------------- PostgreSQL
command -v pg_isready >/dev/null || apt_install postgresql-client
if pg_up; then
  log "PostgreSQL already running"
else
  PG_MAJOR=$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -1 || true)
  if [ -z "$PG_MAJOR" ]; then apt_install postgresql-15; PG_MAJOR=15; fi
  [ -d "/etc/postgresql/$PG_MAJOR/main" ] || pg_createcluster "$PG_MAJOR" main >/dev/null
  HBA=/etc/postgresql/$PG_MAJOR/main/pg_hba.conf
  if ! grep -q '^# memstrata-ci-trust' "$HBA"; then # loopback trust, as on a service machine
    {
      echo '# memstrata-ci-trust'
      echo 'local all all trust'
      echo 'host all all 127.0.0.1/32 trust'
      echo 'host all all ::1/128 trust'
      cat "$HBA"
    } >"$HBA.tmp"
    mv "$HBA.tmp" "$HBA"
    chown postgres:postgres "$HBA"
    chmod 640 "$HBA"
  fi
  pg_ctlcluster --skip-systemctl-redirect "$PG_MAJOR" main start
  for _ in $(seq 60); do pg_up && break; sleep 0.5; done
  pg_up || { tail -20 "/var/log/postgresql/postgresql-$PG_MAJOR-main.log" || true; die "PostgreSQL did not start"; }
  log "PostgreSQL $PG_MAJOR started"
fi
PG_MAJOR=$(($(psql_su -c 'show server_version_num') / 10000))
[ "$(psql_su -c "select count(*) from pg_roles where rolname = 'root'")" = 1 ] \
  || psql_su -c 'create role root superuser login'
for db in root test; do
  [ "$(psql_su -c "select count(*) from pg_database where datname = '$db'")" = 1 ] \
    || psql_su -c "create database $db owner root"
done

# ---------------------------------------------------------------- pgvector
if [ -n "$(vector_version)" ]; then
  log "pgvector available: $(vector_version)"
else
  log "building pgvector for PostgreSQL $PG_MAJOR from the Debian 13 source package"
  SRC=/etc/apt/sources.list.d/debian-trixie-src.sources
  if [ ! -f "$SRC" ]; then
    # Source-only entry (Types: deb-src): apt never installs trixie binaries from it.
    URI=$(debian_mirror)
    [ -n "$URI" ] || die "no Debian mirror found in the apt sources"
    printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: %s\n' \
      "$URI" /usr/share/keyrings/debian-archive-keyring.gpg >"$SRC"
    APT_UPDATED=0
  fi
  apt_install "postgresql-server-dev-$PG_MAJOR" make gcc dpkg-dev
  BUILD=$(mktemp -d)
  trap 'rm -rf "$BUILD"' EXIT
  PG_CONFIG="/usr/lib/postgresql/$PG_MAJOR/bin/pg_config"
  (
    cd "$BUILD"
    apt-get source -qq --download-only pgvector >/dev/null 2>&1 || die "apt-get source pgvector failed"
    tar xzf pgvector_*.orig.tar.gz
    cd pgvector-*/
    make -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" with_llvm=no >/dev/null
    make -s install PG_CONFIG="$PG_CONFIG" with_llvm=no >/dev/null
  )
  [ -n "$(vector_version)" ] || die "pgvector build finished but the extension is not available"
  log "pgvector installed: $(vector_version)"
fi
case "$(vector_version)" in
  0.[0-7].*) log "WARNING: pgvector $(vector_version) lacks hnsw.iterative_scan (needs >= 0.8)" ;;
esac

# ---------------------------------------------------------------- Redis
if redis_up; then
  log "Redis already running"
else
  command -v redis-server >/dev/null || apt_install redis-server # prints a harmless policy-rc.d notice
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --dir /tmp --logfile /tmp/memstrata-redis.log
  for _ in $(seq 40); do redis_up && break; sleep 0.25; done
  redis_up || { cat /tmp/memstrata-redis.log || true; die "Redis did not start"; }
  log "Redis started: $(redis-server --version | grep -oE 'v=[0-9.]+')"
fi
