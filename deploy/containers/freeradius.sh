#!/bin/sh
# FreeRADIUS (image target `freeradius`) on deploy/freeradius/run.sh, once the billing schema is
# there: the units apply the migrations at start, and FreeRADIUS reads its tables (nas, radcheck)
# when it starts. DATABASE_URL names the database, as for the units.
set -eu
: "${DATABASE_URL:?set DATABASE_URL}"
for i in $(seq 1 120); do
  if psql "$DATABASE_URL" -Atqc "select 1 from radcheck limit 1" >/dev/null 2>&1; then break; fi
  [ "$i" = 120 ] && { echo "the billing schema (radcheck) did not appear in 120 s" >&2; exit 1; }
  sleep 1
done
exec /etc/isp-billing/freeradius/run.sh "$@"
