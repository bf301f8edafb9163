-- A bulk writer may compute invoices.search_text in its own INSERT ... SELECT (the import joins the
-- subscribers anyway, docs/import.md): the per-row lookup of migration 0009 then runs only for rows
-- that come without it. At 10,000 invoices per statement that lookup was about a fifth of the
-- insert. A writer that sets it computes the trigger's expression from the same subscriber row;
-- every update still recomputes it (invoices_search_text_update is unchanged).
DROP TRIGGER "invoices_search_text_insert" ON "invoices";--> statement-breakpoint
CREATE TRIGGER "invoices_search_text_insert" BEFORE INSERT ON "invoices"
  FOR EACH ROW WHEN (NEW."search_text" IS NULL) EXECUTE FUNCTION "invoice_search_text"();
