CREATE TABLE "manager_recovery_codes" (
	"id" serial PRIMARY KEY NOT NULL,
	"manager_id" integer NOT NULL,
	"code_hash" text NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "managers" ADD COLUMN "totp_secret" text;--> statement-breakpoint
ALTER TABLE "managers" ADD COLUMN "totp_enabled_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "managers" ADD COLUMN "totp_last_step" bigint;--> statement-breakpoint
ALTER TABLE "manager_recovery_codes" ADD CONSTRAINT "manager_recovery_codes_manager_id_managers_id_fk" FOREIGN KEY ("manager_id") REFERENCES "public"."managers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "manager_recovery_codes_uq" ON "manager_recovery_codes" USING btree ("manager_id","code_hash");