ALTER TABLE "invoice_list_changes" ADD COLUMN "invoice_id" integer;--> statement-breakpoint
ALTER TABLE "invoice_list_changes" ADD COLUMN "added" boolean;--> statement-breakpoint
-- Each logged version now names its invoice and whether it is the new one (docs/billing.md, "A kept
-- page moved by the writes that reach it"): a kept page whose filter a change matches can then be
-- moved by what the changes added and removed, in id order, instead of computed again. Old rows
-- (before this migration) have neither: a page that meets one is computed again.
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
    INSERT INTO invoice_list_changes (generation, reseller_id, issue_date, search_text, invoice_id, added)
      VALUES (g, OLD.reseller_id, OLD.issue_date, OLD.search_text, OLD.id, false);
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    INSERT INTO invoice_list_changes (generation, reseller_id, issue_date, search_text, invoice_id, added)
      VALUES (g, NEW.reseller_id, NEW.issue_date, NEW.search_text, NEW.id, true);
  END IF;
  PERFORM set_config('billing.list_changes_logged', (logged + 1)::text, true);
  RETURN NULL;
END $$;
