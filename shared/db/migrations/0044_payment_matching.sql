-- Checkouts made before this migration get a reference too (the return page is found by it only);
-- gen_random_uuid draws from the server's strong random source.
ALTER TABLE "online_checkouts" ADD COLUMN "return_ref" text;--> statement-breakpoint
UPDATE "online_checkouts" SET "return_ref" = replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');--> statement-breakpoint
ALTER TABLE "online_checkouts" ALTER COLUMN "return_ref" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "payment_events" ADD COLUMN "session_id" text;--> statement-breakpoint
ALTER TABLE "payment_events" ADD COLUMN "amount" bigint;--> statement-breakpoint
ALTER TABLE "payment_events" ADD COLUMN "currency" char(3);--> statement-breakpoint
ALTER TABLE "payment_events" ADD COLUMN "outcome" text;--> statement-breakpoint
ALTER TABLE "payment_events" ADD COLUMN "note" text;--> statement-breakpoint
CREATE UNIQUE INDEX "online_checkouts_return_ref_uq" ON "online_checkouts" USING btree ("return_ref");--> statement-breakpoint
CREATE INDEX "payment_events_outcome_idx" ON "payment_events" USING btree ("outcome","received_at");
