-- Managers can be disabled, and a password change ends every token issued before it: tokens carry
-- the manager's token_version (claim `tv`), and the gateway refuses one that no longer matches.
ALTER TABLE "managers" ADD COLUMN "active" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "managers" ADD COLUMN "token_version" integer DEFAULT 0 NOT NULL;
