ALTER TABLE "nas" ADD COLUMN "vendor" text DEFAULT 'mikrotik' NOT NULL;--> statement-breakpoint
ALTER TABLE "services" ADD COLUMN "vendor_attributes" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "nas" ADD CONSTRAINT "nas_vendor_ck" CHECK ("nas"."vendor" in ('mikrotik', 'accel-ppp', 'cisco', 'juniper', 'huawei', 'nokia', 'generic'));--> statement-breakpoint
-- FreeRADIUS's clients (mods/sql: client_table = "radius_clients"): its stock client query reads
-- `type` as the client's nas_type, which the policy deploy/freeradius/policy.conf keys the vendor's
-- group rows on. The API's own `type` column stays what it was.
CREATE VIEW "radius_clients" AS SELECT "id", "nasname", "shortname", "vendor" AS "type", "secret", "server" FROM "nas";
