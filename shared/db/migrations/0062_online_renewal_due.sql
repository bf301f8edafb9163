ALTER TABLE "online_checkouts" ADD COLUMN "renewal_due" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "online_checkouts" ADD COLUMN "renewal_tried_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "online_checkouts_renewal_due_idx" ON "online_checkouts" USING btree ("completed_at") WHERE renewal_due;