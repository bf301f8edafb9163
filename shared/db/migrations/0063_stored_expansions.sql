-- Rows FreeRADIUS would expand, written before the rules that now refuse them: a value wrapped
-- whole in backticks in radcheck or radreply (an imported password, a rate carried over from a
-- plan imported with one), which rlm_sql runs at every login as the role that reads the NAS
-- secrets, and group rows an import wrote after migration 0061 (a plan's rate with a backtick or
-- %{). Such a password never matched what the subscriber typed; the subscriber needs a new one.
DELETE FROM "radcheck" WHERE length("value") > 1 AND left("value", 1) = '`' AND right("value", 1) = '`';--> statement-breakpoint
DELETE FROM "radreply" WHERE length("value") > 1 AND left("value", 1) = '`' AND right("value", 1) = '`';--> statement-breakpoint
DELETE FROM "radgroupreply"
 WHERE "value" LIKE '%`%' OR "value" LIKE '%\%{%' ESCAPE '\'
    OR ("value" ~ '^["''].*["'']$' AND left("value", 1) = right("value", 1) AND length("value") > 1);
