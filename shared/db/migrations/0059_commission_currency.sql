-- Commissions are reported in one currency (services/billing/use-cases/commissions.ts): the
-- invoice's currency joins the index's included columns, so the report stays an index-only scan.
DROP INDEX "invoices_commission_idx";--> statement-breakpoint
CREATE INDEX "invoices_commission_idx" ON "invoices" USING btree ("reseller_id","issue_date") INCLUDE ("status","amount","commission_amount","currency");
