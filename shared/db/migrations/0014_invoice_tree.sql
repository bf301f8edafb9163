-- Each invoice under every reseller of its tree (docs/billing.md, "A reseller tree's pages from one
-- index"): one row per invoice and per reseller on its reseller's path, itself included, kept by
-- triggers in the writing transaction. A tree's page is then one ordered range of the primary key,
-- as an admin page is of invoices' own; merging one scan per reseller of the tree read each to
-- offset + limit and sorted them all (30,000 index entries for page 100 of a six-reseller tree).
CREATE TABLE "invoice_tree" (
	"ancestor_id" integer NOT NULL,
	"invoice_id" integer NOT NULL,
	PRIMARY KEY ("ancestor_id", "invoice_id")
);--> statement-breakpoint
-- '/1/5/21/' -> {1,5,21}; a reseller being created has path '' (resellers.service.ts): none.
CREATE FUNCTION "reseller_path_ids"("path" text) RETURNS integer[] LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT string_to_array(trim(both '/' from path), '/')::integer[]
$$;--> statement-breakpoint
INSERT INTO "invoice_tree" ("ancestor_id", "invoice_id")
  SELECT a, i.id FROM invoices i JOIN resellers r ON r.id = i.reseller_id CROSS JOIN unnest(reseller_path_ids(r.path)) a;--> statement-breakpoint
CREATE FUNCTION "invoice_tree_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO invoice_tree (ancestor_id, invoice_id)
    SELECT a, n.id FROM new_rows n JOIN resellers r ON r.id = n.reseller_id CROSS JOIN unnest(reseller_path_ids(r.path)) a;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "invoice_tree_remove"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM invoice_tree t USING old_rows o JOIN resellers r ON r.id = o.reseller_id
    WHERE t.ancestor_id = any(reseller_path_ids(r.path)) AND t.invoice_id = o.id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "invoice_tree_move"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM invoice_tree WHERE invoice_id = OLD.id
    AND ancestor_id IN (SELECT unnest(reseller_path_ids(path)) FROM resellers WHERE id = OLD.reseller_id);
  INSERT INTO invoice_tree (ancestor_id, invoice_id)
    SELECT a, NEW.id FROM resellers r CROSS JOIN unnest(reseller_path_ids(r.path)) a WHERE r.id = NEW.reseller_id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "invoice_tree_clear"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE invoice_tree;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "invoices_tree_insert" AFTER INSERT ON "invoices" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "invoice_tree_add"();--> statement-breakpoint
CREATE TRIGGER "invoices_tree_delete" AFTER DELETE ON "invoices" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "invoice_tree_remove"();--> statement-breakpoint
CREATE TRIGGER "invoices_tree_move" AFTER UPDATE OF "reseller_id" ON "invoices"
  FOR EACH ROW WHEN (OLD."reseller_id" IS DISTINCT FROM NEW."reseller_id") EXECUTE FUNCTION "invoice_tree_move"();--> statement-breakpoint
CREATE TRIGGER "invoices_tree_truncate" AFTER TRUNCATE ON "invoices"
  FOR EACH STATEMENT EXECUTE FUNCTION "invoice_tree_clear"();--> statement-breakpoint
-- A reseller given another path (no endpoint moves one; SQL may) takes its invoices' rows along.
-- Writers of invoices are waited for and held off until this transaction ends: one that read the
-- old path before this update committed has its rows in place by then, and this rebuild, a new
-- statement, sees them. A path set when the reseller is created (from '') skips the lock: no other
-- transaction can write an invoice of a reseller it cannot see yet.
CREATE FUNCTION "invoice_tree_reseller_path"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.path <> '' THEN
    LOCK TABLE invoices IN SHARE MODE;
  END IF;
  DELETE FROM invoice_tree t USING invoices i
    WHERE i.reseller_id = NEW.id AND t.ancestor_id = any(reseller_path_ids(OLD.path)) AND t.invoice_id = i.id;
  INSERT INTO invoice_tree (ancestor_id, invoice_id)
    SELECT a, i.id FROM invoices i CROSS JOIN unnest(reseller_path_ids(NEW.path)) a WHERE i.reseller_id = NEW.id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "resellers_invoice_tree_path" AFTER UPDATE OF "path" ON "resellers"
  FOR EACH ROW WHEN (OLD."path" IS DISTINCT FROM NEW."path") EXECUTE FUNCTION "invoice_tree_reseller_path"();
