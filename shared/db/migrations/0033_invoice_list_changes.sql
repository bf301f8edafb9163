CREATE TABLE "invoice_list_changes" (
	"generation" bigint NOT NULL,
	"every" boolean DEFAULT false NOT NULL,
	"reseller_id" integer,
	"issue_date" date,
	"search_text" text
);
--> statement-breakpoint
CREATE INDEX "invoice_list_changes_generation_idx" ON "invoice_list_changes" USING btree ("generation");--> statement-breakpoint
-- What each generation changed (docs/billing.md, "Pages kept between requests"): the bump of
-- migration 0010 now also logs, under the generation it bumped to, each version of an invoice the
-- transaction wrote (the old one of an update or a delete, the new one of an insert or an update) as
-- the three things a list filters on. A kept page whose filter matches none of the rows logged since
-- its generation is still the page. Past 1,000 invoices, and for a TRUNCATE, one
-- `every` row stands for the rest (it matches every list): a renewal batch or an import does not
-- write a log as large as itself. The generation is the transaction's own (a setting), so its rows
-- commit with its bump, and bumps serialise on the generation row: rows up to the generation a
-- snapshot reads are all in that snapshot.
CREATE OR REPLACE FUNCTION "invoice_list_generation_bump"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  g bigint := nullif(current_setting('billing.list_generation', true), '')::bigint;
  logged int := coalesce(nullif(current_setting('billing.list_changes_logged', true), '')::int, 0);
BEGIN
  IF g IS NULL THEN
    UPDATE invoice_list_generation SET n = n + 1 RETURNING n INTO g;
    PERFORM set_config('billing.list_generation', g::text, true);
    logged := 0;
  END IF;
  IF logged < 0 THEN
    RETURN NULL;
  END IF;
  IF TG_LEVEL = 'STATEMENT' OR logged >= 1000 THEN
    INSERT INTO invoice_list_changes (generation, every) VALUES (g, true);
    PERFORM set_config('billing.list_changes_logged', '-1', true);
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    INSERT INTO invoice_list_changes (generation, reseller_id, issue_date, search_text)
      VALUES (g, OLD.reseller_id, OLD.issue_date, OLD.search_text);
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    INSERT INTO invoice_list_changes (generation, reseller_id, issue_date, search_text)
      VALUES (g, NEW.reseller_id, NEW.issue_date, NEW.search_text);
  END IF;
  PERFORM set_config('billing.list_changes_logged', (logged + 1)::text, true);
  RETURN NULL;
END $$;
