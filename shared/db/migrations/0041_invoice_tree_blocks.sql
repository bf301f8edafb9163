CREATE TABLE "invoice_tree_blocks" (
	"ancestor_id" integer NOT NULL,
	"block" integer NOT NULL,
	"n" integer NOT NULL,
	CONSTRAINT "invoice_tree_blocks_pkey" PRIMARY KEY("ancestor_id","block")
);--> statement-breakpoint
-- A tree's page 100 skipped 4,950 entries of invoice_tree's primary key (about 250 us of a computed
-- page's PostgreSQL time at a million invoices, and more with every page deeper). These counts say in
-- which block of 4,096 invoice ids a page starts: summing a tree's blocks from the list's end reads a
-- few dozen rows, and the walk then skips fewer than a block's entries (docs/billing.md, "A tree's
-- deep page starts at its block"). Kept in the transaction that writes invoice_tree, by statement-level
-- triggers (a batch of renewals is one upsert), so a page reads blocks and entries in one snapshot
-- that agree. Removals add negative counts through the same upsert: each statement locks its rows in
-- (ancestor, block) order, so two writers cannot lock them in opposite orders. A block left at 0 stays.
CREATE FUNCTION "invoice_tree_blocks_count"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO invoice_tree_blocks AS b (ancestor_id, block, n)
    SELECT c.ancestor_id, c.invoice_id >> 12, CASE TG_OP WHEN 'INSERT' THEN count(*) ELSE -count(*) END
    FROM changed c GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (ancestor_id, block) DO UPDATE SET n = b.n + excluded.n;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "invoice_tree_blocks_clear"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE invoice_tree_blocks;
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
