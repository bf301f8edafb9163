-- Keeps subscribers.is_online / ip_address / last_nas_id in step with FreeRADIUS accounting, so
-- the subscriber list filters (online, offline, nas_id) read indexed columns and never scan radacct.
-- Only changes that can move those columns fire it: interim updates (octets, acctupdatetime) do not.
CREATE OR REPLACE FUNCTION subscriber_session_refresh(p_username text, p_nas inet) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  open_ip inet;
  open_nas inet;
  is_open boolean;
  seen_nas integer;
BEGIN
  IF p_username IS NULL THEN
    RETURN;
  END IF;
  SELECT framedipaddress, nasipaddress INTO open_ip, open_nas
    FROM radacct
   WHERE username = p_username AND acctstoptime IS NULL
   ORDER BY acctstarttime DESC NULLS LAST, radacctid DESC
   LIMIT 1;
  is_open := FOUND;
  SELECT id INTO seen_nas FROM nas WHERE nasname = host(coalesce(open_nas, p_nas)) LIMIT 1;
  UPDATE subscribers s
     SET is_online = is_open,
         ip_address = CASE WHEN is_open THEN open_ip END,
         last_nas_id = coalesce(seen_nas, s.last_nas_id)
   WHERE s.username = p_username
     AND s.deleted_at IS NULL
     AND (s.is_online, s.ip_address, s.last_nas_id)
         IS DISTINCT FROM (is_open, CASE WHEN is_open THEN open_ip END, coalesce(seen_nas, s.last_nas_id));
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION radacct_session_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND (TG_OP = 'DELETE' OR OLD.username IS DISTINCT FROM NEW.username) THEN
    PERFORM subscriber_session_refresh(OLD.username, NULL);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    PERFORM subscriber_session_refresh(NEW.username, NEW.nasipaddress);
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER radacct_session_ins AFTER INSERT ON radacct
  FOR EACH ROW EXECUTE FUNCTION radacct_session_trigger();
--> statement-breakpoint
CREATE TRIGGER radacct_session_upd AFTER UPDATE ON radacct
  FOR EACH ROW
  WHEN (OLD.acctstoptime IS DISTINCT FROM NEW.acctstoptime
     OR OLD.framedipaddress IS DISTINCT FROM NEW.framedipaddress
     OR OLD.nasipaddress IS DISTINCT FROM NEW.nasipaddress
     OR OLD.username IS DISTINCT FROM NEW.username)
  EXECUTE FUNCTION radacct_session_trigger();
--> statement-breakpoint
CREATE TRIGGER radacct_session_del AFTER DELETE ON radacct
  FOR EACH ROW EXECUTE FUNCTION radacct_session_trigger();
