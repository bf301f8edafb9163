CREATE TABLE "nas_last_packet" (
	"nasipaddress" "inet" PRIMARY KEY NOT NULL,
	"last_packet" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "session_hours" (
	"reseller_id" integer NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"starts" bigint NOT NULL,
	"stops" bigint NOT NULL,
	"folded" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE INDEX "session_hours_hour_idx" ON "session_hours" USING btree ("hour","reseller_id");--> statement-breakpoint
CREATE INDEX "session_hours_unfolded_idx" ON "session_hours" USING btree ("hour","reseller_id") WHERE not "session_hours"."folded";--> statement-breakpoint
-- session_hours (docs/reports.md, "Sessions per hour"): the dashboard's online per hour from a row per
-- reseller and hour instead of every open session. A session counts +1 `starts` at its start hour and,
-- while open, +1 `starts` at '-infinity' (the open count), once stopped +1 `stops` at its stop hour.
-- Appends only (no row is locked, so FreeRADIUS's writers never wait on each other); the reports
-- service folds them. Interim-Updates change none of the counted columns and fire nothing here.
CREATE FUNCTION "session_hours_rows"(p_start timestamptz, p_stop timestamptz)
RETURNS TABLE (hour timestamptz, starts integer, stops integer) LANGUAGE sql STABLE AS $$
  SELECT date_trunc('hour', p_start, 'UTC'), 1, 0 WHERE p_start IS NOT NULL
  UNION ALL
  SELECT coalesce(date_trunc('hour', p_stop, 'UTC'), '-infinity'), (p_stop IS NULL)::int, (p_stop IS NOT NULL)::int
   WHERE p_start IS NOT NULL
$$;
--> statement-breakpoint
-- The reseller a session counts for: its live subscriber's, 0 for none or the operator's own.
CREATE FUNCTION "session_reseller"(p_username text) RETURNS integer LANGUAGE sql STABLE AS $$
  SELECT coalesce((SELECT reseller_id FROM subscribers WHERE username = p_username AND deleted_at IS NULL LIMIT 1), 0)
$$;
--> statement-breakpoint
-- SECURITY DEFINER: FreeRADIUS's role may neither read subscribers nor write session_hours
-- (deploy/freeradius/grants.sql); this fires at a session's start and stop only, never on an interim.
CREATE FUNCTION "session_hours_radacct"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO session_hours (reseller_id, hour, starts, stops)
    SELECT session_reseller(r.username), c.hour, sum(c.starts), sum(c.stops)
      FROM new_rows r CROSS JOIN LATERAL session_hours_rows(r.acctstarttime, r.acctstoptime) c GROUP BY 1, 2;
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
--> statement-breakpoint
-- Statement-level for inserts and deletes (bulk closes, imports, purges: one insert per statement);
-- row-level for updates, only when a counted column moved (a Stop), so an Interim-Update pays nothing.
CREATE TRIGGER "session_hours_insert" AFTER INSERT ON "radacct" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION session_hours_radacct();
--> statement-breakpoint
CREATE TRIGGER "session_hours_delete" AFTER DELETE ON "radacct" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION session_hours_radacct();
--> statement-breakpoint
CREATE TRIGGER "session_hours_update" AFTER UPDATE ON "radacct" FOR EACH ROW
  WHEN (OLD.acctstarttime IS DISTINCT FROM NEW.acctstarttime OR OLD.acctstoptime IS DISTINCT FROM NEW.acctstoptime
        OR OLD.username IS DISTINCT FROM NEW.username)
  EXECUTE FUNCTION session_hours_radacct();
--> statement-breakpoint
CREATE TRIGGER "session_hours_truncate" AFTER TRUNCATE ON "radacct"
  FOR EACH STATEMENT EXECUTE FUNCTION session_hours_radacct();
--> statement-breakpoint
-- A subscriber that comes to own a username (created, renamed, moved, restored) takes its sessions
-- from reseller 0 to its reseller; one that stops owning it (deleted, renamed, moved) gives them back.
-- A rare write, which reads that username's sessions (radacct_username_start_idx).
CREATE FUNCTION "session_hours_owner"(p_username text, p_reseller integer, p_sign integer) RETURNS void LANGUAGE sql AS $$
  INSERT INTO session_hours (reseller_id, hour, starts, stops)
  SELECT m.reseller_id, c.hour, sum(m.sign * c.starts), sum(m.sign * c.stops)
    FROM (VALUES (p_reseller, p_sign), (0, -p_sign)) m (reseller_id, sign)
    JOIN radacct r ON r.username = p_username
    CROSS JOIN LATERAL session_hours_rows(r.acctstarttime, r.acctstoptime) c
   WHERE coalesce(p_reseller, 0) <> 0
   GROUP BY 1, 2
$$;
--> statement-breakpoint
CREATE FUNCTION "session_hours_subscribers"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM session_hours_owner(username, reseller_id, 1) FROM new_rows
      WHERE deleted_at IS NULL AND reseller_id IS NOT NULL AND username IN (SELECT r.username FROM radacct r);
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM session_hours_owner(username, reseller_id, -1) FROM old_rows
      WHERE deleted_at IS NULL AND reseller_id IS NOT NULL AND username IN (SELECT r.username FROM radacct r);
  ELSIF TG_OP = 'UPDATE' THEN
    IF OLD.deleted_at IS NULL THEN PERFORM session_hours_owner(OLD.username, OLD.reseller_id, -1); END IF;
    IF NEW.deleted_at IS NULL THEN PERFORM session_hours_owner(NEW.username, NEW.reseller_id, 1); END IF;
  ELSE
    PERFORM session_hours_rebuild();
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Counts only the rows the dashboard reads (the open count and the last two days' hours).
CREATE FUNCTION "session_hours_rebuild"() RETURNS void LANGUAGE sql AS $$
  DELETE FROM session_hours;
  INSERT INTO session_hours (reseller_id, hour, starts, stops, folded)
  SELECT session_reseller(r.username), c.hour, sum(c.starts), sum(c.stops), true
    FROM radacct r CROSS JOIN LATERAL session_hours_rows(r.acctstarttime, r.acctstoptime) c
   WHERE (r.acctstoptime IS NULL OR r.acctstoptime >= now() - interval '2 days')
     AND (c.hour = '-infinity' OR c.hour >= now() - interval '2 days')
   GROUP BY 1, 2;
$$;
--> statement-breakpoint
CREATE TRIGGER "session_hours_subscribers_insert" AFTER INSERT ON "subscribers" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION session_hours_subscribers();
--> statement-breakpoint
CREATE TRIGGER "session_hours_subscribers_delete" AFTER DELETE ON "subscribers" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION session_hours_subscribers();
--> statement-breakpoint
CREATE TRIGGER "session_hours_subscribers_update" AFTER UPDATE ON "subscribers" FOR EACH ROW
  WHEN (OLD.username IS DISTINCT FROM NEW.username OR OLD.reseller_id IS DISTINCT FROM NEW.reseller_id
        OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
  EXECUTE FUNCTION session_hours_subscribers();
--> statement-breakpoint
CREATE TRIGGER "session_hours_subscribers_truncate" AFTER TRUNCATE ON "subscribers"
  FOR EACH STATEMENT EXECUTE FUNCTION session_hours_subscribers();
--> statement-breakpoint
SELECT session_hours_rebuild();
--> statement-breakpoint
-- nas_last_packet: the newest accounting time (acctupdatetime, else acctstarttime) written for each
-- access server, for the dashboard's age of the last packet without reading the open sessions. Raised
-- only when newer: packets within the same second update nothing and lock nothing.
CREATE FUNCTION "nas_last_packet_seen"(ip inet, at timestamptz) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF at IS NULL THEN RETURN; END IF;
  UPDATE nas_last_packet SET last_packet = at WHERE nasipaddress = ip AND last_packet < at;
  IF NOT FOUND AND NOT EXISTS (SELECT 1 FROM nas_last_packet WHERE nasipaddress = ip) THEN
    INSERT INTO nas_last_packet AS l (nasipaddress, last_packet) VALUES (ip, at)
    ON CONFLICT (nasipaddress) DO UPDATE SET last_packet = excluded.last_packet WHERE l.last_packet < excluded.last_packet;
  END IF;
END $$;
--> statement-breakpoint
CREATE FUNCTION "nas_last_packet_radacct"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM nas_last_packet_seen(nasipaddress, max(coalesce(acctupdatetime, acctstarttime)))
       FROM new_rows GROUP BY nasipaddress ORDER BY nasipaddress;
  ELSE
    PERFORM nas_last_packet_seen(NEW.nasipaddress, coalesce(NEW.acctupdatetime, NEW.acctstarttime));
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- nas_last_packet_radacct fires on every Interim-Update, so it runs with FreeRADIUS's own rights (no
-- SECURITY DEFINER, as migration 0032's usage_deltas): every role that may update radacct gets them
-- here, and grants.sql has them too.
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
    EXECUTE format('GRANT SELECT, INSERT, UPDATE ON nas_last_packet TO %s', role_name);
  END LOOP;
END
$grant$;
--> statement-breakpoint
CREATE TRIGGER "nas_last_packet_insert" AFTER INSERT ON "radacct" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION nas_last_packet_radacct();
--> statement-breakpoint
CREATE TRIGGER "nas_last_packet_update" AFTER UPDATE ON "radacct" FOR EACH ROW
  WHEN (OLD.acctupdatetime IS DISTINCT FROM NEW.acctupdatetime OR OLD.acctstarttime IS DISTINCT FROM NEW.acctstarttime
        OR OLD.nasipaddress IS DISTINCT FROM NEW.nasipaddress)
  EXECUTE FUNCTION nas_last_packet_radacct();
--> statement-breakpoint
INSERT INTO nas_last_packet (nasipaddress, last_packet)
SELECT nasipaddress, max(coalesce(acctupdatetime, acctstarttime)) FROM radacct
 WHERE coalesce(acctupdatetime, acctstarttime) IS NOT NULL GROUP BY 1;
