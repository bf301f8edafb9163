CREATE TABLE "usage_seen" (
	"radacctid" bigint PRIMARY KEY NOT NULL,
	"input" bigint NOT NULL,
	"output" bigint NOT NULL
);
--> statement-breakpoint
-- Accounting ingest (issue 26): an Interim-Update fires no trigger any more. The append of each
-- interim's octets to usage_deltas (migration 0032) was a trigger call and an INSERT through SPI
-- inside FreeRADIUS's transaction: at 16 concurrent writers it took the interim from 0.92-0.97x the
-- stock schema's rate (trigger disabled) to 0.72x. Now the usage rollup reads the open sessions'
-- totals, counts what grew since usage_seen (the totals it counted last) and stores the new totals;
-- it runs every few seconds over the open sessions only (radacct_open_id_idx), whatever the
-- history. Sessions seen at a Start (insert trigger below) or when a trigger moves them.
-- The rollup rewrites each row: room on its page keeps those updates HOT.
ALTER TABLE usage_seen SET (fillfactor = 70);
--> statement-breakpoint
INSERT INTO usage_seen (radacctid, input, output)
SELECT radacctid, coalesce(acctinputoctets, 0), coalesce(acctoutputoctets, 0)
  FROM radacct WHERE acctstoptime IS NULL
ON CONFLICT DO NOTHING;
--> statement-breakpoint
-- The update trigger runs with FreeRADIUS's rights (as in 0032): every role that may update radacct
-- may read, add and remove usage_seen rows. grants.sql has it too.
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
    EXECUTE format('GRANT SELECT, INSERT, DELETE ON usage_seen TO %s', role_name);
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
  -- The totals already counted: the rollup's last look, else the row before this update.
  base_in bigint;
  base_out bigint;
BEGIN
  DELETE FROM %1$I.usage_seen WHERE radacctid = OLD.radacctid RETURNING input, output INTO base_in, base_out;
  IF NOT FOUND THEN
    base_in := coalesce(OLD.acctinputoctets, 0);
    base_out := coalesce(OLD.acctoutputoctets, 0);
  END IF;
  IF NEW.acctstoptime IS NULL THEN
    INSERT INTO %1$I.usage_seen (radacctid, input, output)
    VALUES (NEW.radacctid, coalesce(NEW.acctinputoctets, 0), coalesce(NEW.acctoutputoctets, 0));
  END IF;
  IF OLD.username IS DISTINCT FROM NEW.username AND OLD.username IS NOT NULL THEN
    -- What the old user's interims sent and no rollup counted yet is the old user's.
    INSERT INTO %1$I.usage_deltas (username, day, upload, download, refresh, nas)
    VALUES (OLD.username, (now() AT TIME ZONE 'UTC')::date,
            greatest(coalesce(OLD.acctinputoctets, 0) - base_in, 0),
            greatest(coalesce(OLD.acctoutputoctets, 0) - base_out, 0), true, NULL);
    base_in := coalesce(OLD.acctinputoctets, 0);
    base_out := coalesce(OLD.acctoutputoctets, 0);
  END IF;
  IF NEW.username IS NULL THEN
    RETURN NULL;
  END IF;
  -- Octets are from the NAS's side: input = from the subscriber (upload), output = to it (download).
  -- A total that goes down (a NAS bug, a counter wrap without gigawords) counts as no traffic.
  INSERT INTO %1$I.usage_deltas (username, day, upload, download, refresh, nas)
  VALUES (NEW.username, (now() AT TIME ZONE 'UTC')::date,
          greatest(coalesce(NEW.acctinputoctets, 0) - base_in, 0),
          greatest(coalesce(NEW.acctoutputoctets, 0) - base_out, 0), true, NEW.nasipaddress);
  RETURN NULL;
END;
$$$fn$, current_schema());
  EXECUTE format($fn$
CREATE OR REPLACE FUNCTION radacct_seen_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO %1$I.usage_seen (radacctid, input, output)
  VALUES (NEW.radacctid, coalesce(NEW.acctinputoctets, 0), coalesce(NEW.acctoutputoctets, 0))
  ON CONFLICT (radacctid) DO NOTHING;
  RETURN NULL;
END;
$$$fn$, current_schema());
END
$create$;
--> statement-breakpoint
-- Only a Stop or a moved session (address, NAS, user) fires the update trigger; octets alone do not.
DROP TRIGGER radacct_upd ON radacct;
--> statement-breakpoint
CREATE TRIGGER radacct_upd AFTER UPDATE ON radacct
  FOR EACH ROW
  WHEN (OLD.acctstoptime IS DISTINCT FROM NEW.acctstoptime
     OR OLD.framedipaddress IS DISTINCT FROM NEW.framedipaddress
     OR OLD.nasipaddress IS DISTINCT FROM NEW.nasipaddress
     OR OLD.username IS DISTINCT FROM NEW.username)
  EXECUTE FUNCTION radacct_update_trigger();
--> statement-breakpoint
-- A Start's octets are counted at once by radacct_usage_ins (migration 0007); from then on the
-- rollup counts what grows past them.
CREATE TRIGGER radacct_seen_ins AFTER INSERT ON radacct
  FOR EACH ROW
  WHEN (NEW.acctstoptime IS NULL)
  EXECUTE FUNCTION radacct_seen_trigger();
