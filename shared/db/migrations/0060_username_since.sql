-- Accounting is kept by username, and a deleted subscriber's name can be taken again: a live
-- subscriber's sessions are those under its name that started at or after username_since (null:
-- all). Set for a live subscriber that took the name of one deleted before it was created.
ALTER TABLE "subscribers" ADD COLUMN "username_since" timestamp with time zone;--> statement-breakpoint
UPDATE "subscribers" s SET "username_since" = d."released"
  FROM (SELECT "username", max("deleted_at") AS "released" FROM "subscribers"
         WHERE "deleted_at" IS NOT NULL GROUP BY "username") d
 WHERE s."deleted_at" IS NULL AND d."username" = s."username" AND d."released" <= s."created_at";
