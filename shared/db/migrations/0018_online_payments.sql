CREATE TABLE "online_checkouts" (
	"id" serial PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"provider_session_id" text,
	"purpose" text NOT NULL,
	"invoice_id" integer,
	"subscriber_id" integer NOT NULL,
	"reseller_id" integer NOT NULL,
	"amount" bigint NOT NULL,
	"currency" char(3) NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"url" text,
	"provider_event_id" text,
	"provider_reference" text,
	"applied_amount" bigint,
	"wallet_amount" bigint,
	"note" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "payment_events" (
	"provider" text NOT NULL,
	"event_id" text NOT NULL,
	"checkout_id" integer,
	"type" text NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payment_events_provider_event_id_pk" PRIMARY KEY("provider","event_id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "online_checkouts_session_uq" ON "online_checkouts" USING btree ("provider","provider_session_id");--> statement-breakpoint
CREATE INDEX "online_checkouts_created_idx" ON "online_checkouts" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "online_checkouts_invoice_idx" ON "online_checkouts" USING btree ("invoice_id");