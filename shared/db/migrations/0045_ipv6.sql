CREATE TABLE "ipv6_pool_assignments" (
	"pool_name" text NOT NULL,
	"index" bigint NOT NULL,
	"prefix" "cidr" NOT NULL,
	"subscriber_id" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ipv6_pool_assignments_pool_name_index_pk" PRIMARY KEY("pool_name","index")
);
--> statement-breakpoint
CREATE TABLE "ipv6_pools" (
	"name" text PRIMARY KEY NOT NULL,
	"prefix" "cidr" NOT NULL,
	"prefix_length" smallint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "services" ADD COLUMN "framed_ipv6_pool" text;--> statement-breakpoint
ALTER TABLE "services" ADD COLUMN "delegated_ipv6_pool" text;--> statement-breakpoint
ALTER TABLE "subscribers" ADD COLUMN "ipv6_prefix" "cidr";--> statement-breakpoint
ALTER TABLE "subscribers" ADD COLUMN "delegated_ipv6_prefix" "cidr";--> statement-breakpoint
ALTER TABLE "ipv6_pool_assignments" ADD CONSTRAINT "ipv6_pool_assignments_pool_name_ipv6_pools_name_fk" FOREIGN KEY ("pool_name") REFERENCES "public"."ipv6_pools"("name") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ipv6_pool_assignments" ADD CONSTRAINT "ipv6_pool_assignments_subscriber_id_subscribers_id_fk" FOREIGN KEY ("subscriber_id") REFERENCES "public"."subscribers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "ipv6_pool_assignments_holder_uq" ON "ipv6_pool_assignments" USING btree ("subscriber_id","pool_name");--> statement-breakpoint
-- Not in schema.ts (drizzle-kit cannot declare them): two live subscribers never hold overlapping
-- prefixes (a /56 and a /64 inside it route to the same place), nor do two pools overlap. The
-- checks before each write give the 409 its words; these hold when two writers race.
ALTER TABLE "subscribers" ADD CONSTRAINT "subscribers_ipv6_prefix_no_overlap"
  EXCLUDE USING gist ("ipv6_prefix" inet_ops WITH &&) WHERE ("deleted_at" IS NULL AND "ipv6_prefix" IS NOT NULL);
--> statement-breakpoint
ALTER TABLE "subscribers" ADD CONSTRAINT "subscribers_delegated_ipv6_prefix_no_overlap"
  EXCLUDE USING gist ("delegated_ipv6_prefix" inet_ops WITH &&) WHERE ("deleted_at" IS NULL AND "delegated_ipv6_prefix" IS NOT NULL);
--> statement-breakpoint
ALTER TABLE "ipv6_pools" ADD CONSTRAINT "ipv6_pools_no_overlap" EXCLUDE USING gist ("prefix" inet_ops WITH &&);
--> statement-breakpoint
-- The captive portal finds an IPv6 client by its open session: the session's address, or a WAN or
-- delegated prefix holding it. Open sessions only, so these stay the size of the online set.
CREATE INDEX "radacct_open_framedipv6_idx" ON "radacct" USING btree ("framedipv6address") WHERE "acctstoptime" IS NULL;
--> statement-breakpoint
CREATE INDEX "radacct_open_framedipv6prefix_idx" ON "radacct" USING gist ("framedipv6prefix" inet_ops) WHERE "acctstoptime" IS NULL;
--> statement-breakpoint
CREATE INDEX "radacct_open_delegatedipv6prefix_idx" ON "radacct" USING gist ("delegatedipv6prefix" inet_ops) WHERE "acctstoptime" IS NULL;
