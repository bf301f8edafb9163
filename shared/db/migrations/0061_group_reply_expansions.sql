-- Group reply rows FreeRADIUS would expand (a value wrapped whole in backticks or quotes, a
-- backtick, %{) or that would give one subscriber's address to a whole group: operator templates
-- and the garden could write them before groupPairProblem (shared/domain/access.ts) refused them.
-- Written from stored templates they are now left out; these are the ones already written.
DELETE FROM "radgroupreply"
 WHERE "value" LIKE '%`%' OR "value" LIKE '%\%{%' ESCAPE '\'
    OR ("value" ~ '^["''].*["'']$' AND left("value", 1) = right("value", 1) AND length("value") > 1)
    OR lower("attribute") IN ('framed-ip-address', 'framed-ipv6-address', 'framed-ipv6-prefix', 'delegated-ipv6-prefix');
