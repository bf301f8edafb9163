-- Accounting retention (issue 26): the usage run deletes closed sessions older than
-- accounting_retention_months in batches. Deleting a closed row cannot change is_online,
-- ip_address or last_nas_id (subscriber_session_refresh reads only open rows, and passes no NAS on
-- delete), so the delete trigger now fires for open rows only: a purge of millions of closed rows
-- no longer runs three lookups and a subscribers probe per row.
DROP TRIGGER IF EXISTS radacct_session_del ON radacct;
--> statement-breakpoint
CREATE TRIGGER radacct_session_del AFTER DELETE ON radacct
  FOR EACH ROW
  WHEN (OLD.acctstoptime IS NULL)
  EXECUTE FUNCTION radacct_session_trigger();
