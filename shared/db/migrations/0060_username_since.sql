-- Accounting is kept by username, and a deleted subscriber's name can be taken again: a live
-- subscriber's sessions are those under its name that started at or after username_since (null:
-- all). Set for a live subscriber whose name a deleted one held (created after it, or renamed onto
-- the name: the rows under it cannot be told apart then, and the earlier holder's stay hidden).
ALTER TABLE "subscribers" ADD COLUMN "username_since" timestamp with time zone;--> statement-breakpoint
UPDATE "subscribers" s SET "username_since" = d."released"
  FROM (SELECT "username", max("deleted_at") AS "released" FROM "subscribers"
         WHERE "deleted_at" IS NOT NULL GROUP BY "username") d
 WHERE s."deleted_at" IS NULL AND d."username" = s."username";
