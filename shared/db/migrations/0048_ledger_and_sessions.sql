CREATE TABLE "ledger_total_deltas" (
	"day" date NOT NULL,
	"reseller_id" integer,
	"type" text NOT NULL,
	"method" text,
	"created_by" integer,
	"currency" char(3) NOT NULL,
	"n" bigint NOT NULL,
	"incoming" bigint NOT NULL,
	"outgoing" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_totals" (
	"day" date NOT NULL,
	"reseller_id" integer,
	"type" text NOT NULL,
	"method" text,
	"created_by" integer,
	"currency" char(3) NOT NULL,
	"n" bigint NOT NULL,
	"incoming" bigint NOT NULL,
	"outgoing" bigint NOT NULL,
	CONSTRAINT "ledger_totals_key" UNIQUE NULLS NOT DISTINCT("day","reseller_id","type","method","created_by","currency")
);
--> statement-breakpoint
CREATE INDEX "ledger_totals_reseller_idx" ON "ledger_totals" USING btree ("reseller_id","day");--> statement-breakpoint
CREATE INDEX "radacct_open_start_idx" ON "radacct" USING btree ("acctstarttime") WHERE "radacct"."acctstoptime" is null;--> statement-breakpoint
CREATE INDEX "transactions_created_idx" ON "transactions" USING btree ("created_at","id","reseller_id","type","method");--> statement-breakpoint
CREATE INDEX "transactions_reseller_created_idx" ON "transactions" USING btree ("reseller_id","created_at","id");--> statement-breakpoint
CREATE INDEX "transactions_created_by_idx" ON "transactions" USING btree ("created_by","created_at","id");--> statement-breakpoint
-- Hand-written below: the triggers that keep ledger_totals a sum of the ledger (drizzle-kit does not
-- model triggers). Statement-level with transition tables, so a bulk insert (an import, a batch of
-- renewals) appends one delta per key and day, not one per row; no row is locked. The ledger service
-- moves the deltas into ledger_totals (services/billing/ledger-totals.ts).
CREATE FUNCTION "ledger_totals_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ledger_total_deltas (day, reseller_id, type, method, created_by, currency, n, incoming, outgoing)
  SELECT day, reseller_id, type, method, created_by, currency, sum(n), sum(incoming), sum(outgoing)
  FROM (
    SELECT (created_at AT TIME ZONE 'UTC')::date AS day, reseller_id, type, method, created_by, currency,
           1 AS n, greatest(amount, 0) AS incoming, least(amount, 0) AS outgoing
    FROM new_rows
  ) d
  GROUP BY 1, 2, 3, 4, 5, 6
  HAVING sum(n) <> 0 OR sum(incoming) <> 0 OR sum(outgoing) <> 0;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "ledger_totals_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- An update that moves no key or amount (a rename rewrites usernames) nets to zero and adds nothing.
  INSERT INTO ledger_total_deltas (day, reseller_id, type, method, created_by, currency, n, incoming, outgoing)
  SELECT day, reseller_id, type, method, created_by, currency, sum(n), sum(incoming), sum(outgoing)
  FROM (
    SELECT (created_at AT TIME ZONE 'UTC')::date AS day, reseller_id, type, method, created_by, currency,
           1 AS n, greatest(amount, 0) AS incoming, least(amount, 0) AS outgoing
    FROM new_rows
    UNION ALL
    SELECT (created_at AT TIME ZONE 'UTC')::date AS day, reseller_id, type, method, created_by, currency,
           -1 AS n, -greatest(amount, 0) AS incoming, -least(amount, 0) AS outgoing
    FROM old_rows
  ) d
  GROUP BY 1, 2, 3, 4, 5, 6
  HAVING sum(n) <> 0 OR sum(incoming) <> 0 OR sum(outgoing) <> 0;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "ledger_totals_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ledger_total_deltas (day, reseller_id, type, method, created_by, currency, n, incoming, outgoing)
  SELECT day, reseller_id, type, method, created_by, currency, sum(n), sum(incoming), sum(outgoing)
  FROM (
    SELECT (created_at AT TIME ZONE 'UTC')::date AS day, reseller_id, type, method, created_by, currency,
           -1 AS n, -greatest(amount, 0) AS incoming, -least(amount, 0) AS outgoing
    FROM old_rows
  ) d
  GROUP BY 1, 2, 3, 4, 5, 6
  HAVING sum(n) <> 0 OR sum(incoming) <> 0 OR sum(outgoing) <> 0;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "ledger_totals_insert" AFTER INSERT ON "transactions"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ledger_totals_insert();--> statement-breakpoint
CREATE TRIGGER "ledger_totals_update" AFTER UPDATE ON "transactions"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ledger_totals_update();--> statement-breakpoint
CREATE TRIGGER "ledger_totals_delete" AFTER DELETE ON "transactions"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ledger_totals_delete();--> statement-breakpoint
CREATE FUNCTION "ledger_totals_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE ledger_totals, ledger_total_deltas;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "ledger_totals_truncate" AFTER TRUNCATE ON "transactions"
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_totals_truncate();--> statement-breakpoint
INSERT INTO ledger_totals (day, reseller_id, type, method, created_by, currency, n, incoming, outgoing)
SELECT (created_at AT TIME ZONE 'UTC')::date, reseller_id, type, method, created_by, currency,
       count(*), coalesce(sum(amount) FILTER (WHERE amount > 0), 0), coalesce(sum(amount) FILTER (WHERE amount < 0), 0)
FROM transactions GROUP BY 1, 2, 3, 4, 5, 6;
