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
--> statement-breakpoint
-- The dashboard's subscriber counts and monthly series (docs/reports.md, "Subscriber counts") from
-- subscriber_counts instead of a scan of every live subscriber. Inserts and deletes append per
-- statement (an import is one row per key); an update only when a counted column moved, per row,
-- so the accounting and usage writers, which touch none of them but is_online, pay nothing more
-- than the WHEN test, and a session start one small insert.
CREATE TABLE "subscriber_counts" (
	"kind" char(1) NOT NULL,
	"reseller_id" integer NOT NULL,
	"day" date NOT NULL,
	"n" bigint NOT NULL,
	"active" bigint NOT NULL,
	"inactive" bigint NOT NULL,
	"blocked" bigint NOT NULL,
	"online" bigint NOT NULL,
	"wallets" bigint NOT NULL,
	"folded" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE INDEX "subscriber_counts_reseller_idx" ON "subscriber_counts" USING btree ("reseller_id","kind","day");--> statement-breakpoint
CREATE INDEX "subscriber_counts_unfolded_idx" ON "subscriber_counts" USING btree ("kind","reseller_id") WHERE not "subscriber_counts"."folded";--> statement-breakpoint
CREATE FUNCTION "subscriber_counts_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
  INSERT INTO subscriber_counts (kind, reseller_id, day, n, active, inactive, blocked, online, wallets)
  SELECT * FROM (
    SELECT k.kind, d.reseller_id,
           CASE k.kind WHEN 'x' THEN d.expiry_date ELSE date_trunc('month', d.created_at AT TIME ZONE 'UTC')::date END AS day,
           sum(d.sign) AS n,
           sum(d.sign * (k.kind = 'x' AND d.status = 'active')::int) AS active,
           sum(d.sign * (k.kind = 'x' AND d.status = 'inactive')::int) AS inactive,
           sum(d.sign * (k.kind = 'x' AND d.blocked_reason IS NOT NULL)::int) AS blocked,
           sum(d.sign * (k.kind = 'x' AND d.is_online)::int) AS online,
           sum(CASE WHEN k.kind = 'x' THEN d.sign * d.wallet_balance ELSE 0 END) AS wallets
      FROM (SELECT 1 AS sign, reseller_id, expiry_date, created_at, status, blocked_reason, is_online, wallet_balance, deleted_at FROM new_rows) d
     CROSS JOIN (VALUES ('x'), ('c')) k(kind)
     WHERE d.deleted_at IS NULL
     GROUP BY 1, 2, 3) c
  WHERE (n, active, inactive, blocked, online, wallets) <> (0, 0, 0, 0, 0, 0);
  ELSIF TG_OP = 'DELETE' THEN
  INSERT INTO subscriber_counts (kind, reseller_id, day, n, active, inactive, blocked, online, wallets)
  SELECT * FROM (
    SELECT k.kind, d.reseller_id,
           CASE k.kind WHEN 'x' THEN d.expiry_date ELSE date_trunc('month', d.created_at AT TIME ZONE 'UTC')::date END AS day,
           sum(d.sign) AS n,
           sum(d.sign * (k.kind = 'x' AND d.status = 'active')::int) AS active,
           sum(d.sign * (k.kind = 'x' AND d.status = 'inactive')::int) AS inactive,
           sum(d.sign * (k.kind = 'x' AND d.blocked_reason IS NOT NULL)::int) AS blocked,
           sum(d.sign * (k.kind = 'x' AND d.is_online)::int) AS online,
           sum(CASE WHEN k.kind = 'x' THEN d.sign * d.wallet_balance ELSE 0 END) AS wallets
      FROM (SELECT -1 AS sign, reseller_id, expiry_date, created_at, status, blocked_reason, is_online, wallet_balance, deleted_at FROM old_rows) d
     CROSS JOIN (VALUES ('x'), ('c')) k(kind)
     WHERE d.deleted_at IS NULL
     GROUP BY 1, 2, 3) c
  WHERE (n, active, inactive, blocked, online, wallets) <> (0, 0, 0, 0, 0, 0);
  ELSE
  INSERT INTO subscriber_counts (kind, reseller_id, day, n, active, inactive, blocked, online, wallets)
  SELECT * FROM (
    SELECT k.kind, d.reseller_id,
           CASE k.kind WHEN 'x' THEN d.expiry_date ELSE date_trunc('month', d.created_at AT TIME ZONE 'UTC')::date END AS day,
           sum(d.sign) AS n,
           sum(d.sign * (k.kind = 'x' AND d.status = 'active')::int) AS active,
           sum(d.sign * (k.kind = 'x' AND d.status = 'inactive')::int) AS inactive,
           sum(d.sign * (k.kind = 'x' AND d.blocked_reason IS NOT NULL)::int) AS blocked,
           sum(d.sign * (k.kind = 'x' AND d.is_online)::int) AS online,
           sum(CASE WHEN k.kind = 'x' THEN d.sign * d.wallet_balance ELSE 0 END) AS wallets
      FROM (SELECT -1 AS sign, OLD.reseller_id, OLD.expiry_date, OLD.created_at, OLD.status, OLD.blocked_reason, OLD.is_online, OLD.wallet_balance, OLD.deleted_at
            UNION ALL SELECT 1, NEW.reseller_id, NEW.expiry_date, NEW.created_at, NEW.status, NEW.blocked_reason, NEW.is_online, NEW.wallet_balance, NEW.deleted_at) d
     CROSS JOIN (VALUES ('x'), ('c')) k(kind)
     WHERE d.deleted_at IS NULL
     GROUP BY 1, 2, 3) c
  WHERE (n, active, inactive, blocked, online, wallets) <> (0, 0, 0, 0, 0, 0);
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "subscriber_counts_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE subscriber_counts;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "subscriber_counts_insert" AFTER INSERT ON "subscribers"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION subscriber_counts_change();--> statement-breakpoint
CREATE TRIGGER "subscriber_counts_delete" AFTER DELETE ON "subscribers"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION subscriber_counts_change();--> statement-breakpoint
CREATE TRIGGER "subscriber_counts_update" AFTER UPDATE OF "reseller_id", "expiry_date", "created_at", "status", "blocked_reason", "is_online", "wallet_balance", "deleted_at" ON "subscribers"
  FOR EACH ROW WHEN ((OLD.reseller_id, OLD.expiry_date, OLD.created_at, OLD.status, OLD.blocked_reason, OLD.is_online, OLD.wallet_balance, OLD.deleted_at) IS DISTINCT FROM (NEW.reseller_id, NEW.expiry_date, NEW.created_at, NEW.status, NEW.blocked_reason, NEW.is_online, NEW.wallet_balance, NEW.deleted_at))
  EXECUTE FUNCTION subscriber_counts_change();--> statement-breakpoint
CREATE TRIGGER "subscriber_counts_truncate" AFTER TRUNCATE ON "subscribers"
  FOR EACH STATEMENT EXECUTE FUNCTION subscriber_counts_truncate();--> statement-breakpoint
INSERT INTO subscriber_counts (kind, reseller_id, day, n, active, inactive, blocked, online, wallets, folded)
SELECT *, true FROM (
    SELECT k.kind, d.reseller_id,
           CASE k.kind WHEN 'x' THEN d.expiry_date ELSE date_trunc('month', d.created_at AT TIME ZONE 'UTC')::date END AS day,
           sum(d.sign) AS n,
           sum(d.sign * (k.kind = 'x' AND d.status = 'active')::int) AS active,
           sum(d.sign * (k.kind = 'x' AND d.status = 'inactive')::int) AS inactive,
           sum(d.sign * (k.kind = 'x' AND d.blocked_reason IS NOT NULL)::int) AS blocked,
           sum(d.sign * (k.kind = 'x' AND d.is_online)::int) AS online,
           sum(CASE WHEN k.kind = 'x' THEN d.sign * d.wallet_balance ELSE 0 END) AS wallets
      FROM (SELECT 1 AS sign, reseller_id, expiry_date, created_at, status, blocked_reason, is_online, wallet_balance, deleted_at FROM subscribers) d
     CROSS JOIN (VALUES ('x'), ('c')) k(kind)
     WHERE d.deleted_at IS NULL
     GROUP BY 1, 2, 3) c
  WHERE (n, active, inactive, blocked, online, wallets) <> (0, 0, 0, 0, 0, 0);
