-- Accounting ingest (issue 26), after migration 0027, measured by bench:accounting.
-- 1. radacct gets fillfactor 80: a Start's row lands on a page with room for its interims' new
--    versions, so an Interim-Update (no indexed column changes since 0027) is a HOT update: it
--    writes none of radacct's nine indexes. At fillfactor 100 the page was full and every interim
--    wrote all of them. Applies to pages written from now on.
ALTER TABLE radacct SET (fillfactor = 80);
--> statement-breakpoint
-- 2. radacct_update_trigger (0027) adds an interim's octets to the day's daily_usage row with an
--    UPDATE, and inserts only when the row is missing (the day's first interim); otherwise unchanged.
CREATE OR REPLACE FUNCTION radacct_update_trigger() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  -- Octets are from the NAS's side: input = from the subscriber (upload), output = to it (download).
  -- A total that goes down (a NAS bug, a counter wrap without gigawords) counts as no traffic.
  upload bigint := greatest(coalesce(NEW.acctinputoctets, 0) - coalesce(OLD.acctinputoctets, 0), 0);
  download bigint := greatest(coalesce(NEW.acctoutputoctets, 0) - coalesce(OLD.acctoutputoctets, 0), 0);
  used bigint;
  today date := (now() AT TIME ZONE 'UTC')::date;
  session_moved boolean := OLD.acctstoptime IS DISTINCT FROM NEW.acctstoptime
    OR OLD.framedipaddress IS DISTINCT FROM NEW.framedipaddress
    OR OLD.nasipaddress IS DISTINCT FROM NEW.nasipaddress
    OR OLD.username IS DISTINCT FROM NEW.username;
  open_ip inet;
  open_nas inet;
  is_open boolean;
  seen_nas integer;
  sub_id integer;
BEGIN
  used := upload + download;
  IF OLD.username IS DISTINCT FROM NEW.username THEN
    PERFORM subscriber_session_refresh(OLD.username, NULL);
  END IF;
  IF NEW.username IS NULL OR (used = 0 AND NOT session_moved) THEN
    RETURN NULL;
  END IF;
  IF NOT session_moved THEN
    -- An Interim-Update: the counters only (unindexed columns, so a HOT update when the page has room).
    UPDATE subscribers s
       SET daily_quota_used = CASE WHEN s.usage_day = today THEN s.daily_quota_used ELSE 0 END + used,
           monthly_quota_used = CASE WHEN date_trunc('month', s.usage_day) = date_trunc('month', today)
                                     THEN s.monthly_quota_used ELSE 0 END + used,
           usage_day = today
     WHERE s.username = NEW.username AND s.deleted_at IS NULL
    RETURNING s.id INTO sub_id;
  ELSE
    -- A Stop (or a moved session): the state subscriber_session_refresh computes, and the counters,
    -- in one update; none when neither changes.
    SELECT framedipaddress, nasipaddress INTO open_ip, open_nas
      FROM radacct
     WHERE username = NEW.username AND acctstoptime IS NULL
     ORDER BY acctstarttime DESC NULLS LAST, radacctid DESC
     LIMIT 1;
    is_open := FOUND;
    SELECT id INTO seen_nas FROM nas WHERE nasname = host(coalesce(open_nas, NEW.nasipaddress)) LIMIT 1;
    UPDATE subscribers s
       SET daily_quota_used = CASE WHEN used = 0 THEN s.daily_quota_used
                                   WHEN s.usage_day = today THEN s.daily_quota_used + used
                                   ELSE used END,
           monthly_quota_used = CASE WHEN used = 0 THEN s.monthly_quota_used
                                     WHEN date_trunc('month', s.usage_day) = date_trunc('month', today)
                                     THEN s.monthly_quota_used + used
                                     ELSE used END,
           usage_day = CASE WHEN used = 0 THEN s.usage_day ELSE today END,
           is_online = is_open,
           ip_address = CASE WHEN is_open THEN open_ip END,
           last_nas_id = coalesce(seen_nas, s.last_nas_id)
     WHERE s.username = NEW.username AND s.deleted_at IS NULL
       AND (used > 0
            OR (s.is_online, s.ip_address, s.last_nas_id)
               IS DISTINCT FROM (is_open, CASE WHEN is_open THEN open_ip END, coalesce(seen_nas, s.last_nas_id)))
    RETURNING s.id INTO sub_id;
  END IF;
  IF sub_id IS NULL OR used = 0 THEN
    RETURN NULL;
  END IF;
  INSERT INTO fup_queue (subscriber_id) VALUES (sub_id) ON CONFLICT DO NOTHING;
  -- The day's row exists for all but the day's first interim: a plain update then (an upsert locks
  -- the row it conflicts with before updating it, one more write per interim).
  UPDATE daily_usage d
     SET download_bytes = d.download_bytes + download,
         upload_bytes = d.upload_bytes + upload
   WHERE d.subscriber_id = sub_id AND d.date = today;
  IF NOT FOUND THEN
    INSERT INTO daily_usage AS d (subscriber_id, date, download_bytes, upload_bytes)
    VALUES (sub_id, today, download, upload)
    ON CONFLICT (subscriber_id, date) DO UPDATE
       SET download_bytes = d.download_bytes + EXCLUDED.download_bytes,
           upload_bytes = d.upload_bytes + EXCLUDED.upload_bytes;
  END IF;
  RETURN NULL;
END;
$$;
