-- Accounting ingest (issue 26): a Stop fires no trigger either. Its trigger (a plpgsql call, a
-- delete from usage_seen and an insert into usage_deltas inside FreeRADIUS's transaction) cost
-- 1.29x the stock schema's PostgreSQL CPU per Stop. The usage rollup now finds the sessions that
-- closed (or were deleted) since it last looked through usage_seen, counts their last octets and
-- session state, and deletes their rows. The trigger still fires for an open session that moved
-- (address, NAS, user) or was opened again: rare, and the rollup could not see those by itself.
DROP TRIGGER radacct_upd ON radacct;
--> statement-breakpoint
CREATE TRIGGER radacct_upd AFTER UPDATE ON radacct
  FOR EACH ROW
  WHEN (NEW.acctstoptime IS NULL
    AND (OLD.acctstoptime IS NOT NULL
      OR OLD.framedipaddress IS DISTINCT FROM NEW.framedipaddress
      OR OLD.nasipaddress IS DISTINCT FROM NEW.nasipaddress
      OR OLD.username IS DISTINCT FROM NEW.username))
  EXECUTE FUNCTION radacct_update_trigger();
