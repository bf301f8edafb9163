CREATE TABLE "usage_monthly" (
	"month" date NOT NULL,
	"subscriber_id" integer NOT NULL,
	"days" integer NOT NULL,
	"download_bytes" bigint NOT NULL,
	"upload_bytes" bigint NOT NULL,
	CONSTRAINT "usage_monthly_month_subscriber_id_pk" PRIMARY KEY("month","subscriber_id")
);
--> statement-breakpoint
CREATE INDEX "daily_usage_date_idx" ON "daily_usage" USING btree ("date");--> statement-breakpoint
-- The open invoices with what the dashboard and the aging report read of them: index-only sums.
CREATE INDEX "invoices_open_idx" ON "invoices" USING btree ("reseller_id","due_date")
  INCLUDE ("subscriber_id", "currency", "total", "paid_amount", "status") WHERE "invoices"."status" in ('pending', 'partial', 'overdue') and "invoices"."total" > "invoices"."paid_amount";
--> statement-breakpoint
CREATE INDEX "subscribers_online_nas_idx" ON "subscribers" USING btree ("last_nas_id","reseller_id") WHERE "subscribers"."is_online" and "subscribers"."deleted_at" is null;
--> statement-breakpoint
-- usage_monthly (docs/reports.md, "Usage rollup"): daily_usage summed per subscriber and UTC month,
-- so the usage report over a year reads 13 rows per subscriber instead of 365. Statement triggers
-- add each statement's signed deltas in the writing transaction (an INSERT ... ON CONFLICT DO UPDATE
-- fires both the insert and the update trigger, each with its own rows). Upserts in key order: the
-- usage rollup is one writer at a time (its advisory lock), and any two writers lock rows in the same
-- order, so they wait rather than deadlock.
CREATE FUNCTION "usage_monthly_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO usage_monthly AS m (month, subscriber_id, days, download_bytes, upload_bytes)
    SELECT date_trunc('month', date)::date, subscriber_id, count(*), sum(download_bytes), sum(upload_bytes)
      FROM new_rows GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (month, subscriber_id) DO UPDATE
       SET days = m.days + excluded.days, download_bytes = m.download_bytes + excluded.download_bytes,
           upload_bytes = m.upload_bytes + excluded.upload_bytes;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO usage_monthly AS m (month, subscriber_id, days, download_bytes, upload_bytes)
    SELECT month, subscriber_id, sum(days), sum(download_bytes), sum(upload_bytes)
      FROM (SELECT date_trunc('month', date)::date AS month, subscriber_id, 1 AS days, download_bytes, upload_bytes FROM new_rows
            UNION ALL
            SELECT date_trunc('month', date)::date, subscriber_id, -1, -download_bytes, -upload_bytes FROM old_rows) d
     GROUP BY 1, 2 HAVING (sum(days), sum(download_bytes), sum(upload_bytes)) <> (0, 0, 0) ORDER BY 1, 2
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
CREATE FUNCTION "usage_monthly_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE usage_monthly;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "usage_monthly_insert" AFTER INSERT ON "daily_usage" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION usage_monthly_change();
--> statement-breakpoint
CREATE TRIGGER "usage_monthly_update" AFTER UPDATE ON "daily_usage" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION usage_monthly_change();
--> statement-breakpoint
CREATE TRIGGER "usage_monthly_delete" AFTER DELETE ON "daily_usage" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION usage_monthly_change();
--> statement-breakpoint
CREATE TRIGGER "usage_monthly_truncate" AFTER TRUNCATE ON "daily_usage"
  FOR EACH STATEMENT EXECUTE FUNCTION usage_monthly_truncate();
--> statement-breakpoint
INSERT INTO usage_monthly (month, subscriber_id, days, download_bytes, upload_bytes)
SELECT date_trunc('month', date)::date, subscriber_id, count(*), sum(download_bytes), sum(upload_bytes)
  FROM daily_usage GROUP BY 1, 2;
--> statement-breakpoint
ANALYZE usage_monthly;
