#!/bin/sh
# PostgreSQL in the foreground (image target `postgres`): the cluster in PGDATA is created on the
# first start, with the role POSTGRES_USER (password POSTGRES_PASSWORD) owning the database
# POSTGRES_DB. PGPORT (5432) and PG_LISTEN ('*') say where it listens: the local stack runs on
# the host's network and sets 127.0.0.1 and a port of its own.
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
exec "$bin/postgres" -D "$PGDATA" -c "listen_addresses=$PG_LISTEN" -p "$PGPORT" \
  -c unix_socket_directories=/var/run/postgresql -c max_connections=300
