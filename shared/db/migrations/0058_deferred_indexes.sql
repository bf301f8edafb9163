-- deferred_indexes: the indexes a bulk load dropped until it builds them again (shared/db/deferred-indexes.ts).
CREATE TABLE "deferred_indexes" (
	"name" text PRIMARY KEY NOT NULL,
	"definition" text NOT NULL,
	"deferred_at" timestamp with time zone DEFAULT now() NOT NULL
);
