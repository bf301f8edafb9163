CREATE TABLE "invoice_tree_block_deltas" (
	"ancestor_id" integer NOT NULL,
	"block" integer NOT NULL,
	"n" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "invoice_tree_blocks" (
	"ancestor_id" integer NOT NULL,
	"block" integer NOT NULL,
	"n" integer NOT NULL,
	CONSTRAINT "invoice_tree_blocks_pkey" PRIMARY KEY("ancestor_id","block")
);
--> statement-breakpoint
CREATE INDEX "invoice_tree_block_deltas_idx" ON "invoice_tree_block_deltas" USING btree ("ancestor_id","block");--> statement-breakpoint
-- A tree's page 100 skipped 4,950 entries of invoice_tree's primary key (about 250 us of a computed
-- page's PostgreSQL time at a million invoices, and more with every page deeper). These counts say in
-- which block of 4,096 invoice ids a page starts: summing a tree's blocks from the list's end reads a
-- few dozen rows, and the walk then skips fewer than a block's entries (docs/billing.md, "A tree's
-- deep page starts at its block"). A block's count is its row in invoice_tree_blocks plus its rows in
-- invoice_tree_block_deltas. Statement-level triggers on invoice_tree append signed deltas in the
-- writing transaction, locking nothing: an upsert of the count rows made every creation in a tree
-- wait for any other transaction that wrote an invoice under the same root (an import batch, a
-- backdated invoice) and let two moves lock them in opposite orders. The billing service folds the
-- deltas into invoice_tree_blocks every second (services/billing/tree-block-counts.ts).
CREATE FUNCTION "invoice_tree_blocks_count"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO invoice_tree_block_deltas (ancestor_id, block, n)
    SELECT c.ancestor_id, c.invoice_id >> 12, CASE TG_OP WHEN 'INSERT' THEN count(*) ELSE -count(*) END
    FROM changed c GROUP BY 1, 2;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "invoice_tree_blocks_clear"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE invoice_tree_blocks, invoice_tree_block_deltas;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "invoice_tree_blocks_insert" AFTER INSERT ON "invoice_tree" REFERENCING NEW TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION "invoice_tree_blocks_count"();--> statement-breakpoint
CREATE TRIGGER "invoice_tree_blocks_delete" AFTER DELETE ON "invoice_tree" REFERENCING OLD TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION "invoice_tree_blocks_count"();--> statement-breakpoint
CREATE TRIGGER "invoice_tree_blocks_truncate" AFTER TRUNCATE ON "invoice_tree"
  FOR EACH STATEMENT EXECUTE FUNCTION "invoice_tree_blocks_clear"();--> statement-breakpoint
INSERT INTO "invoice_tree_blocks" ("ancestor_id", "block", "n")
  SELECT ancestor_id, invoice_id >> 12, count(*) FROM invoice_tree GROUP BY 1, 2;
