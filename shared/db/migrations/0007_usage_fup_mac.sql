-- Usage, fair use and MAC binding (docs/freeradius.md).
--
-- Usage: FreeRADIUS writes radacct itself, so the octets are counted where they land: a trigger
-- adds each row's increase (interim updates and stops repeat cumulative totals, so only NEW - OLD
-- is new traffic) to daily_usage and to the subscriber's counters, in FreeRADIUS's own transaction.
-- No delta is ever counted twice and none waits for a job. `usage_day` is the UTC day the daily
-- counter covers (its month is the month the monthly counter covers): traffic on a later day starts
-- the counters afresh, and the usage service's boundary job resets idle subscribers.
-- `fup_pending` marks subscribers whose usage moved since the FUP engine (network-access, usage
-- service) last compared it with their plan.
ALTER TABLE subscribers ADD COLUMN usage_day date;
--> statement-breakpoint
ALTER TABLE subscribers ADD COLUMN fup_pending boolean NOT NULL DEFAULT false;
--> statement-breakpoint
CREATE INDEX subscribers_fup_pending_idx ON subscribers (id) WHERE fup_pending;
--> statement-breakpoint
CREATE INDEX subscribers_usage_day_idx ON subscribers (usage_day) WHERE usage_day IS NOT NULL;
--> statement-breakpoint
-- SECURITY DEFINER (here and below): FreeRADIUS may connect as a role that can only read its
-- tables and write radacct/radpostauth (deploy/freeradius/grants.sql); what these functions write
-- on its behalf is exactly what they say, nothing the role could choose.
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
         usage_day = today,
         fup_pending = true
   WHERE s.username = NEW.username AND s.deleted_at IS NULL
  RETURNING s.id INTO sub_id;
  IF sub_id IS NULL THEN
    RETURN NULL;
  END IF;
  INSERT INTO daily_usage AS d (subscriber_id, date, download_bytes, upload_bytes)
  VALUES (sub_id, today, download, upload)
  ON CONFLICT (subscriber_id, date) DO UPDATE
     SET download_bytes = d.download_bytes + EXCLUDED.download_bytes,
         upload_bytes = d.upload_bytes + EXCLUDED.upload_bytes;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER radacct_usage_ins AFTER INSERT ON radacct
  FOR EACH ROW EXECUTE FUNCTION radacct_usage_trigger();
--> statement-breakpoint
CREATE TRIGGER radacct_usage_upd AFTER UPDATE OF acctinputoctets, acctoutputoctets ON radacct
  FOR EACH ROW
  WHEN (OLD.acctinputoctets IS DISTINCT FROM NEW.acctinputoctets
     OR OLD.acctoutputoctets IS DISTINCT FROM NEW.acctoutputoctets)
  EXECUTE FUNCTION radacct_usage_trigger();
--> statement-breakpoint
-- MAC binding, called by FreeRADIUS's post-auth after an Access-Accept
-- (deploy/freeradius/policy.conf). Binds the MAC when the subscriber's plan binds MACs and none is
-- bound yet, in the form the API stores (AA:BB:CC:DD:EE:FF), and writes the radcheck row that
-- rejects any other MAC from then on (the same row services/subscribers/radius-rows.ts derives from
-- mac_address). Returns the MAC it bound, or NULL when it bound nothing.
CREATE OR REPLACE FUNCTION radius_bind_mac(p_username text, p_calling_station_id text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  hex text := upper(regexp_replace(coalesce(p_calling_station_id, ''), '[^0-9A-Fa-f]', '', 'g'));
  mac text;
  bound text;
BEGIN
  IF length(hex) <> 12 THEN
    RETURN NULL;
  END IF;
  mac := concat_ws(':', substr(hex, 1, 2), substr(hex, 3, 2), substr(hex, 5, 2),
                        substr(hex, 7, 2), substr(hex, 9, 2), substr(hex, 11, 2));
  UPDATE subscribers s
     SET mac_address = mac, updated_at = now()
    FROM services p
   WHERE p.id = s.service_id AND p.mac_binding
     AND s.username = p_username AND s.deleted_at IS NULL AND s.mac_address IS NULL
  RETURNING s.mac_address INTO bound;
  IF bound IS NULL THEN
    RETURN NULL;
  END IF;
  DELETE FROM radcheck WHERE username = p_username AND attribute = 'Calling-Station-Id';
  INSERT INTO radcheck (username, attribute, op, value) VALUES (p_username, 'Calling-Station-Id', '==', bound);
  RETURN bound;
END;
$$;
--> statement-breakpoint
-- The session trigger of 0003 likewise, so the FreeRADIUS role needs no rights on subscribers.
ALTER FUNCTION subscriber_session_refresh(text, inet) SECURITY DEFINER SET search_path FROM CURRENT;
--> statement-breakpoint
-- Tier groups of the plans that exist already (shared/radius.ts writes them for every later plan
-- change): the tier's rate with `:=`, and Fall-Through so rlm_sql goes on to the plan's group.
INSERT INTO radgroupreply (groupname, attribute, op, value)
SELECT 'plan_' || p.id || '_fup' || (t->>'level'), a.attribute, a.op,
       CASE a.attribute WHEN 'Mikrotik-Rate-Limit' THEN t->>'rate_limit' ELSE 'Yes' END
  FROM services p
 CROSS JOIN jsonb_array_elements(p.fup_tiers) t
 CROSS JOIN (VALUES ('Mikrotik-Rate-Limit', ':='), ('Fall-Through', '=')) AS a(attribute, op)
 WHERE p.deleted_at IS NULL
   AND NOT EXISTS (SELECT 1 FROM radgroupreply g WHERE g.groupname = 'plan_' || p.id || '_fup' || (t->>'level'));
