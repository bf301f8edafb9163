CREATE TABLE "webhook_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"delivery_id" bigint NOT NULL,
	"trigger" text NOT NULL,
	"status_code" integer,
	"error" text,
	"response_body" text,
	"duration_ms" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"webhook_id" integer NOT NULL,
	"event_id" uuid NOT NULL,
	"event" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_status_code" integer,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" serial PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"description" text,
	"events" text[] NOT NULL,
	"secret_enc" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"disabled_reason" text,
	"disabled_at" timestamp with time zone,
	"consecutive_failures" integer DEFAULT 0 NOT NULL,
	"created_by" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_webhooks_id_fk" FOREIGN KEY ("webhook_id") REFERENCES "public"."webhooks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_attempts_delivery_idx" ON "webhook_attempts" USING btree ("delivery_id","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_webhook_idx" ON "webhook_deliveries" USING btree ("webhook_id","id");--> statement-breakpoint
-- Outgoing webhooks (docs/webhooks.md). An event is a webhook_deliveries row per enabled endpoint
-- that asked for it, written by these triggers in the transaction of the change it reports: every
-- code path (the payment's one-statement fast path, batches, the sweep, imports) is covered, and a
-- crash loses nothing. Without an endpoint a statement pays one read of the (empty) webhooks table;
-- row triggers fire only on the transitions they report (their WHEN is checked without a call).
CREATE FUNCTION webhooks_enqueue(p_event text, p_payload jsonb) RETURNS void LANGUAGE sql AS $$
  INSERT INTO webhook_deliveries (webhook_id, event_id, event, payload)
  SELECT w.id, e.id, p_event, p_payload
    FROM (SELECT gen_random_uuid() AS id) e, webhooks w
   WHERE w.enabled AND p_event = ANY (w.events)
$$;
--> statement-breakpoint
CREATE FUNCTION webhooks_invoice_data(i invoices) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('id', i.id, 'invoice_number', i.invoice_number, 'subscriber_id', i.subscriber_id,
    'reseller_id', i.reseller_id, 'kind', i.kind, 'status', i.status, 'currency', i.currency, 'amount', i.amount,
    'tax_amount', i.tax_amount, 'total', i.total, 'paid_amount', i.paid_amount, 'issue_date', i.issue_date,
    'due_date', i.due_date, 'paid_at', i.paid_at)
$$;
--> statement-breakpoint
CREATE FUNCTION webhooks_subscriber_data(s subscribers) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('id', s.id, 'username', s.username, 'full_name', s.full_name,
    'reseller_id', s.reseller_id, 'service_id', s.service_id, 'status', s.status, 'expiry_date', s.expiry_date,
    'blocked_reason', s.blocked_reason, 'auto_renew', s.auto_renew)
$$;
--> statement-breakpoint
-- Statement triggers for inserts, so a batch of 100,000 invoices is one set-based insert here too.
CREATE FUNCTION webhooks_invoices_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
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
    JOIN webhooks w ON w.enabled AND e.event = ANY (w.events);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhooks_invoices_inserted AFTER INSERT ON invoices REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION webhooks_invoices_inserted();
--> statement-breakpoint
CREATE FUNCTION webhooks_invoice_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM webhooks_enqueue('invoice.' || NEW.status, webhooks_invoice_data(NEW));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhooks_invoice_status AFTER UPDATE OF status ON invoices FOR EACH ROW
  WHEN (NEW.status IN ('paid', 'overdue') AND OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION webhooks_invoice_status();
--> statement-breakpoint
CREATE FUNCTION webhooks_payments_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
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
    JOIN webhooks w ON w.enabled AND 'payment.created' = ANY (w.events);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhooks_payments_inserted AFTER INSERT ON invoice_payments REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION webhooks_payments_inserted();
--> statement-breakpoint
CREATE FUNCTION webhooks_subscribers_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhooks WHERE enabled) THEN RETURN NULL; END IF;
  INSERT INTO webhook_deliveries (webhook_id, event_id, event, payload)
  SELECT w.id, e.event_id, 'subscriber.created', e.payload
    FROM (SELECT gen_random_uuid() AS event_id, webhooks_subscriber_data(n) AS payload FROM new_rows n ORDER BY n.id) e
    JOIN webhooks w ON w.enabled AND 'subscriber.created' = ANY (w.events);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhooks_subscribers_inserted AFTER INSERT ON subscribers REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION webhooks_subscribers_inserted();
--> statement-breakpoint
-- blocked_reason is the lifecycle's state (shared/access/radius-rows.ts): into `expired` is
-- subscriber.expired, into another reason subscriber.blocked, back to null subscriber.restored.
CREATE FUNCTION webhooks_subscriber_access() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM webhooks_enqueue(
    CASE WHEN NEW.blocked_reason IS NULL THEN 'subscriber.restored'
         WHEN NEW.blocked_reason = 'expired' THEN 'subscriber.expired'
         ELSE 'subscriber.blocked' END,
    webhooks_subscriber_data(NEW) || jsonb_build_object('previous_blocked_reason', OLD.blocked_reason));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhooks_subscriber_access AFTER UPDATE OF blocked_reason ON subscribers FOR EACH ROW
  WHEN (OLD.blocked_reason IS DISTINCT FROM NEW.blocked_reason)
  EXECUTE FUNCTION webhooks_subscriber_access();
--> statement-breakpoint
-- A renewal (by hand, bulk or the sweep's auto-renew) sets last_renewed_on, at most once a day.
CREATE FUNCTION webhooks_subscriber_renewed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM webhooks_enqueue('subscriber.renewed',
    webhooks_subscriber_data(NEW) || jsonb_build_object('previous_expiry_date', OLD.expiry_date));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhooks_subscriber_renewed AFTER UPDATE OF last_renewed_on ON subscribers FOR EACH ROW
  WHEN (NEW.last_renewed_on IS NOT NULL AND OLD.last_renewed_on IS DISTINCT FROM NEW.last_renewed_on)
  EXECUTE FUNCTION webhooks_subscriber_renewed();
--> statement-breakpoint
-- A disconnect network-access carried out (CoA acknowledged, or the router API's kick).
CREATE FUNCTION webhooks_disconnects_recorded() RETURNS trigger LANGUAGE plpgsql AS $$
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
    JOIN webhooks w ON w.enabled AND 'subscriber.disconnected' = ANY (w.events);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhooks_disconnects_recorded AFTER INSERT ON coa_outcomes REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION webhooks_disconnects_recorded();
--> statement-breakpoint
-- The delivery worker is woken at commit (as the outbox relay is), and polls as a safety net.
CREATE FUNCTION webhooks_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('webhook_deliveries', '');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhooks_notify AFTER INSERT ON webhook_deliveries FOR EACH STATEMENT EXECUTE FUNCTION webhooks_notify();
