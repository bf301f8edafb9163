CREATE TABLE "card_batches" (
	"id" serial PRIMARY KEY NOT NULL,
	"reseller_id" integer,
	"service_id" integer,
	"value" bigint,
	"currency" char(3) NOT NULL,
	"count" integer NOT NULL,
	"prefix" text DEFAULT '' NOT NULL,
	"expires_at" date,
	"status" text DEFAULT 'active' NOT NULL,
	"charge_mode" text DEFAULT 'creation' NOT NULL,
	"pins_enc" text,
	"printed_at" timestamp with time zone,
	"created_by" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "card_batches_kind_ck" CHECK (("card_batches"."value" is null) <> ("card_batches"."service_id" is null))
);
--> statement-breakpoint
CREATE TABLE "card_redeem_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"subscriber_id" integer,
	"address" text,
	"ok" boolean NOT NULL,
	"card_id" bigint,
	"reason" text,
	"manager_id" integer,
	"cleared_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "cards" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"batch_id" integer NOT NULL,
	"serial" text NOT NULL,
	"pin_hash" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"used_at" timestamp with time zone,
	"used_by_subscriber_id" integer,
	"transaction_id" bigint
);
--> statement-breakpoint
CREATE INDEX "card_batches_reseller_idx" ON "card_batches" USING btree ("reseller_id");--> statement-breakpoint
CREATE INDEX "card_redeem_attempts_subscriber_idx" ON "card_redeem_attempts" USING btree ("subscriber_id","created_at");--> statement-breakpoint
CREATE INDEX "card_redeem_attempts_address_idx" ON "card_redeem_attempts" USING btree ("address","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "cards_serial_uq" ON "cards" USING btree ("serial");--> statement-breakpoint
CREATE UNIQUE INDEX "cards_pin_hash_uq" ON "cards" USING btree ("pin_hash");--> statement-breakpoint
CREATE INDEX "cards_batch_idx" ON "cards" USING btree ("batch_id","id");