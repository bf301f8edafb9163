-- import_usage: an import's daily usage, moved into daily_usage at the end of the run (shared/db/schema.ts).
CREATE TABLE "import_usage" (
	"username" text NOT NULL,
	"day" date NOT NULL,
	"download_bytes" bigint NOT NULL,
	"upload_bytes" bigint NOT NULL
);
--> statement-breakpoint
-- session_hours (migration 0054): an inserted session stopped over two days ago counts only in hours
-- no one reads (the fold drops them), as its delete already writes nothing. Such inserts come from
-- an import of the accounting history (millions of sessions, docs/import.md): each looked up its
-- subscriber's reseller for nothing, a fifth of the import's work on radacct. FreeRADIUS's own
-- inserts are new sessions, which the filter keeps.
CREATE OR REPLACE FUNCTION "session_hours_radacct"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO session_hours (reseller_id, hour, starts, stops)
    SELECT session_reseller(r.username), c.hour, sum(c.starts), sum(c.stops)
      FROM new_rows r CROSS JOIN LATERAL session_hours_rows(r.acctstarttime, r.acctstoptime) c
     WHERE r.acctstoptime IS NULL OR r.acctstoptime >= now() - interval '2 days'
     GROUP BY 1, 2;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO session_hours (reseller_id, hour, starts, stops)
    -- A session stopped over two days ago counts only in hours no one reads (the fold drops them):
    -- a retention purge of old sessions writes nothing here.
    SELECT session_reseller(r.username), c.hour, -sum(c.starts), -sum(c.stops)
      FROM old_rows r CROSS JOIN LATERAL session_hours_rows(r.acctstarttime, r.acctstoptime) c
     WHERE r.acctstoptime IS NULL OR r.acctstoptime >= now() - interval '2 days'
     GROUP BY 1, 2;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO session_hours (reseller_id, hour, starts, stops)
    SELECT reseller_id, hour, sum(starts), sum(stops) FROM (
      SELECT session_reseller(NEW.username) AS reseller_id, c.hour, c.starts, c.stops
        FROM session_hours_rows(NEW.acctstarttime, NEW.acctstoptime) c
      UNION ALL
      SELECT session_reseller(OLD.username), c.hour, -c.starts, -c.stops
        FROM session_hours_rows(OLD.acctstarttime, OLD.acctstoptime) c) d
     GROUP BY 1, 2 HAVING (sum(starts), sum(stops)) <> (0, 0);
  ELSE
    TRUNCATE session_hours;
    TRUNCATE nas_last_packet;
  END IF;
  RETURN NULL;
END $$;
