-- The row triggers of migration 0026 made cheaper (bench:webhooks): a SQL function doing an INSERT is
-- planned at every call, so each blocked or restored subscriber paid a plan even with no endpoint.
-- PL/pgSQL keeps its plans, and each row trigger first asks whether any endpoint is enabled.
CREATE OR REPLACE FUNCTION webhooks_enqueue(p_event text, p_payload jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_event_id uuid := gen_random_uuid();
BEGIN
  INSERT INTO webhook_deliveries (webhook_id, event_id, event, payload)
  SELECT w.id, v_event_id, p_event, p_payload FROM webhooks w WHERE w.enabled AND p_event = ANY (w.events);
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION webhooks_invoice_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhooks WHERE enabled) THEN RETURN NULL; END IF;
  PERFORM webhooks_enqueue('invoice.' || NEW.status, webhooks_invoice_data(NEW));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION webhooks_subscriber_access() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhooks WHERE enabled) THEN RETURN NULL; END IF;
  PERFORM webhooks_enqueue(
    CASE WHEN NEW.blocked_reason IS NULL THEN 'subscriber.restored'
         WHEN NEW.blocked_reason = 'expired' THEN 'subscriber.expired'
         ELSE 'subscriber.blocked' END,
    webhooks_subscriber_data(NEW) || jsonb_build_object('previous_blocked_reason', OLD.blocked_reason));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION webhooks_subscriber_renewed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhooks WHERE enabled) THEN RETURN NULL; END IF;
  PERFORM webhooks_enqueue('subscriber.renewed',
    webhooks_subscriber_data(NEW) || jsonb_build_object('previous_expiry_date', OLD.expiry_date));
  RETURN NULL;
END $$;
