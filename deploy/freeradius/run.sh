#!/usr/bin/env bash
# Starts FreeRADIUS in the foreground on this directory's configuration, pointed at the billing
# database. Extra arguments go to freeradius (e.g. -X for a full debug trace).
#
#   external database:  DATABASE_URL=postgres://radius:pw@db:5432/billing deploy/freeradius/run.sh
#   embedded database:  DATA_DIR=./data EMBEDDED_PG_PORT=54329 deploy/freeradius/run.sh
#                       (the same DATA_DIR and EMBEDDED_PG_PORT as `npm start`; the password is
#                       read from DATA_DIR/pg-password, the user is postgres, the database billing)
#
# Ports: RADIUS_AUTH_PORT (1812), RADIUS_ACCT_PORT (1813), RADIUS_LISTEN_ADDR (*).
# RADIUS_RUN_DIR (a temporary directory) holds the pid file. The daemon runs with TZ=UTC (below).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# Debian installs the daemon in /usr/sbin, which a normal user's PATH does not list.
PATH="$PATH:/usr/sbin:/sbin"

if [[ -n "${DATABASE_URL:-}" ]]; then
  # Split the URL with Node (always present beside the app) rather than by hand: it decodes %xx.
  eval "$(node -e '
    const u = new URL(process.env.DATABASE_URL);
    const q = (s) => "\x27" + s.replace(/\x27/g, "\x27\\\x27\x27") + "\x27";
    const out = {
      RADIUS_DB_HOST: u.hostname || "127.0.0.1",
      RADIUS_DB_PORT: u.port || "5432",
      RADIUS_DB_USER: decodeURIComponent(u.username || "postgres"),
      RADIUS_DB_PASSWORD: decodeURIComponent(u.password),
      RADIUS_DB_NAME: decodeURIComponent(u.pathname.slice(1)) || "billing",
    };
    for (const [k, v] of Object.entries(out)) console.log(`export ${k}=${q(v)}`);
  ')"
else
  data_dir="${DATA_DIR:-./data}"
  [[ -r "$data_dir/pg-password" ]] || { echo "no $data_dir/pg-password: set DATA_DIR to the app's data directory, or DATABASE_URL" >&2; exit 2; }
  [[ -n "${EMBEDDED_PG_PORT:-}" ]] || { echo "set EMBEDDED_PG_PORT: the port the app's embedded PostgreSQL listens on (fix it with EMBEDDED_PG_PORT for npm start too)" >&2; exit 2; }
  export RADIUS_DB_HOST=127.0.0.1 RADIUS_DB_PORT="$EMBEDDED_PG_PORT" RADIUS_DB_USER=postgres RADIUS_DB_NAME=billing
  RADIUS_DB_PASSWORD="$(cat "$data_dir/pg-password")"
  export RADIUS_DB_PASSWORD
fi

# Billing days are UTC. FreeRADIUS reads the radcheck Expiration date ("Mon DD YYYY 00:00:00") in
# its own local time zone, and so computes the refusal and the Session-Timeout from local midnight:
# on a host at UTC+3 every subscriber would lose three hours of paid time. TZ=UTC makes it UTC
# midnight; PGTZ=UTC makes the database session read the post-auth query's local '%S' timestamp
# (radpostauth.authdate) in the same zone.
export TZ=UTC PGTZ=UTC

first_dir() { for d in "$@"; do [[ -e "$d" ]] && { echo "$d"; return; }; done; }
export RADIUS_CONF_DIR="$here"
export RADIUS_AUTH_PORT="${RADIUS_AUTH_PORT:-1812}" RADIUS_ACCT_PORT="${RADIUS_ACCT_PORT:-1813}"
export RADIUS_LISTEN_ADDR="${RADIUS_LISTEN_ADDR:-*}" RADIUS_REJECT_DELAY="${RADIUS_REJECT_DELAY:-1}"
export RADIUS_RUN_DIR="${RADIUS_RUN_DIR:-$(mktemp -d -t freeradius-billing.XXXXXX)}"
export RADIUS_DICT_DIR="${RADIUS_DICT_DIR:-$(first_dir /usr/share/freeradius /usr/local/share/freeradius)}"
export RADIUS_LIB_DIR="${RADIUS_LIB_DIR:-$(first_dir /usr/lib/freeradius /usr/lib64/freeradius /usr/local/lib)}"
export RADIUS_SQL_QUERIES="${RADIUS_SQL_QUERIES:-$(first_dir \
  /etc/freeradius/3.0/mods-config/sql/main/postgresql/queries.conf \
  /etc/raddb/mods-config/sql/main/postgresql/queries.conf \
  /usr/local/etc/raddb/mods-config/sql/main/postgresql/queries.conf)}"
[[ -n "$RADIUS_SQL_QUERIES" ]] || { echo "FreeRADIUS's postgresql queries.conf not found or not readable by $(id -un): install freeradius-postgresql, run as root or as a member of group freerad (Debian keeps /etc/freeradius closed to others), or set RADIUS_SQL_QUERIES" >&2; exit 2; }

bin="$(command -v freeradius || command -v radiusd || true)"
[[ -n "$bin" ]] || { echo "freeradius is not installed (Debian: apt-get install freeradius freeradius-postgresql freeradius-utils)" >&2; exit 2; }
exec "$bin" -f -l stdout -d "$here" -n radiusd "$@"
