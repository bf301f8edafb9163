-- One rollup instead of two (docs/reports.md, "Rollup"): ledger_daily (0047, the dashboard and the
-- revenue report) and ledger_totals with its deltas (0048, the ledger's totals) kept the same sums
-- with two sets of triggers. ledger_rollup replaces both, keyed by everything either read, plus the
-- plan, so the revenue report by plan reads it too.
DROP TRIGGER "transactions_ledger_daily_insert" ON "transactions";--> statement-breakpoint
DROP TRIGGER "transactions_ledger_daily_update" ON "transactions";--> statement-breakpoint
DROP TRIGGER "transactions_ledger_daily_delete" ON "transactions";--> statement-breakpoint
DROP TRIGGER "transactions_ledger_daily_truncate" ON "transactions";--> statement-breakpoint
DROP TRIGGER "ledger_totals_insert" ON "transactions";--> statement-breakpoint
DROP TRIGGER "ledger_totals_update" ON "transactions";--> statement-breakpoint
DROP TRIGGER "ledger_totals_delete" ON "transactions";--> statement-breakpoint
DROP TRIGGER "ledger_totals_truncate" ON "transactions";--> statement-breakpoint
DROP FUNCTION "ledger_daily_change"();--> statement-breakpoint
DROP FUNCTION "ledger_daily_truncate"();--> statement-breakpoint
DROP FUNCTION "ledger_totals_insert"();--> statement-breakpoint
DROP FUNCTION "ledger_totals_update"();--> statement-breakpoint
DROP FUNCTION "ledger_totals_delete"();--> statement-breakpoint
DROP FUNCTION "ledger_totals_truncate"();--> statement-breakpoint
CREATE TABLE "ledger_rollup" (
	"grain" char(1) NOT NULL,
	"day" date NOT NULL,
	"currency" char(3) NOT NULL,
	"type" text NOT NULL,
	"method" text,
	"service_id" integer,
	"reseller_id" integer,
	"manager_id" integer,
	"n" bigint NOT NULL,
	"incoming" bigint NOT NULL,
	"outgoing" bigint NOT NULL,
	"folded" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
DROP TABLE "ledger_daily" CASCADE;--> statement-breakpoint
DROP TABLE "ledger_total_deltas" CASCADE;--> statement-breakpoint
DROP TABLE "ledger_totals" CASCADE;--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "service_id" integer;--> statement-breakpoint
CREATE INDEX "ledger_rollup_day_idx" ON "ledger_rollup" USING btree ("grain","day","reseller_id");--> statement-breakpoint
CREATE INDEX "ledger_rollup_reseller_idx" ON "ledger_rollup" USING btree ("reseller_id","grain","day");--> statement-breakpoint
CREATE INDEX "ledger_rollup_unfolded_idx" ON "ledger_rollup" USING btree ("grain","day") WHERE not "ledger_rollup"."folded";--> statement-breakpoint
-- The plan of a ledger row is the subscriber's when the row is written; the past gets today's plan.
UPDATE "transactions" t SET "service_id" = s."service_id" FROM "subscribers" s WHERE s."id" = t."subscriber_id";--> statement-breakpoint
CREATE FUNCTION "transactions_plan"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT service_id INTO NEW.service_id FROM subscribers WHERE id = NEW.subscriber_id;
  RETURN NEW;
END $$;--> statement-breakpoint
-- The WHEN clause skips the call for a writer that names the plan (a bulk import, the bench's seed).
CREATE TRIGGER "transactions_plan" BEFORE INSERT ON "transactions" FOR EACH ROW
  WHEN (NEW.service_id IS NULL AND NEW.subscriber_id IS NOT NULL) EXECUTE FUNCTION transactions_plan();--> statement-breakpoint
-- Statement-level with transition tables: a bulk insert appends one signed row per key, grain and
-- statement, not one per ledger row, and locks nothing, so two payments of one reseller on one day
-- never wait on each other (the lesson of invoice_tree_blocks, 0041). An update appends only where
-- a key or amount moved (a rename rewrites usernames and nets to nothing).
CREATE FUNCTION "ledger_rollup_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO ledger_rollup (grain, day, currency, type, method, service_id, reseller_id, manager_id, n, incoming, outgoing)
    SELECT g.grain, CASE g.grain WHEN 'd' THEN d.day ELSE date_trunc('month', d.day)::date END,
           currency, type, method, service_id, reseller_id, created_by, sum(n), sum(incoming), sum(outgoing)
    FROM (SELECT (created_at AT TIME ZONE 'UTC')::date AS day, currency, type, method, service_id, reseller_id, created_by,
                 1 AS n, greatest(amount, 0) AS incoming, least(amount, 0) AS outgoing
            FROM new_rows) d
    CROSS JOIN (VALUES ('d'), ('m')) g(grain)
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO ledger_rollup (grain, day, currency, type, method, service_id, reseller_id, manager_id, n, incoming, outgoing)
    SELECT g.grain, CASE g.grain WHEN 'd' THEN d.day ELSE date_trunc('month', d.day)::date END,
           currency, type, method, service_id, reseller_id, created_by, sum(n), sum(incoming), sum(outgoing)
    FROM (SELECT (created_at AT TIME ZONE 'UTC')::date AS day, currency, type, method, service_id, reseller_id, created_by,
                 -1 AS n, -greatest(amount, 0) AS incoming, -least(amount, 0) AS outgoing
            FROM old_rows) d
    CROSS JOIN (VALUES ('d'), ('m')) g(grain)
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;
  ELSE
    INSERT INTO ledger_rollup (grain, day, currency, type, method, service_id, reseller_id, manager_id, n, incoming, outgoing)
    SELECT g.grain, CASE g.grain WHEN 'd' THEN d.day ELSE date_trunc('month', d.day)::date END,
           currency, type, method, service_id, reseller_id, created_by, sum(n), sum(incoming), sum(outgoing)
    FROM (SELECT (created_at AT TIME ZONE 'UTC')::date AS day, currency, type, method, service_id, reseller_id, created_by,
                 1 AS n, greatest(amount, 0) AS incoming, least(amount, 0) AS outgoing
            FROM new_rows
          UNION ALL
          SELECT (created_at AT TIME ZONE 'UTC')::date AS day, currency, type, method, service_id, reseller_id, created_by,
                 -1 AS n, -greatest(amount, 0) AS incoming, -least(amount, 0) AS outgoing
            FROM old_rows) d
    CROSS JOIN (VALUES ('d'), ('m')) g(grain)
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
    HAVING sum(n) <> 0 OR sum(incoming) <> 0 OR sum(outgoing) <> 0;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "ledger_rollup_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE ledger_rollup;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "ledger_rollup_insert" AFTER INSERT ON "transactions"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ledger_rollup_change();--> statement-breakpoint
CREATE TRIGGER "ledger_rollup_update" AFTER UPDATE ON "transactions"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ledger_rollup_change();--> statement-breakpoint
CREATE TRIGGER "ledger_rollup_delete" AFTER DELETE ON "transactions"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ledger_rollup_change();--> statement-breakpoint
CREATE TRIGGER "ledger_rollup_truncate" AFTER TRUNCATE ON "transactions"
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_rollup_truncate();--> statement-breakpoint
INSERT INTO ledger_rollup (grain, day, currency, type, method, service_id, reseller_id, manager_id, n, incoming, outgoing, folded)
SELECT g.grain, CASE g.grain WHEN 'd' THEN d.day ELSE date_trunc('month', d.day)::date END,
       currency, type, method, service_id, reseller_id, created_by, sum(n), sum(incoming), sum(outgoing), true
FROM (SELECT (created_at AT TIME ZONE 'UTC')::date AS day, currency, type, method, service_id, reseller_id, created_by,
             1 AS n, greatest(amount, 0) AS incoming, least(amount, 0) AS outgoing
        FROM transactions) d
CROSS JOIN (VALUES ('d'), ('m')) g(grain)
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;
