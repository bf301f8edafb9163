CREATE TABLE "self_care_codes" (
	"subscriber_id" integer PRIMARY KEY NOT NULL,
	"code_hash" text NOT NULL,
	"tries" smallint DEFAULT 0 NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "actor_subscriber_id" integer;--> statement-breakpoint
ALTER TABLE "services" ADD COLUMN "self_service" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "self_care_codes" ADD CONSTRAINT "self_care_codes_subscriber_id_subscribers_id_fk" FOREIGN KEY ("subscriber_id") REFERENCES "public"."subscribers"("id") ON DELETE cascade ON UPDATE no action;