#!/usr/bin/env bash
# Bring up a local Redis Cluster for the scale-out buffer tests, idempotently (Debian 12, root):
#
#   six redis-server processes on 127.0.0.1:7000-7005 in cluster mode: three masters, one replica each
#   data directories /var/lib/memstrata-redis-cluster/<port> (nodes.conf only: no RDB, no AOF)
#
# The Redis on 6379 is never touched. What a failover needs is kept: each node's cluster state
# (nodes.conf) and replication (full syncs run diskless). With no persistence a node that restarts
# comes back empty and rejoins as a replica of whichever node took over its slots, resyncing from it.
# cluster-node-timeout is 2 s, so a dead master is replaced in about 3-5 s.
#
#   scripts/redis_cluster.sh [up]      start what is stopped; create the cluster if it does not exist
#   scripts/redis_cluster.sh start PORT   restart one node (after a test killed it)
#   scripts/redis_cluster.sh stop      stop all six
# Timings on 2 cores: everything up 0.1 s; created from nothing 3-4 s.
set -euo pipefail

log() { printf '[redis-cluster %(%H:%M:%S)T] %s\n' -1 "$*"; }
die() { log "ERROR: $*"; exit 1; }

PORTS=(7000 7001 7002 7003 7004 7005)
BASE=${MEMSTRATA_REDIS_CLUSTER_DIR:-/var/lib/memstrata-redis-cluster}
NODE_TIMEOUT_MS=2000

node_up() { redis-cli -p "$1" ping 2>/dev/null | grep -q PONG; }
cluster_ok() { redis-cli -p "${PORTS[0]}" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; }
known_nodes() { redis-cli -p "${PORTS[0]}" cluster info 2>/dev/null | sed -n 's/^cluster_known_nodes:\([0-9]*\).*/\1/p'; }

start_node() { # start_node PORT
  local port=$1 dir=$BASE/$1
  node_up "$port" && return
  mkdir -p "$dir"
  redis-server --port "$port" --bind 127.0.0.1 --daemonize yes --dir "$dir" \
    --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout "$NODE_TIMEOUT_MS" \
    --save "" --appendonly no --repl-diskless-sync yes --repl-diskless-sync-delay 0 \
    --logfile "$dir/redis.log" --pidfile "$dir/redis.pid"
  for _ in $(seq 40); do node_up "$port" && return; sleep 0.1; done
  tail -20 "$dir/redis.log" || true
  die "redis-server on $port did not start"
}

create_cluster() {
  local hosts=() port
  for port in "${PORTS[@]}"; do hosts+=("127.0.0.1:$port"); done
  redis-cli --cluster create "${hosts[@]}" --cluster-replicas 1 --cluster-yes >/dev/null
  for _ in $(seq 100); do cluster_ok && return; sleep 0.1; done
  die "the cluster did not reach cluster_state:ok"
}

stop_all() {
  local port
  for port in "${PORTS[@]}"; do redis-cli -p "$port" shutdown nosave 2>/dev/null || true; done
}

case "${1:-up}" in
  up)
    command -v redis-server >/dev/null || die "redis-server is missing (scripts/services.sh installs it)"
    for port in "${PORTS[@]}"; do start_node "$port"; done
    if [ "$(known_nodes)" != "${#PORTS[@]}" ]; then
      if [ "$(known_nodes)" != 1 ]; then # a half-made cluster: start over from empty nodes
        log "resetting a cluster in an unknown state"
        stop_all
        rm -rf "$BASE"
        for port in "${PORTS[@]}"; do start_node "$port"; done
      fi
      log "creating the cluster: 3 masters, 3 replicas"
      create_cluster
    fi
    for _ in $(seq 100); do cluster_ok && break; sleep 0.1; done
    cluster_ok || die "the cluster is not ok: $(redis-cli -p "${PORTS[0]}" cluster info | head -1)"
    log "Redis Cluster up on 127.0.0.1:${PORTS[0]}-${PORTS[-1]}"
    ;;
  start) start_node "${2:?port}" ;;
  stop) stop_all ;;
  *) die "usage: $0 [up|start PORT|stop]" ;;
esac
