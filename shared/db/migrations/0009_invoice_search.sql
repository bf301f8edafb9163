-- A broad invoice search (docs/billing.md, "Searches"): the invoice's number and its subscriber's
-- username and full name, lower-cased (what ILIKE compares) and joined by U+0001, kept on the
-- invoice so one LIKE per row decides a match without a lookup of the matching subscribers.
ALTER TABLE "invoices" ADD COLUMN "search_text" text;--> statement-breakpoint
UPDATE "invoices" i SET "search_text" = lower(i."invoice_number") || E'\x01' || lower(s."username") || E'\x01' || coalesce(lower(s."full_name"), '')
  FROM "subscribers" s WHERE s."id" = i."subscriber_id";--> statement-breakpoint
ALTER TABLE "invoices" ALTER COLUMN "search_text" SET NOT NULL;--> statement-breakpoint
CREATE FUNCTION "invoice_search_text"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.search_text := (SELECT lower(NEW.invoice_number) || E'\x01' || lower(s.username) || E'\x01' || coalesce(lower(s.full_name), '')
    FROM subscribers s WHERE s.id = NEW.subscriber_id);
  RETURN NEW;
END $$;--> statement-breakpoint
CREATE FUNCTION "invoice_search_text_rename"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- invoices_search_text_update computes the value from the renamed row.
  UPDATE invoices SET search_text = NULL WHERE subscriber_id = NEW.id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "invoices_search_text_insert" BEFORE INSERT ON "invoices"
  FOR EACH ROW EXECUTE FUNCTION "invoice_search_text"();--> statement-breakpoint
-- search_text is in the list so that no write can set it to anything else.
CREATE TRIGGER "invoices_search_text_update" BEFORE UPDATE OF "invoice_number", "subscriber_id", "search_text" ON "invoices"
  FOR EACH ROW EXECUTE FUNCTION "invoice_search_text"();--> statement-breakpoint
CREATE TRIGGER "subscribers_search_text_rename" AFTER UPDATE OF "username", "full_name" ON "subscribers"
  FOR EACH ROW WHEN (OLD."username" IS DISTINCT FROM NEW."username" OR OLD."full_name" IS DISTINCT FROM NEW."full_name")
  EXECUTE FUNCTION "invoice_search_text_rename"();--> statement-breakpoint
-- A broad search walks this in id order, index-only, until its page is full: about 150 ns a row.
CREATE INDEX "invoices_search_idx" ON "invoices" USING btree ("id") INCLUDE ("search_text");
