CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"manager_id" integer,
	"action" text NOT NULL,
	"entity" text NOT NULL,
	"entity_id" integer,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "bandwidth_rules" (
	"id" serial PRIMARY KEY NOT NULL,
	"subscriber_id" integer NOT NULL,
	"direction" text NOT NULL,
	"rate_kbps" integer NOT NULL,
	"start_time" text,
	"end_time" text,
	"days" jsonb,
	"priority" integer DEFAULT 8 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "bulk_jobs" (
	"id" serial PRIMARY KEY NOT NULL,
	"manager_id" integer,
	"action" text NOT NULL,
	"ids" jsonb NOT NULL,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"total" integer NOT NULL,
	"processed" integer DEFAULT 0 NOT NULL,
	"succeeded" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"failed" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "daily_usage" (
	"subscriber_id" integer NOT NULL,
	"date" date NOT NULL,
	"download_bytes" bigint DEFAULT 0 NOT NULL,
	"upload_bytes" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "daily_usage_subscriber_id_date_pk" PRIMARY KEY("subscriber_id","date")
);
--> statement-breakpoint
CREATE TABLE "deliveries" (
	"id" serial PRIMARY KEY NOT NULL,
	"invoice_id" integer,
	"subscriber_id" integer,
	"invoice_ids" jsonb,
	"provider" text NOT NULL,
	"phone" text NOT NULL,
	"status" text NOT NULL,
	"provider_message_id" text,
	"error" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"created_by" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"manager_id" integer NOT NULL,
	"key" text NOT NULL,
	"route" text NOT NULL,
	"request_hash" text NOT NULL,
	"status_code" integer,
	"response" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_manager_id_key_pk" PRIMARY KEY("manager_id","key")
);
--> statement-breakpoint
CREATE TABLE "invoice_items" (
	"id" serial PRIMARY KEY NOT NULL,
	"invoice_id" integer NOT NULL,
	"position" integer NOT NULL,
	"description" text NOT NULL,
	"qty" numeric(14, 3) NOT NULL,
	"unit_price" bigint NOT NULL,
	"amount" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "invoice_payments" (
	"id" serial PRIMARY KEY NOT NULL,
	"invoice_id" integer NOT NULL,
	"transaction_id" bigint NOT NULL,
	"amount" bigint NOT NULL,
	"method" text NOT NULL,
	"reference" text,
	"paid_at" timestamp with time zone NOT NULL,
	"notes" text,
	"created_by" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "invoice_sequences" (
	"prefix" text NOT NULL,
	"year" integer NOT NULL,
	"last_value" integer NOT NULL,
	CONSTRAINT "invoice_sequences_prefix_year_pk" PRIMARY KEY("prefix","year")
);
--> statement-breakpoint
CREATE TABLE "invoices" (
	"id" serial PRIMARY KEY NOT NULL,
	"invoice_number" text NOT NULL,
	"subscriber_id" integer NOT NULL,
	"reseller_id" integer NOT NULL,
	"kind" text DEFAULT 'manual' NOT NULL,
	"amount" bigint NOT NULL,
	"tax_rate" numeric(5, 2) NOT NULL,
	"tax_amount" bigint NOT NULL,
	"total" bigint NOT NULL,
	"paid_amount" bigint DEFAULT 0 NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"currency" char(3) NOT NULL,
	"issue_date" date NOT NULL,
	"due_date" date NOT NULL,
	"paid_at" timestamp with time zone,
	"notes" text,
	"commission_rate" numeric(5, 2) DEFAULT '0' NOT NULL,
	"commission_amount" bigint DEFAULT 0 NOT NULL,
	"consolidated_into" integer,
	"public_token_nonce" text,
	"public_token_hash" text,
	"created_by" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ip_pools" (
	"name" text PRIMARY KEY NOT NULL,
	"range_start" "inet" NOT NULL,
	"range_end" "inet" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "managers" (
	"id" serial PRIMARY KEY NOT NULL,
	"username" text NOT NULL,
	"password_hash" text NOT NULL,
	"role" text NOT NULL,
	"reseller_id" integer,
	"permissions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "nas" (
	"id" serial PRIMARY KEY NOT NULL,
	"nasname" text NOT NULL,
	"shortname" text NOT NULL,
	"type" text DEFAULT 'other' NOT NULL,
	"ports" integer,
	"secret" text NOT NULL,
	"server" text,
	"community" text,
	"description" text,
	"coa_port" integer DEFAULT 3799 NOT NULL,
	"api_port" integer,
	"api_username" text,
	"api_password_enc" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"event" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"published_at" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "processed_events" (
	"event_id" bigint PRIMARY KEY NOT NULL,
	"processed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "radacct" (
	"radacctid" bigserial PRIMARY KEY NOT NULL,
	"acctsessionid" text NOT NULL,
	"acctuniqueid" text NOT NULL,
	"username" text,
	"realm" text,
	"nasipaddress" "inet" NOT NULL,
	"nasportid" text,
	"nasporttype" text,
	"acctstarttime" timestamp with time zone,
	"acctupdatetime" timestamp with time zone,
	"acctstoptime" timestamp with time zone,
	"acctinterval" bigint,
	"acctsessiontime" bigint,
	"acctauthentic" text,
	"connectinfo_start" text,
	"connectinfo_stop" text,
	"acctinputoctets" bigint,
	"acctoutputoctets" bigint,
	"calledstationid" text,
	"callingstationid" text,
	"acctterminatecause" text,
	"servicetype" text,
	"framedprotocol" text,
	"framedipaddress" "inet",
	"framedipv6address" "inet",
	"framedipv6prefix" "inet",
	"framedinterfaceid" text,
	"delegatedipv6prefix" "inet",
	"class" text
);
--> statement-breakpoint
CREATE TABLE "radcheck" (
	"id" serial PRIMARY KEY NOT NULL,
	"username" text DEFAULT '' NOT NULL,
	"attribute" text DEFAULT '' NOT NULL,
	"op" varchar(2) DEFAULT '==' NOT NULL,
	"value" text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "radgroupcheck" (
	"id" serial PRIMARY KEY NOT NULL,
	"groupname" text DEFAULT '' NOT NULL,
	"attribute" text DEFAULT '' NOT NULL,
	"op" varchar(2) DEFAULT '==' NOT NULL,
	"value" text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "radgroupreply" (
	"id" serial PRIMARY KEY NOT NULL,
	"groupname" text DEFAULT '' NOT NULL,
	"attribute" text DEFAULT '' NOT NULL,
	"op" varchar(2) DEFAULT '=' NOT NULL,
	"value" text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "radpostauth" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"username" text NOT NULL,
	"pass" text,
	"reply" text,
	"calledstationid" text,
	"callingstationid" text,
	"authdate" timestamp with time zone DEFAULT now() NOT NULL,
	"class" text
);
--> statement-breakpoint
CREATE TABLE "radreply" (
	"id" serial PRIMARY KEY NOT NULL,
	"username" text DEFAULT '' NOT NULL,
	"attribute" text DEFAULT '' NOT NULL,
	"op" varchar(2) DEFAULT '=' NOT NULL,
	"value" text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "radusergroup" (
	"id" serial PRIMARY KEY NOT NULL,
	"username" text DEFAULT '' NOT NULL,
	"groupname" text DEFAULT '' NOT NULL,
	"priority" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reseller_service_limits" (
	"id" serial PRIMARY KEY NOT NULL,
	"reseller_id" integer NOT NULL,
	"service_id" integer NOT NULL,
	"max_subscribers" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "resellers" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"parent_id" integer,
	"path" text NOT NULL,
	"balance" bigint DEFAULT 0 NOT NULL,
	"commission_rate" numeric(5, 2) DEFAULT '0' NOT NULL,
	"currency" char(3) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "services" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"price" bigint NOT NULL,
	"currency" char(3) NOT NULL,
	"duration_days" integer NOT NULL,
	"daily_quota_gb" numeric(12, 3),
	"monthly_quota_gb" numeric(12, 3),
	"rate_limit" text,
	"fup_tiers" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"pool_name" text,
	"mac_binding" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "subscribers" (
	"id" serial PRIMARY KEY NOT NULL,
	"username" text NOT NULL,
	"password_enc" text NOT NULL,
	"full_name" text,
	"phone" text,
	"mac_address" text,
	"service_id" integer NOT NULL,
	"reseller_id" integer NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"static_ip" "inet",
	"region" text,
	"building" text,
	"address" text,
	"nationality" text,
	"country" text,
	"notes" text,
	"price" bigint,
	"override_price" boolean DEFAULT false NOT NULL,
	"fup_level" smallint DEFAULT 0 NOT NULL,
	"daily_quota_used" bigint DEFAULT 0 NOT NULL,
	"monthly_quota_used" bigint DEFAULT 0 NOT NULL,
	"daily_quota_gb" numeric(12, 3),
	"monthly_quota_gb" numeric(12, 3),
	"extra_quota_bytes" bigint DEFAULT 0 NOT NULL,
	"wallet_balance" bigint DEFAULT 0 NOT NULL,
	"expiry_date" date NOT NULL,
	"last_renewed_on" date,
	"is_online" boolean DEFAULT false NOT NULL,
	"ip_address" "inet",
	"last_nas_id" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "token_blacklist" (
	"jti" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "transactions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"amount" bigint NOT NULL,
	"currency" char(3) NOT NULL,
	"subscriber_id" integer,
	"username" text,
	"reseller_id" integer,
	"invoice_id" integer,
	"method" text,
	"reference" text,
	"notes" text,
	"created_by" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "wallet_entries" (
	"id" serial PRIMARY KEY NOT NULL,
	"subscriber_id" integer NOT NULL,
	"amount" bigint NOT NULL,
	"transaction_id" bigint,
	"reason" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "audit_log_entity_idx" ON "audit_log" USING btree ("entity","entity_id");--> statement-breakpoint
CREATE INDEX "bandwidth_rules_subscriber_idx" ON "bandwidth_rules" USING btree ("subscriber_id");--> statement-breakpoint
CREATE INDEX "deliveries_invoice_idx" ON "deliveries" USING btree ("invoice_id");--> statement-breakpoint
CREATE INDEX "invoice_items_invoice_idx" ON "invoice_items" USING btree ("invoice_id","position");--> statement-breakpoint
CREATE INDEX "invoice_payments_invoice_idx" ON "invoice_payments" USING btree ("invoice_id");--> statement-breakpoint
CREATE UNIQUE INDEX "invoices_number_uq" ON "invoices" USING btree ("invoice_number");--> statement-breakpoint
CREATE INDEX "invoices_subscriber_idx" ON "invoices" USING btree ("subscriber_id","issue_date","id");--> statement-breakpoint
CREATE INDEX "invoices_reseller_idx" ON "invoices" USING btree ("reseller_id","id");--> statement-breakpoint
CREATE INDEX "invoices_status_idx" ON "invoices" USING btree ("status","id");--> statement-breakpoint
CREATE INDEX "invoices_issue_date_idx" ON "invoices" USING btree ("issue_date");--> statement-breakpoint
CREATE INDEX "invoices_number_trgm" ON "invoices" USING gin ("invoice_number" gin_trgm_ops);--> statement-breakpoint
CREATE UNIQUE INDEX "managers_username_uq" ON "managers" USING btree ("username");--> statement-breakpoint
CREATE UNIQUE INDEX "nas_nasname_uq" ON "nas" USING btree ("nasname");--> statement-breakpoint
CREATE INDEX "outbox_unpublished_idx" ON "outbox" USING btree ("id") WHERE "outbox"."published_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "radacct_acctuniqueid" ON "radacct" USING btree ("acctuniqueid");--> statement-breakpoint
CREATE INDEX "radacct_active_session_idx" ON "radacct" USING btree ("username") WHERE "radacct"."acctstoptime" is null;--> statement-breakpoint
CREATE INDEX "radacct_username_start_idx" ON "radacct" USING btree ("username","acctstarttime");--> statement-breakpoint
CREATE INDEX "radacct_start_idx" ON "radacct" USING btree ("acctstarttime");--> statement-breakpoint
CREATE INDEX "radacct_nasip_idx" ON "radacct" USING btree ("nasipaddress");--> statement-breakpoint
CREATE INDEX "radcheck_username" ON "radcheck" USING btree ("username","attribute");--> statement-breakpoint
CREATE INDEX "radgroupcheck_groupname" ON "radgroupcheck" USING btree ("groupname","attribute");--> statement-breakpoint
CREATE INDEX "radgroupreply_groupname" ON "radgroupreply" USING btree ("groupname","attribute");--> statement-breakpoint
CREATE INDEX "radreply_username" ON "radreply" USING btree ("username","attribute");--> statement-breakpoint
CREATE INDEX "radusergroup_username" ON "radusergroup" USING btree ("username");--> statement-breakpoint
CREATE UNIQUE INDEX "reseller_service_limits_uq" ON "reseller_service_limits" USING btree ("reseller_id","service_id");--> statement-breakpoint
CREATE INDEX "resellers_parent_idx" ON "resellers" USING btree ("parent_id");--> statement-breakpoint
CREATE INDEX "resellers_path_idx" ON "resellers" USING btree ("path" text_pattern_ops);--> statement-breakpoint
CREATE UNIQUE INDEX "services_name_uq" ON "services" USING btree ("name") WHERE "services"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "subscribers_username_live_uq" ON "subscribers" USING btree ("username") WHERE "subscribers"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "subscribers_reseller_idx" ON "subscribers" USING btree ("reseller_id");--> statement-breakpoint
CREATE INDEX "subscribers_service_idx" ON "subscribers" USING btree ("service_id");--> statement-breakpoint
CREATE INDEX "subscribers_expiry_idx" ON "subscribers" USING btree ("expiry_date");--> statement-breakpoint
CREATE INDEX "subscribers_created_idx" ON "subscribers" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "subscribers_last_nas_idx" ON "subscribers" USING btree ("last_nas_id");--> statement-breakpoint
CREATE INDEX "subscribers_username_trgm" ON "subscribers" USING gin ("username" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "subscribers_full_name_trgm" ON "subscribers" USING gin ("full_name" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "subscribers_phone_trgm" ON "subscribers" USING gin ("phone" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "subscribers_mac_trgm" ON "subscribers" USING gin ("mac_address" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "transactions_subscriber_idx" ON "transactions" USING btree ("subscriber_id");--> statement-breakpoint
CREATE INDEX "transactions_reseller_idx" ON "transactions" USING btree ("reseller_id");--> statement-breakpoint
CREATE INDEX "transactions_invoice_idx" ON "transactions" USING btree ("invoice_id");--> statement-breakpoint
CREATE INDEX "transactions_username_idx" ON "transactions" USING btree ("username");--> statement-breakpoint
CREATE INDEX "wallet_entries_subscriber_idx" ON "wallet_entries" USING btree ("subscriber_id");