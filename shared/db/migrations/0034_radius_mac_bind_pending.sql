-- MAC binding reached the database at every Access-Accept: FreeRADIUS's post-auth called
-- radius_bind_mac for every login, and for a subscriber already bound (or on a plan that does not
-- bind) it found nothing to do, at about as much PostgreSQL CPU as the rest of the login's
-- statements beyond the stock schema's. Now the subscriber who has something to bind carries the
-- radcheck row Tmp-String-1 := "bind-mac" (shared/access/radius-rows.ts writes it while the plan
-- binds and no MAC is stored; rlm_sql puts it in the control list) and the policy calls the
-- function only then. The function drops that row when it binds.
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
  DELETE FROM radcheck WHERE username = p_username AND attribute IN ('Calling-Station-Id', 'Tmp-String-1');
  INSERT INTO radcheck (username, attribute, op, value) VALUES (p_username, 'Calling-Station-Id', '==', bound);
  RETURN bound;
END;
$$;
--> statement-breakpoint
-- The subscribers waiting for their first MAC now.
INSERT INTO radcheck (username, attribute, op, value)
SELECT s.username, 'Tmp-String-1', ':=', 'bind-mac'
  FROM subscribers s JOIN services p ON p.id = s.service_id
 WHERE s.deleted_at IS NULL AND p.mac_binding AND s.mac_address IS NULL
   AND NOT EXISTS (SELECT 1 FROM radcheck c WHERE c.username = s.username AND c.attribute = 'Tmp-String-1');
