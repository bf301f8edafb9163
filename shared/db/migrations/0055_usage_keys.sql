ALTER TABLE "usage_monthly" ADD COLUMN "service_id" integer;--> statement-breakpoint
ALTER TABLE "usage_monthly" ADD COLUMN "reseller_id" integer;--> statement-breakpoint
CREATE INDEX "usage_monthly_subscriber_idx" ON "usage_monthly" USING btree ("subscriber_id");--> statement-breakpoint
CREATE INDEX "usage_monthly_reseller_idx" ON "usage_monthly" USING btree ("reseller_id","month");--> statement-breakpoint
-- usage_monthly carries its subscriber's plan and reseller now (docs/reports.md, "Usage report"):
-- the usage report's totals per plan, its count and a reseller's scope read this table alone. New
-- rows take them from subscribers in the writing statement; a subscriber's change of either moves
-- its rows (usage_monthly_subscriber_moved below), so they are always the subscriber's current ones.
UPDATE usage_monthly m SET service_id = s.service_id, reseller_id = s.reseller_id
  FROM subscribers s WHERE s.id = m.subscriber_id;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "usage_monthly_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO usage_monthly AS m (month, subscriber_id, days, download_bytes, upload_bytes, service_id, reseller_id)
    SELECT d.month, d.subscriber_id, d.days, d.download_bytes, d.upload_bytes, s.service_id, s.reseller_id
      FROM (SELECT date_trunc('month', date)::date AS month, subscriber_id, count(*) AS days,
                   sum(download_bytes) AS download_bytes, sum(upload_bytes) AS upload_bytes
              FROM new_rows GROUP BY 1, 2) d
      LEFT JOIN subscribers s ON s.id = d.subscriber_id
     ORDER BY 1, 2
    ON CONFLICT (month, subscriber_id) DO UPDATE
       SET days = m.days + excluded.days, download_bytes = m.download_bytes + excluded.download_bytes,
           upload_bytes = m.upload_bytes + excluded.upload_bytes;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO usage_monthly AS m (month, subscriber_id, days, download_bytes, upload_bytes, service_id, reseller_id)
    SELECT d.month, d.subscriber_id, d.days, d.download_bytes, d.upload_bytes, s.service_id, s.reseller_id
      FROM (SELECT month, subscriber_id, sum(days) AS days, sum(download_bytes) AS download_bytes,
                   sum(upload_bytes) AS upload_bytes
              FROM (SELECT date_trunc('month', date)::date AS month, subscriber_id, 1 AS days, download_bytes, upload_bytes FROM new_rows
                    UNION ALL
                    SELECT date_trunc('month', date)::date, subscriber_id, -1, -download_bytes, -upload_bytes FROM old_rows) x
             GROUP BY 1, 2 HAVING (sum(days), sum(download_bytes), sum(upload_bytes)) <> (0, 0, 0)) d
      LEFT JOIN subscribers s ON s.id = d.subscriber_id
     ORDER BY 1, 2
    ON CONFLICT (month, subscriber_id) DO UPDATE
       SET days = m.days + excluded.days, download_bytes = m.download_bytes + excluded.download_bytes,
           upload_bytes = m.upload_bytes + excluded.upload_bytes;
  ELSE
    UPDATE usage_monthly m
       SET days = m.days - d.days, download_bytes = m.download_bytes - d.download_bytes,
           upload_bytes = m.upload_bytes - d.upload_bytes
      FROM (SELECT date_trunc('month', date)::date AS month, subscriber_id, count(*) AS days,
                   sum(download_bytes) AS download_bytes, sum(upload_bytes) AS upload_bytes
              FROM old_rows GROUP BY 1, 2 ORDER BY 1, 2) d
     WHERE m.month = d.month AND m.subscriber_id = d.subscriber_id;
    DELETE FROM usage_monthly WHERE days = 0 AND (month, subscriber_id) IN
      (SELECT DISTINCT date_trunc('month', date)::date, subscriber_id FROM old_rows);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Rare (a plan change, a move to another reseller): the subscriber's few rows. No row is left on the
-- old plan by a usage write at the same moment: the usage writer updates the subscriber's counters
-- in the statement that writes its days (shared/access/usage-rollup.ts), so one of the two waits for
-- the other's row lock, and each statement of a trigger sees what committed before it.
CREATE FUNCTION "usage_monthly_subscriber_moved"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE usage_monthly m SET service_id = NEW.service_id, reseller_id = NEW.reseller_id
    FROM (SELECT month FROM usage_monthly WHERE subscriber_id = NEW.id ORDER BY month FOR UPDATE) k
   WHERE m.month = k.month AND m.subscriber_id = NEW.id;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "usage_monthly_subscriber_moved" AFTER UPDATE OF service_id, reseller_id ON "subscribers"
  FOR EACH ROW WHEN (OLD.service_id IS DISTINCT FROM NEW.service_id OR OLD.reseller_id IS DISTINCT FROM NEW.reseller_id)
  EXECUTE FUNCTION usage_monthly_subscriber_moved();
--> statement-breakpoint
ANALYZE usage_monthly;
