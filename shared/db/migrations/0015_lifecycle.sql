-- The subscriber lifecycle (docs/lifecycle.md): billing drives access by itself.
-- auto_renew: renewed from the wallet at expiry by the lifecycle sweep.
-- blocked_reason: why access is blocked right now (expired, quota used up on a plan without tiers,
-- suspended for an overdue invoice), or null. Kept by every writer in its own transaction and by the
-- sweep for time-driven changes; the RADIUS rows follow it (group billing_blocked instead of the
-- plan's groups). Existing rows start at null: the first sweep computes them and rewrites their rows.
ALTER TABLE "subscribers" ADD COLUMN "auto_renew" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "subscribers" ADD COLUMN "blocked_reason" text
  CHECK ("blocked_reason" IN ('expired', 'quota', 'overdue'));--> statement-breakpoint
-- The sweep's candidates: live subscribers past expiry that are not blocked yet, and the blocked set.
CREATE INDEX "subscribers_unblocked_expiry_idx" ON "subscribers" ("expiry_date")
  WHERE "deleted_at" IS NULL AND "blocked_reason" IS NULL;--> statement-breakpoint
CREATE INDEX "subscribers_blocked_idx" ON "subscribers" ("blocked_reason", "id")
  WHERE "deleted_at" IS NULL AND "blocked_reason" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "subscribers_auto_renew_expiry_idx" ON "subscribers" ("expiry_date", "id")
  WHERE "deleted_at" IS NULL AND "auto_renew";--> statement-breakpoint
-- Messages the lifecycle sends (expiry reminders). The unique key is the once-only rule: one message
-- per subscriber per rule per expiry date, whatever the number of replicas or restarts.
CREATE TABLE "notifications" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"subscriber_id" integer NOT NULL,
	"kind" text NOT NULL,
	"rule_days" integer NOT NULL,
	"expiry_date" date NOT NULL,
	"provider" text,
	"recipient" text,
	"message" text,
	"status" text NOT NULL,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	CONSTRAINT "notifications_once_uq" UNIQUE ("subscriber_id", "kind", "rule_days", "expiry_date")
);--> statement-breakpoint
CREATE INDEX "notifications_subscriber_idx" ON "notifications" ("subscriber_id", "id");--> statement-breakpoint
-- The blocked group in the default mode (blocked_access = reject); a settings change rewrites it.
INSERT INTO "radgroupcheck" ("groupname", "attribute", "op", "value") VALUES ('billing_blocked', 'Auth-Type', ':=', 'Reject');
