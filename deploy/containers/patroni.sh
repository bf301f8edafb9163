#!/bin/sh
# The database of the compose profile `ha` (image target postgres-ha; docs/operations.md, "A database
# that fails over"). HA_ROLE says what this container is:
#   etcd     the DCS: one etcd member on 127.0.0.1:DCS_PORT (clients) and DCS_PEER_PORT (peers);
#   patroni  (default) one PostgreSQL node under Patroni: NODE_NAME, PGPORT, REST_PORT, DCS_PORT.
# The first node to take the leader key in etcd initialises the cluster (with the role
# POSTGRES_USER owning POSTGRES_DB, made by the post_bootstrap below); the others clone it with
# pg_basebackup and stream from it. synchronous_mode: a commit is acknowledged once the replica has
# it, so the replica Patroni promotes holds every acknowledged payment.
# `isp-billing-patroni post-bootstrap <connection URL>` is Patroni's post_bootstrap hook.
set -eu
: "${POSTGRES_USER:=billing}" "${POSTGRES_DB:=billing}" "${DCS_PORT:=2379}"

if [ "${1:-}" = post-bootstrap ]; then
  : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
  psql -v ON_ERROR_STOP=1 -qd "$2" <<SQL
CREATE ROLE "$POSTGRES_USER" LOGIN PASSWORD '$POSTGRES_PASSWORD';
CREATE DATABASE "$POSTGRES_DB" OWNER "$POSTGRES_USER";
SQL
  exit 0
fi

if [ "${HA_ROLE:-patroni}" = etcd ]; then
  : "${DCS_PEER_PORT:=2380}"
  exec etcd --name etcd1 --data-dir /var/lib/postgresql/etcd \
    --listen-client-urls "http://127.0.0.1:$DCS_PORT" --advertise-client-urls "http://127.0.0.1:$DCS_PORT" \
    --listen-peer-urls "http://127.0.0.1:$DCS_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$DCS_PEER_PORT" \
    --initial-cluster "etcd1=http://127.0.0.1:$DCS_PEER_PORT" --log-level warn
fi

: "${NODE_NAME:?set NODE_NAME}" "${PGPORT:?set PGPORT}" "${REST_PORT:?set REST_PORT}"
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}" "${REPLICATION_PASSWORD:=$POSTGRES_PASSWORD}"
: "${HA_TTL:=20}" "${HA_LOOP_WAIT:=2}" "${HA_RETRY_TIMEOUT:=5}"
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
mkdir -p "$PGDATA" && chmod 700 "$PGDATA"
conf=/tmp/patroni.yml
cat >"$conf" <<YML
scope: ${HA_SCOPE:-billing}
name: $NODE_NAME
restapi:
  listen: 127.0.0.1:$REST_PORT
  connect_address: 127.0.0.1:$REST_PORT
etcd3:
  hosts: 127.0.0.1:$DCS_PORT
watchdog:
  mode: off
bootstrap:
  dcs:
    ttl: $HA_TTL
    loop_wait: $HA_LOOP_WAIT
    retry_timeout: $HA_RETRY_TIMEOUT
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        max_connections: 300
        wal_log_hints: "on"
        max_wal_senders: 10
        max_replication_slots: 10
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - auth-local: trust
  post_bootstrap: /usr/local/bin/isp-billing-patroni post-bootstrap
postgresql:
  listen: 127.0.0.1:$PGPORT
  connect_address: 127.0.0.1:$PGPORT
  data_dir: $PGDATA
  bin_dir: $bin
  pgpass: /tmp/pgpass
  authentication:
    superuser: { username: postgres, password: "$POSTGRES_PASSWORD" }
    replication: { username: replicator, password: "$REPLICATION_PASSWORD" }
    rewind: { username: postgres, password: "$POSTGRES_PASSWORD" }
  parameters:
    unix_socket_directories: /var/run/postgresql
    password_encryption: scram-sha-256
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
YML
chmod 600 "$conf"
exec patroni "$conf"
