CREATE TABLE "ledger_daily" (
	"day" date NOT NULL,
	"reseller_id" integer,
	"manager_id" integer,
	"currency" char(3) NOT NULL,
	"type" text NOT NULL,
	"method" text,
	"amount" bigint NOT NULL,
	"n" bigint NOT NULL,
	"folded" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE INDEX "ledger_daily_day_idx" ON "ledger_daily" USING btree ("day","reseller_id");--> statement-breakpoint
CREATE INDEX "ledger_daily_reseller_idx" ON "ledger_daily" USING btree ("reseller_id","day");--> statement-breakpoint
CREATE INDEX "ledger_daily_unfolded_idx" ON "ledger_daily" USING btree ("day") WHERE not "ledger_daily"."folded";--> statement-breakpoint
CREATE INDEX "transactions_payment_created_idx" ON "transactions" USING btree ("created_at") WHERE "transactions"."type" = 'invoice_payment';--> statement-breakpoint
CREATE INDEX "transactions_reseller_balance_idx" ON "transactions" USING btree ("reseller_id","created_at","id") WHERE "transactions"."type" in ('reseller_credit', 'reseller_debit', 'renewal', 'rename_fee', 'refill_fee');--> statement-breakpoint
-- The dashboard and the revenue report read ledger_daily instead of summing every ledger row of a
-- month or a year (docs/reports.md, "Rollup"). Statement-level triggers append one signed row per key
-- and statement, in the writing transaction, and lock nothing: an upsert would make every payment
-- of a reseller on a day wait for any other still open. The reports service folds a day's rows.
CREATE FUNCTION "ledger_daily_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO ledger_daily (day, reseller_id, manager_id, currency, type, method, amount, n)
      SELECT (c.created_at AT TIME ZONE 'UTC')::date, c.reseller_id, c.created_by, c.currency, c.type, c.method,
             sum(c.amount), count(*)
      FROM new_rows c GROUP BY 1, 2, 3, 4, 5, 6;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO ledger_daily (day, reseller_id, manager_id, currency, type, method, amount, n)
      SELECT (c.created_at AT TIME ZONE 'UTC')::date, c.reseller_id, c.created_by, c.currency, c.type, c.method,
             -sum(c.amount), -count(*)
      FROM old_rows c GROUP BY 1, 2, 3, 4, 5, 6;
  ELSE
    -- Only rows whose key or amount moved (a rename rewrites usernames and changes no figure).
    INSERT INTO ledger_daily (day, reseller_id, manager_id, currency, type, method, amount, n)
      SELECT day, reseller_id, created_by, currency, type, method, sum(amount), sum(n)
      FROM (
        SELECT (o.created_at AT TIME ZONE 'UTC')::date AS day, o.reseller_id, o.created_by, o.currency, o.type, o.method,
               -o.amount AS amount, -1 AS n
        FROM old_rows o JOIN new_rows w ON w.id = o.id
        WHERE (o.created_at, o.reseller_id, o.created_by, o.currency, o.type, o.method, o.amount)
              IS DISTINCT FROM (w.created_at, w.reseller_id, w.created_by, w.currency, w.type, w.method, w.amount)
        UNION ALL
        SELECT (w.created_at AT TIME ZONE 'UTC')::date, w.reseller_id, w.created_by, w.currency, w.type, w.method,
               w.amount, 1
        FROM old_rows o JOIN new_rows w ON w.id = o.id
        WHERE (o.created_at, o.reseller_id, o.created_by, o.currency, o.type, o.method, o.amount)
              IS DISTINCT FROM (w.created_at, w.reseller_id, w.created_by, w.currency, w.type, w.method, w.amount)
      ) d
      GROUP BY 1, 2, 3, 4, 5, 6;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION "ledger_daily_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM ledger_daily;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "transactions_ledger_daily_insert" AFTER INSERT ON "transactions"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ledger_daily_change();
--> statement-breakpoint
CREATE TRIGGER "transactions_ledger_daily_update" AFTER UPDATE ON "transactions"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ledger_daily_change();
--> statement-breakpoint
CREATE TRIGGER "transactions_ledger_daily_delete" AFTER DELETE ON "transactions"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ledger_daily_change();
--> statement-breakpoint
CREATE TRIGGER "transactions_ledger_daily_truncate" AFTER TRUNCATE ON "transactions"
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_daily_truncate();
--> statement-breakpoint
INSERT INTO ledger_daily (day, reseller_id, manager_id, currency, type, method, amount, n, folded)
  SELECT (created_at AT TIME ZONE 'UTC')::date, reseller_id, created_by, currency, type, method, sum(amount), count(*), true
  FROM transactions GROUP BY 1, 2, 3, 4, 5, 6;
