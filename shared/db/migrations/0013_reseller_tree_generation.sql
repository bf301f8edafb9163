-- A generation number of the reseller tree (docs/billing.md, "Reseller trees resolved once per
-- generation"): every caller's scope reads it with the caller's path (shared/auth/policy.ts), and a
-- list keeps the resellers of a tree with the generation it read them at, so it resolves the tree
-- again only after a reseller is created, deleted or given another path. Deferred to COMMIT and
-- once per transaction, as invoice_list_generation's bump (migration 0010).
CREATE TABLE "reseller_tree_generation" (
	"one" boolean PRIMARY KEY DEFAULT true NOT NULL CHECK ("one"),
	"n" bigint NOT NULL
);--> statement-breakpoint
INSERT INTO "reseller_tree_generation" ("n") VALUES (0);--> statement-breakpoint
CREATE FUNCTION "reseller_tree_generation_bump"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('billing.reseller_tree_bumped', true) IS DISTINCT FROM 'on' THEN
    UPDATE reseller_tree_generation SET n = n + 1;
    PERFORM set_config('billing.reseller_tree_bumped', 'on', true);
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "resellers_tree_generation_write" AFTER INSERT OR DELETE ON "resellers"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "reseller_tree_generation_bump"();--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "resellers_tree_generation_change" AFTER UPDATE OF "path", "parent_id" ON "resellers"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (OLD."path" IS DISTINCT FROM NEW."path" OR OLD."parent_id" IS DISTINCT FROM NEW."parent_id")
  EXECUTE FUNCTION "reseller_tree_generation_bump"();--> statement-breakpoint
CREATE TRIGGER "resellers_tree_generation_truncate" AFTER TRUNCATE ON "resellers"
  FOR EACH STATEMENT EXECUTE FUNCTION "reseller_tree_generation_bump"();
