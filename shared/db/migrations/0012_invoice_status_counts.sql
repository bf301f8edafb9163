-- Exact totals for the status lists, kept in the same transaction as the writes (docs/billing.md,
-- "Lists at a million invoices"). Payments change statuses, and a count row per (reseller, status)
-- updated in place would serialise every payer of a reseller on it, and deadlock quick-pays that move
-- several invoices between statuses in different orders. So writes only append deltas (no row is
-- ever locked), and the billing service folds each key's deltas into one row every second
-- (invoice-status-counts.ts): a status total is a sum over about one row per reseller.
CREATE TABLE "invoice_status_counts" (
	"reseller_id" integer NOT NULL,
	"status" text NOT NULL,
	"n" bigint NOT NULL
);--> statement-breakpoint
CREATE INDEX "invoice_status_counts_idx" ON "invoice_status_counts" USING btree ("status","reseller_id") INCLUDE ("n");--> statement-breakpoint
INSERT INTO "invoice_status_counts" ("reseller_id", "status", "n") SELECT "reseller_id", "status", count(*) FROM "invoices" GROUP BY 1, 2;--> statement-breakpoint
CREATE FUNCTION "invoice_status_counts_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO invoice_status_counts (reseller_id, status, n) SELECT reseller_id, status, count(*) FROM new_rows GROUP BY 1, 2;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "invoice_status_counts_remove"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO invoice_status_counts (reseller_id, status, n) SELECT reseller_id, status, -count(*) FROM old_rows GROUP BY 1, 2;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "invoice_status_counts_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO invoice_status_counts (reseller_id, status, n) VALUES (OLD.reseller_id, OLD.status, -1), (NEW.reseller_id, NEW.status, 1);
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "invoice_status_counts_clear"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM invoice_status_counts;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "invoices_status_count_insert" AFTER INSERT ON "invoices" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "invoice_status_counts_add"();--> statement-breakpoint
CREATE TRIGGER "invoices_status_count_delete" AFTER DELETE ON "invoices" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "invoice_status_counts_remove"();--> statement-breakpoint
CREATE TRIGGER "invoices_status_count_change" AFTER UPDATE OF "status", "reseller_id" ON "invoices"
  FOR EACH ROW WHEN (OLD."status" IS DISTINCT FROM NEW."status" OR OLD."reseller_id" IS DISTINCT FROM NEW."reseller_id")
  EXECUTE FUNCTION "invoice_status_counts_change"();--> statement-breakpoint
CREATE TRIGGER "invoices_status_count_truncate" AFTER TRUNCATE ON "invoices"
  FOR EACH STATEMENT EXECUTE FUNCTION "invoice_status_counts_clear"();--> statement-breakpoint
-- Date-range lists keep their capped count with the generation it was read at (invoice-list.ts), so
-- a change of an invoice's issue date must bump it too.
DROP TRIGGER "invoices_list_generation_change" ON "invoices";--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "invoices_list_generation_change" AFTER UPDATE OF "invoice_number", "subscriber_id", "reseller_id", "search_text", "issue_date" ON "invoices"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (OLD."invoice_number" IS DISTINCT FROM NEW."invoice_number" OR OLD."subscriber_id" IS DISTINCT FROM NEW."subscriber_id"
    OR OLD."reseller_id" IS DISTINCT FROM NEW."reseller_id" OR OLD."search_text" IS DISTINCT FROM NEW."search_text"
    OR OLD."issue_date" IS DISTINCT FROM NEW."issue_date")
  EXECUTE FUNCTION "invoice_list_generation_bump"();
