-- Importing accounting history (issue 44, shared/import/sessions.ts): the importer writes closed and
-- open sessions in bulk and rebuilds daily usage, the month's counters and the session state from
-- them in sets. Row by row, the insert triggers would count every imported octet as today's traffic
-- and refresh each subscriber's session state once per row. A transaction that set
-- `isp_billing.importing` to `on` (SET LOCAL: that transaction only) skips them; FreeRADIUS's
-- inserts never set it, and the condition is evaluated without entering PL/pgSQL.
DROP TRIGGER radacct_session_ins ON radacct;
--> statement-breakpoint
CREATE TRIGGER radacct_session_ins AFTER INSERT ON radacct
  FOR EACH ROW
  WHEN (current_setting('isp_billing.importing', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION radacct_session_trigger();
--> statement-breakpoint
DROP TRIGGER radacct_usage_ins ON radacct;
--> statement-breakpoint
CREATE TRIGGER radacct_usage_ins AFTER INSERT ON radacct
  FOR EACH ROW
  WHEN (current_setting('isp_billing.importing', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION radacct_usage_trigger();
--> statement-breakpoint
DROP TRIGGER radacct_seen_ins ON radacct;
--> statement-breakpoint
CREATE TRIGGER radacct_seen_ins AFTER INSERT ON radacct
  FOR EACH ROW
  WHEN (NEW.acctstoptime IS NULL AND current_setting('isp_billing.importing', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION radacct_seen_trigger();
