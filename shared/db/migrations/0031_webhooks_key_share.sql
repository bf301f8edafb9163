-- An endpoint deleted while a write's trigger enqueues for it: the trigger saw the row, the delete
-- committed, and the delivery's foreign key check then failed the write itself (a payment, an
-- invoice: HTTP 500). Reading the endpoints FOR KEY SHARE waits for a delete in progress and then
-- skips the deleted row; the foreign key check takes that lock anyway. A delete that committed
-- before the statement is not seen at all (read committed).
CREATE OR REPLACE FUNCTION webhooks_enqueue(p_event text, p_payload jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_event_id uuid := gen_random_uuid();
BEGIN
  INSERT INTO webhook_deliveries (webhook_id, event_id, event, payload)
  SELECT w.id, v_event_id, p_event, p_payload FROM webhooks w WHERE w.enabled AND p_event = ANY (w.events)
    FOR KEY SHARE OF w;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION webhooks_invoices_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhooks WHERE enabled) THEN RETURN NULL; END IF;
  INSERT INTO webhook_deliveries (webhook_id, event_id, event, payload)
  SELECT w.id, e.event_id, e.event, e.payload
    FROM (SELECT gen_random_uuid() AS event_id, v.event, v.payload
            FROM (SELECT n.id, 1 AS k, 'invoice.created' AS event, webhooks_invoice_data(n) AS payload FROM new_rows n
                  UNION ALL
                  -- Born paid (a zero total, a renewal paid from the wallet): paid as well as created.
                  SELECT n.id, 2, 'invoice.paid', webhooks_invoice_data(n) FROM new_rows n WHERE n.status = 'paid'
                  ORDER BY 1, 2) v) e
    JOIN webhooks w ON w.enabled AND e.event = ANY (w.events)
    FOR KEY SHARE OF w;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION webhooks_payments_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhooks WHERE enabled) THEN RETURN NULL; END IF;
  INSERT INTO webhook_deliveries (webhook_id, event_id, event, payload)
  SELECT w.id, e.event_id, 'payment.created', e.payload
    FROM (SELECT gen_random_uuid() AS event_id,
                 jsonb_build_object('id', p.id, 'invoice_id', p.invoice_id, 'invoice_number', i.invoice_number,
                   'subscriber_id', i.subscriber_id, 'reseller_id', i.reseller_id, 'amount', p.amount,
                   'currency', i.currency, 'method', p.method, 'reference', p.reference, 'paid_at', p.paid_at,
                   'transaction_id', p.transaction_id) AS payload
            FROM new_rows p JOIN invoices i ON i.id = p.invoice_id
           ORDER BY p.id) e
    JOIN webhooks w ON w.enabled AND 'payment.created' = ANY (w.events)
    FOR KEY SHARE OF w;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION webhooks_subscribers_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhooks WHERE enabled) THEN RETURN NULL; END IF;
  INSERT INTO webhook_deliveries (webhook_id, event_id, event, payload)
  SELECT w.id, e.event_id, 'subscriber.created', e.payload
    FROM (SELECT gen_random_uuid() AS event_id, webhooks_subscriber_data(n) AS payload FROM new_rows n ORDER BY n.id) e
    JOIN webhooks w ON w.enabled AND 'subscriber.created' = ANY (w.events)
    FOR KEY SHARE OF w;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION webhooks_disconnects_recorded() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhooks WHERE enabled) THEN RETURN NULL; END IF;
  INSERT INTO webhook_deliveries (webhook_id, event_id, event, payload)
  SELECT w.id, e.event_id, 'subscriber.disconnected', e.payload
    FROM (SELECT gen_random_uuid() AS event_id,
                 jsonb_build_object('subscriber_id', n.subscriber_id, 'username', n.username, 'reason', n.reason,
                   'outcome', n.outcome, 'source', n.source, 'sessions', jsonb_array_length(n.sessions)) AS payload
            FROM new_rows n
           WHERE n.action = 'disconnect' AND n.outcome IN ('disconnected', 'kicked')
           ORDER BY n.id) e
    JOIN webhooks w ON w.enabled AND 'subscriber.disconnected' = ANY (w.events)
    FOR KEY SHARE OF w;
  RETURN NULL;
END $$;
