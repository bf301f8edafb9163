-- network-access: what happened to each router action, and the wake-up call of the outbox relay.
CREATE TABLE "coa_outcomes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"event_id" bigint,
	"source" text NOT NULL,
	"action" text NOT NULL,
	"subscriber_id" integer,
	"username" text NOT NULL,
	"reason" text,
	"outcome" text NOT NULL,
	"sessions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "coa_outcomes_event_uq" ON "coa_outcomes" USING btree ("event_id") WHERE "coa_outcomes"."event_id" is not null;
--> statement-breakpoint
CREATE INDEX "coa_outcomes_subscriber_idx" ON "coa_outcomes" USING btree ("subscriber_id","created_at");
--> statement-breakpoint
-- The relay's redelivery sweep reads published rows of the last day by publication time.
CREATE INDEX "outbox_published_idx" ON "outbox" USING btree ("published_at") WHERE "outbox"."published_at" is not null;
--> statement-breakpoint
-- NOTIFY is delivered at commit, and once per transaction whatever the number of rows: the relay
-- hears of new rows as soon as they are visible, and a bulk job's batch wakes it once.
CREATE OR REPLACE FUNCTION outbox_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('outbox', '');
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER outbox_notify AFTER INSERT ON outbox
  FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();
