ALTER TABLE "nas" ADD COLUMN "vendor" text DEFAULT 'mikrotik' NOT NULL;--> statement-breakpoint
ALTER TABLE "services" ADD COLUMN "vendor_attributes" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "nas" ADD CONSTRAINT "nas_vendor_ck" CHECK ("nas"."vendor" in ('mikrotik', 'accel-ppp', 'cisco', 'juniper', 'huawei', 'nokia', 'generic'));--> statement-breakpoint
-- FreeRADIUS's clients (mods/sql: client_table = "radius_clients"): its stock client query reads
-- `type` as the client's nas_type, which the policy deploy/freeradius/policy.conf keys the vendor's
-- group rows on. The API's own `type` column stays what it was.
CREATE VIEW "radius_clients" AS SELECT "id", "nasname", "shortname", "vendor" AS "type", "secret", "server" FROM "nas";
--> statement-breakpoint
-- A FreeRADIUS role made from an earlier grants.sql reads nas; it must read the view too, or its
-- client query fails at start: every role that may select from nas gets it here.
DO $grant$
DECLARE
  role_name name;
BEGIN
  FOR role_name IN
    SELECT DISTINCT a.grantee::regrole::text
      FROM pg_class c, aclexplode(c.relacl) a
     WHERE c.oid = 'nas'::regclass AND a.privilege_type = 'SELECT'
       AND a.grantee <> 0 AND a.grantee <> c.relowner
  LOOP
    EXECUTE format('GRANT SELECT ON radius_clients TO %s', role_name);
  END LOOP;
END
$grant$;
