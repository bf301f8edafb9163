CREATE TABLE "usage_deltas" (
	"username" text NOT NULL,
	"day" date NOT NULL,
	"upload" bigint NOT NULL,
	"download" bigint NOT NULL,
	"refresh" boolean NOT NULL,
	"nas" "inet"
);
--> statement-breakpoint
-- Accounting ingest (issue 26). Each Interim-Update's trigger wrote three tables inside
-- FreeRADIUS's transaction (the subscriber's counters, fup_queue, the day's daily_usage row), and
-- each Stop also flipped is_online, which is in an index predicate: a non-HOT update of subscribers
-- and its 20 indexes. That doubled the PostgreSQL CPU of an interim and of a Stop against the stock
-- schema. Now the trigger appends the packet's octets to usage_deltas, a heap with no index, and the
-- usage rollup (shared/access/usage-rollup.ts, every USAGE_ROLLUP_SECONDS) applies them set-based.
-- The rollup deletes what it applies, so the table stays small: vacuum it after every 20,000 dead rows.
ALTER TABLE usage_deltas SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000,
  autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 20000);
--> statement-breakpoint
-- The trigger runs with FreeRADIUS's own rights (no SECURITY DEFINER, no SET search_path: switching
-- the search path on every call cost more than the insert itself), so FreeRADIUS's role needs
-- INSERT on usage_deltas: every role that may update radacct gets it here (grants.sql has it too),
-- and the function names the table with its schema.
DO $grant$
DECLARE
  role_name name;
BEGIN
  FOR role_name IN
    SELECT DISTINCT a.grantee::regrole::text
      FROM pg_class c, aclexplode(c.relacl) a
     WHERE c.oid = 'radacct'::regclass AND a.privilege_type = 'UPDATE'
       AND a.grantee <> 0 AND a.grantee <> c.relowner
  LOOP
    EXECUTE format('GRANT INSERT ON usage_deltas TO %s', role_name);
  END LOOP;
END
$grant$;
--> statement-breakpoint
DO $create$
BEGIN
  EXECUTE format($fn$
CREATE OR REPLACE FUNCTION radacct_update_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  -- Octets are from the NAS's side: input = from the subscriber (upload), output = to it (download).
  -- A total that goes down (a NAS bug, a counter wrap without gigawords) counts as no traffic.
  upload bigint := greatest(coalesce(NEW.acctinputoctets, 0) - coalesce(OLD.acctinputoctets, 0), 0);
  download bigint := greatest(coalesce(NEW.acctoutputoctets, 0) - coalesce(OLD.acctoutputoctets, 0), 0);
  -- A Stop, or a session that moved (address, NAS, user): the rollup recomputes the session state.
  moved boolean := OLD.acctstoptime IS DISTINCT FROM NEW.acctstoptime
    OR OLD.framedipaddress IS DISTINCT FROM NEW.framedipaddress
    OR OLD.nasipaddress IS DISTINCT FROM NEW.nasipaddress
    OR OLD.username IS DISTINCT FROM NEW.username;
BEGIN
  IF OLD.username IS DISTINCT FROM NEW.username AND OLD.username IS NOT NULL THEN
    INSERT INTO %1$I.usage_deltas (username, day, upload, download, refresh, nas)
    VALUES (OLD.username, (now() AT TIME ZONE 'UTC')::date, 0, 0, true, NULL);
  END IF;
  IF NEW.username IS NULL OR (upload = 0 AND download = 0 AND NOT moved) THEN
    RETURN NULL;
  END IF;
  INSERT INTO %1$I.usage_deltas (username, day, upload, download, refresh, nas)
  VALUES (NEW.username, (now() AT TIME ZONE 'UTC')::date, upload, download, moved,
          CASE WHEN moved THEN NEW.nasipaddress END);
  RETURN NULL;
END;
$$$fn$, current_schema());
END
$create$;
