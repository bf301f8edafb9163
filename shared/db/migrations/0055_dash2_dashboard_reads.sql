-- The dashboard's reads at full scale (docs/reports.md, "Fourth speed pass"): a tree's online subscribers
-- per access server from its own index range, this month's redeemed cards and the rollup's day rows
-- without their heap.
DROP INDEX "subscribers_online_nas_idx";--> statement-breakpoint
CREATE INDEX "subscribers_online_nas_idx" ON "subscribers" USING btree ("reseller_id","last_nas_id") WHERE "subscribers"."is_online" and "subscribers"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "cards_used_idx" ON "cards" USING btree ("used_at") INCLUDE ("batch_id") WHERE "cards"."used_at" is not null;--> statement-breakpoint
DROP INDEX "ledger_rollup_day_idx";--> statement-breakpoint
CREATE INDEX "ledger_rollup_day_idx" ON "ledger_rollup" USING btree ("grain","day","reseller_id")
  INCLUDE ("type", "currency", "method", "n", "incoming", "outgoing");--> statement-breakpoint
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
