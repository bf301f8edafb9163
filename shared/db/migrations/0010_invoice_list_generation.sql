-- A generation number of what invoice searches match (docs/billing.md, "Search pages kept between
-- requests"): services/billing keeps a search page's ids with the generation it read them at, and
-- serves them again only while the generation is unchanged. Every write that can change which
-- invoices a search matches, or their order, bumps it: an invoice inserted or deleted, or a change of
-- its number, subscriber, reseller or search_text (a subscriber's rename rewrites search_text,
-- migration 0009). Payments and status changes do not: a kept page reads its rows fresh.
CREATE TABLE "invoice_list_generation" (
	"one" boolean PRIMARY KEY DEFAULT true NOT NULL CHECK ("one"),
	"n" bigint NOT NULL
);--> statement-breakpoint
INSERT INTO "invoice_list_generation" ("n") VALUES (0);--> statement-breakpoint
CREATE FUNCTION "invoice_list_generation_bump"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Deferred to COMMIT and once per transaction: the row lock is taken after every other lock of the
  -- transaction and held only while it commits, so writers neither deadlock on it nor hold it while
  -- waiting; a batch of renewals (one row event each) bumps once. The setting is transaction-local.
  IF current_setting('billing.list_generation_bumped', true) IS DISTINCT FROM 'on' THEN
    UPDATE invoice_list_generation SET n = n + 1;
    PERFORM set_config('billing.list_generation_bumped', 'on', true);
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "invoices_list_generation_write" AFTER INSERT OR DELETE ON "invoices"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "invoice_list_generation_bump"();--> statement-breakpoint
-- The WHEN clause is evaluated at the write, not at COMMIT: an update that leaves these columns as
-- they were (a rename that changes only letter case, so not search_text) queues nothing.
CREATE CONSTRAINT TRIGGER "invoices_list_generation_change" AFTER UPDATE OF "invoice_number", "subscriber_id", "reseller_id", "search_text" ON "invoices"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (OLD."invoice_number" IS DISTINCT FROM NEW."invoice_number" OR OLD."subscriber_id" IS DISTINCT FROM NEW."subscriber_id"
    OR OLD."reseller_id" IS DISTINCT FROM NEW."reseller_id" OR OLD."search_text" IS DISTINCT FROM NEW."search_text")
  EXECUTE FUNCTION "invoice_list_generation_bump"();--> statement-breakpoint
-- TRUNCATE takes an exclusive lock on invoices anyway; constraint triggers cannot be statement-level.
CREATE TRIGGER "invoices_list_generation_truncate" AFTER TRUNCATE ON "invoices"
  FOR EACH STATEMENT EXECUTE FUNCTION "invoice_list_generation_bump"();
