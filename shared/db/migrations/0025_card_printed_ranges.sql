-- Card sheets printed in parts (issue 27): the card-number ranges printed so far, each with its time.
ALTER TABLE "card_batches" ADD COLUMN "printed_ranges" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
-- A batch printed before parts existed was printed whole.
UPDATE "card_batches"
   SET "printed_ranges" = jsonb_build_array(jsonb_build_object('from', 1, 'to', "count",
         'at', to_char("printed_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
 WHERE "printed_at" IS NOT NULL;
