#!/bin/sh
# PostgreSQL in the foreground (image target `postgres`): the cluster in PGDATA is created on the
# first start, with the role POSTGRES_USER (password POSTGRES_PASSWORD) owning the database
# POSTGRES_DB. PGPORT (5432) and PG_LISTEN ('*') say where it listens: the local stack runs on
# the host's network and sets 127.0.0.1 and a port of its own.
# PGBACKREST_STANZA set (compose sets `billing`): WAL is archived with pgBackRest into its
# repository /var/lib/pgbackrest (a volume), and the stanza is created once the server answers
# (docs/operations.md, "pgBackRest"). Needs an init as PID 1 (compose: `init: true`) to reap that
# background step.
set -eu
: "${POSTGRES_USER:=billing}" "${POSTGRES_DB:=billing}" "${PGPORT:=5432}" "${PG_LISTEN:=*}"
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  "$bin/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" -A scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  echo "host all all ::/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  "$bin/pg_ctl" -D "$PGDATA" -o "-c listen_addresses='' -p $PGPORT" -w start >/dev/null
  PGPASSWORD="$POSTGRES_PASSWORD" psql -h /var/run/postgresql -p "$PGPORT" -U "$POSTGRES_USER" -d postgres -qc \
    "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\"" 2>/dev/null || true
  "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
fi
set -- -c max_connections=300
if [ -n "${PGBACKREST_STANZA:-}" ]; then
  cat >/etc/pgbackrest/pgbackrest.conf <<CONF
[global]
repo1-path=/var/lib/pgbackrest
repo1-retention-full=${PGBACKREST_RETENTION_FULL:-2}
compress-type=zst
start-fast=y
log-level-console=warn
log-level-file=info

[$PGBACKREST_STANZA]
pg1-path=$PGDATA
pg1-port=$PGPORT
pg1-socket-path=/var/run/postgresql
pg1-user=$POSTGRES_USER
pg1-database=$POSTGRES_DB
CONF
  set -- "$@" -c archive_mode=on -c "archive_command=pgbackrest --stanza=$PGBACKREST_STANZA archive-push %p" \
    -c archive_timeout=60
  # stanza-create is idempotent; it needs the server up, hence in the background.
  (
    until pg_isready -q -h /var/run/postgresql -p "$PGPORT"; do sleep 0.5; done
    PGPASSWORD="$POSTGRES_PASSWORD" pgbackrest --stanza="$PGBACKREST_STANZA" stanza-create ||
      echo "pgbackrest stanza-create failed: WAL archiving fails until it succeeds" >&2
  ) &
fi
exec "$bin/postgres" -D "$PGDATA" -c "listen_addresses=$PG_LISTEN" -p "$PGPORT" \
  -c unix_socket_directories=/var/run/postgresql "$@"
