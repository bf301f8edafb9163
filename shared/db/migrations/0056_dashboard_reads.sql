-- The dashboard's reads at full scale (docs/reports.md, "Fourth speed pass"): this month's redeemed
-- cards and the rollup's day rows without their heap, the online subscribers per access server from a
-- row per reseller and server (nas_online, below) instead of every online subscriber.
CREATE INDEX "cards_used_idx" ON "cards" USING btree ("used_at") INCLUDE ("batch_id") WHERE "cards"."used_at" is not null;--> statement-breakpoint
DROP INDEX "ledger_rollup_day_idx";--> statement-breakpoint
CREATE INDEX "ledger_rollup_day_idx" ON "ledger_rollup" USING btree ("grain","day","reseller_id")
  INCLUDE ("type", "currency", "method", "n", "incoming", "outgoing");--> statement-breakpoint
CREATE TABLE "nas_online" (
	"reseller_id" integer NOT NULL,
	"nas_id" integer NOT NULL,
	"n" bigint NOT NULL,
	"folded" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
-- Read by nothing now (migration 0053 made it for the count nas_online replaces).
DROP INDEX "subscribers_online_nas_idx";--> statement-breakpoint
CREATE INDEX "nas_online_reseller_idx" ON "nas_online" USING btree ("reseller_id","nas_id");--> statement-breakpoint
CREATE INDEX "nas_online_unfolded_idx" ON "nas_online" USING btree ("reseller_id","nas_id") WHERE not "nas_online"."folded";--> statement-breakpoint
-- nas_online: live online subscribers per reseller and last access server (0: none), appended in the
-- writing transaction as subscriber_counts is (statement-level for inserts and deletes, row-level for
-- updates that move a counted column: a session's start or stop, a move, a deletion), folded by the
-- reports service.
CREATE FUNCTION "nas_online_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO nas_online (reseller_id, nas_id, n)
    SELECT reseller_id, coalesce(last_nas_id, 0), count(*) FROM new_rows WHERE is_online AND deleted_at IS NULL GROUP BY 1, 2;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO nas_online (reseller_id, nas_id, n)
    SELECT reseller_id, coalesce(last_nas_id, 0), -count(*) FROM old_rows WHERE is_online AND deleted_at IS NULL GROUP BY 1, 2;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO nas_online (reseller_id, nas_id, n)
    SELECT reseller_id, nas_id, sum(n) FROM (
      SELECT OLD.reseller_id, coalesce(OLD.last_nas_id, 0), -1 WHERE OLD.is_online AND OLD.deleted_at IS NULL
      UNION ALL
      SELECT NEW.reseller_id, coalesce(NEW.last_nas_id, 0), 1 WHERE NEW.is_online AND NEW.deleted_at IS NULL) d (reseller_id, nas_id, n)
     GROUP BY 1, 2 HAVING sum(n) <> 0;
  ELSE
    TRUNCATE nas_online;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "nas_online_insert" AFTER INSERT ON "subscribers" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION nas_online_change();
--> statement-breakpoint
CREATE TRIGGER "nas_online_delete" AFTER DELETE ON "subscribers" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION nas_online_change();
--> statement-breakpoint
CREATE TRIGGER "nas_online_update" AFTER UPDATE OF "is_online", "last_nas_id", "reseller_id", "deleted_at" ON "subscribers"
  FOR EACH ROW WHEN ((OLD.is_online AND OLD.deleted_at IS NULL) IS DISTINCT FROM (NEW.is_online AND NEW.deleted_at IS NULL)
        OR (NEW.is_online AND NEW.deleted_at IS NULL
            AND (OLD.last_nas_id, OLD.reseller_id) IS DISTINCT FROM (NEW.last_nas_id, NEW.reseller_id)))
  EXECUTE FUNCTION nas_online_change();
--> statement-breakpoint
CREATE TRIGGER "nas_online_truncate" AFTER TRUNCATE ON "subscribers"
  FOR EACH STATEMENT EXECUTE FUNCTION nas_online_change();
--> statement-breakpoint
INSERT INTO nas_online (reseller_id, nas_id, n, folded)
SELECT reseller_id, coalesce(last_nas_id, 0), count(*), true FROM subscribers WHERE is_online AND deleted_at IS NULL GROUP BY 1, 2;
--> statement-breakpoint
CREATE TABLE "subscriber_tombstones" (
	"id" integer PRIMARY KEY NOT NULL
);
--> statement-breakpoint
-- subscriber_tombstones: every subscriber id whose row is gone. The aging report leaves out the open
-- invoices of a permanently removed subscriber; asking subscribers for each open invoice was three
-- quarters of the admin's report (40,000 probes). An id comes back out if a row with it is inserted
-- again (a restore); a truncate buries every id an invoice names.
CREATE FUNCTION "subscriber_tombstones_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO subscriber_tombstones (id) SELECT id FROM old_rows ORDER BY id ON CONFLICT DO NOTHING;
  ELSIF TG_OP = 'INSERT' THEN
    DELETE FROM subscriber_tombstones t USING new_rows n WHERE t.id = n.id;
  ELSE
    INSERT INTO subscriber_tombstones (id) SELECT DISTINCT subscriber_id FROM invoices ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "subscriber_tombstones_delete" AFTER DELETE ON "subscribers" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION subscriber_tombstones_change();
--> statement-breakpoint
CREATE TRIGGER "subscriber_tombstones_insert" AFTER INSERT ON "subscribers" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION subscriber_tombstones_change();
--> statement-breakpoint
CREATE TRIGGER "subscriber_tombstones_truncate" AFTER TRUNCATE ON "subscribers"
  FOR EACH STATEMENT EXECUTE FUNCTION subscriber_tombstones_change();
--> statement-breakpoint
INSERT INTO subscriber_tombstones (id)
SELECT DISTINCT subscriber_id FROM invoices i WHERE NOT EXISTS (SELECT 1 FROM subscribers s WHERE s.id = i.subscriber_id);
--> statement-breakpoint
-- The open invoices are read index-only (invoices_open_idx: the dashboard's balances, the aging
-- report), which needs their pages all-visible. The overdue sweep and the day's payments rewrite
-- fewer than the default 20% of the table, so autovacuum might not come for days and every read would
-- visit the heap once per open invoice (the admin's 40,000 at full scale: 15 ms became 380 after one
-- sweep marked 24,667 overdue). 2% brings it within minutes of a sweep.
ALTER TABLE "invoices" SET (autovacuum_vacuum_scale_factor = 0.02);--> statement-breakpoint
-- The per-interim trigger of migration 0054 ran an UPDATE and, when it changed nothing (a packet no
-- newer than the server's last, the common case when a server sends several a second), an EXISTS:
-- two probes and a nested call. One read now settles that case; a newer packet or a new server goes
-- on to nas_last_packet_seen as before. Same rows written, same locks taken.
CREATE OR REPLACE FUNCTION "nas_last_packet_radacct"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  at timestamptz;
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM nas_last_packet_seen(nasipaddress, max(coalesce(acctupdatetime, acctstarttime)))
       FROM new_rows GROUP BY nasipaddress ORDER BY nasipaddress;
  ELSE
    at := coalesce(NEW.acctupdatetime, NEW.acctstarttime);
    -- Null when the server has no row yet (or the packet no time): the function decides.
    IF (at > (SELECT last_packet FROM nas_last_packet WHERE nasipaddress = NEW.nasipaddress)) IS NOT FALSE THEN
      PERFORM nas_last_packet_seen(NEW.nasipaddress, at);
    END IF;
  END IF;
  RETURN NULL;
END $$;
