-- Commissions are reported in one currency (services/billing/use-cases/commissions.ts): the
-- invoice's currency joins the index's included columns, so the report stays an index-only scan.
-- A history import may have dropped the index and kept its old definition in deferred_indexes
-- (shared/db/deferred-indexes.ts): it is made here with the new one, and that record goes.
DROP INDEX IF EXISTS "invoices_commission_idx";--> statement-breakpoint
CREATE INDEX "invoices_commission_idx" ON "invoices" USING btree ("reseller_id","issue_date") INCLUDE ("status","amount","commission_amount","currency");--> statement-breakpoint
DELETE FROM "deferred_indexes" WHERE "name" = 'invoices_commission_idx';
