-- Issue 41: a plan's delegated IPv6 pool is the vendor's own attribute on MikroTik, Juniper and
-- Nokia (shared/vendors/profiles.ts, delegatedIpv6Pool); rows written before say
-- Delegated-IPv6-Prefix-Pool. The plain groups are MikroTik's, `<group>@<vendor>` the others'.
UPDATE "radgroupreply" SET "attribute" = 'Mikrotik-Delegated-IPv6-Pool'
 WHERE "attribute" = 'Delegated-IPv6-Prefix-Pool' AND "groupname" LIKE 'plan\_%' AND "groupname" NOT LIKE '%@%';--> statement-breakpoint
UPDATE "radgroupreply" SET "attribute" = 'ERX-IPv6-Delegated-Pool-Name'
 WHERE "attribute" = 'Delegated-IPv6-Prefix-Pool' AND "groupname" LIKE 'plan\_%@juniper';--> statement-breakpoint
UPDATE "radgroupreply" SET "attribute" = 'Alc-Delegated-IPv6-Pool'
 WHERE "attribute" = 'Delegated-IPv6-Prefix-Pool' AND "groupname" LIKE 'plan\_%@nokia';
