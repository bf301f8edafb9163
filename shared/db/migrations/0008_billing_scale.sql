-- Exact invoice counts per reseller, kept in the same transaction as the writes (docs/billing.md):
-- the admin, reseller and reseller-tree lists read their total from here instead of counting rows.
-- Only inserts, deletes and a change of reseller move a count, so payments never touch this table.
CREATE TABLE "invoice_counts" (
	"reseller_id" integer PRIMARY KEY NOT NULL,
	"n" bigint NOT NULL
);--> statement-breakpoint
INSERT INTO "invoice_counts" ("reseller_id", "n") SELECT "reseller_id", count(*) FROM "invoices" GROUP BY 1;--> statement-breakpoint
CREATE FUNCTION "invoice_counts_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Statement level: a batch of renewals is one upsert per reseller, in reseller order.
  INSERT INTO invoice_counts (reseller_id, n)
    SELECT reseller_id, count(*) FROM new_rows GROUP BY reseller_id ORDER BY reseller_id
  ON CONFLICT (reseller_id) DO UPDATE SET n = invoice_counts.n + excluded.n;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "invoice_counts_remove"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE invoice_counts c SET n = c.n - d.n
    FROM (SELECT reseller_id, count(*) AS n FROM old_rows GROUP BY reseller_id) d
    WHERE c.reseller_id = d.reseller_id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "invoice_counts_move"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE invoice_counts SET n = n - 1 WHERE reseller_id = OLD.reseller_id;
  INSERT INTO invoice_counts (reseller_id, n) VALUES (NEW.reseller_id, 1)
  ON CONFLICT (reseller_id) DO UPDATE SET n = invoice_counts.n + 1;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "invoice_counts_clear"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM invoice_counts;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "invoices_count_insert" AFTER INSERT ON "invoices" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "invoice_counts_add"();--> statement-breakpoint
CREATE TRIGGER "invoices_count_delete" AFTER DELETE ON "invoices" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "invoice_counts_remove"();--> statement-breakpoint
CREATE TRIGGER "invoices_count_move" AFTER UPDATE OF "reseller_id" ON "invoices"
  FOR EACH ROW WHEN (OLD."reseller_id" IS DISTINCT FROM NEW."reseller_id") EXECUTE FUNCTION "invoice_counts_move"();--> statement-breakpoint
CREATE TRIGGER "invoices_count_truncate" AFTER TRUNCATE ON "invoices"
  FOR EACH STATEMENT EXECUTE FUNCTION "invoice_counts_clear"();--> statement-breakpoint
-- Date-range lists: the range and the id order in one index (late row lookup reads ids only).
DROP INDEX "invoices_issue_date_idx";--> statement-breakpoint
CREATE INDEX "invoices_issue_date_idx" ON "invoices" USING btree ("issue_date","id");--> statement-breakpoint
-- Commissions by month of one reseller (or a tree): an index-only range scan in month order.
CREATE INDEX "invoices_commission_idx" ON "invoices" USING btree ("reseller_id","issue_date") INCLUDE ("status","amount","commission_amount");--> statement-breakpoint
-- Rendered PDFs, keyed by a hash of everything the page shows (services/billing/pdf-cache.ts).
CREATE TABLE "pdf_cache" (
	"key" text PRIMARY KEY NOT NULL,
	"invoice_id" integer NOT NULL REFERENCES "invoices"("id") ON DELETE CASCADE,
	"paper" text NOT NULL,
	"pdf" bytea NOT NULL,
	"size" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"used_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
-- PDF streams are compressed already: store them out of line without trying to compress again.
ALTER TABLE "pdf_cache" ALTER COLUMN "pdf" SET STORAGE EXTERNAL;--> statement-breakpoint
CREATE INDEX "pdf_cache_invoice_idx" ON "pdf_cache" USING btree ("invoice_id","paper");--> statement-breakpoint
CREATE INDEX "pdf_cache_used_idx" ON "pdf_cache" USING btree ("used_at");
