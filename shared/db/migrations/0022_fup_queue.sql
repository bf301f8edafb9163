CREATE TABLE "fup_queue" (
	"subscriber_id" integer PRIMARY KEY NOT NULL
);
--> statement-breakpoint
-- The usage trigger marks a subscriber for the FUP engine in fup_queue instead of setting
-- subscribers.fup_pending: that flag is the predicate of subscribers_fup_pending_idx, so setting it
-- after each FUP run made the interim's subscribers update non-HOT (all 20 indexes of the table
-- written, four of them trigram GIN). Now an interim on the same day changes only unindexed columns
-- (the counters), and with room left on the page (fillfactor 90) it is a HOT update.
-- fup_pending stays for the other writers (a quota edit); the engine reads both.
ALTER TABLE subscribers SET (fillfactor = 90);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION radacct_usage_trigger() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  upload bigint;
  download bigint;
  today date := (now() AT TIME ZONE 'UTC')::date;
  sub_id integer;
BEGIN
  IF NEW.username IS NULL THEN
    RETURN NULL;
  END IF;
  -- Octets are from the NAS's side: input = from the subscriber (upload), output = to it (download).
  -- A total that goes down (a NAS bug, a counter wrap without gigawords) counts as no traffic.
  IF TG_OP = 'INSERT' THEN
    upload := greatest(coalesce(NEW.acctinputoctets, 0), 0);
    download := greatest(coalesce(NEW.acctoutputoctets, 0), 0);
  ELSE
    upload := greatest(coalesce(NEW.acctinputoctets, 0) - coalesce(OLD.acctinputoctets, 0), 0);
    download := greatest(coalesce(NEW.acctoutputoctets, 0) - coalesce(OLD.acctoutputoctets, 0), 0);
  END IF;
  IF upload = 0 AND download = 0 THEN
    RETURN NULL;
  END IF;
  UPDATE subscribers s
     SET daily_quota_used = CASE WHEN s.usage_day = today THEN s.daily_quota_used ELSE 0 END + upload + download,
         monthly_quota_used = CASE WHEN date_trunc('month', s.usage_day) = date_trunc('month', today)
                                   THEN s.monthly_quota_used ELSE 0 END + upload + download,
         usage_day = today
   WHERE s.username = NEW.username AND s.deleted_at IS NULL
  RETURNING s.id INTO sub_id;
  IF sub_id IS NULL THEN
    RETURN NULL;
  END IF;
  INSERT INTO fup_queue (subscriber_id) VALUES (sub_id) ON CONFLICT DO NOTHING;
  INSERT INTO daily_usage AS d (subscriber_id, date, download_bytes, upload_bytes)
  VALUES (sub_id, today, download, upload)
  ON CONFLICT (subscriber_id, date) DO UPDATE
     SET download_bytes = d.download_bytes + EXCLUDED.download_bytes,
         upload_bytes = d.upload_bytes + EXCLUDED.upload_bytes;
  RETURN NULL;
END;
$$;
