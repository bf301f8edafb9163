/**
 * A local stand-in for Stripe's API, as the official `stripe` package sees it (its `host`, `port`
 * and `protocol` options point here): `POST /v1/checkout/sessions` (form-encoded, Bearer secret key,
 * Idempotency-Key honoured) answers a Checkout Session object, `GET /v1/checkout/sessions/:id` reads
 * one back, anything else is Stripe's 404 error shape. The test side completes a session as Stripe
 * would: a `checkout.session.completed` event signed with `stripe.webhooks.generateTestHeaderString`
 * and POSTed to the webhook URL, as often and as concurrently as a test wants. Loopback only.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

export interface DoubleSession {
  id: string;
  object: 'checkout.session';
  mode: 'payment';
  status: 'open' | 'complete' | 'expired';
  payment_status: 'unpaid' | 'paid';
  amount_total: number;
  currency: string;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  payment_intent: string | null;
  success_url: string;
  cancel_url: string;
  url: string;
  livemode: false;
  created: number;
}

export interface StripeEvent {
  id: string;
  payload: string;
}

const signer = new Stripe('sk_test_signer');

export class StripeDouble {
  readonly sessions = new Map<string, DoubleSession>();
  readonly requests: { method: string; path: string; idempotencyKey?: string; form: Record<string, string> }[] = [];
  /** Runs before a created session is answered (a test delivers its webhook here to race the redirect). */
  beforeCreateAnswer: ((s: DoubleSession) => Promise<void>) | null = null;
  private server = http.createServer((req, res) => void this.handle(req, res));
  private byIdempotencyKey = new Map<string, string>();
  private counter = 0;
  baseUrl = '';

  constructor(private readonly secretKey: string) {}

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.baseUrl;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private id(prefix: string): string {
    this.counter += 1;
    return `${prefix}_test_${this.counter}${crypto.randomBytes(6).toString('hex')}`;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    const url = new URL(req.url ?? '/', 'http://double');
    const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
    this.requests.push({ method: req.method ?? '', path: url.pathname, idempotencyKey, form });
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': this.id('req') });
      res.end(JSON.stringify(body));
    };
    const error = (status: number, type: string, message: string) => send(status, { error: { type, message } });
    if (req.headers.authorization !== `Bearer ${this.secretKey}`)
      return error(401, 'invalid_request_error', 'Invalid API Key provided');
    if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
      const known = idempotencyKey && this.byIdempotencyKey.get(idempotencyKey);
      if (known) return send(200, this.sessions.get(known));
      const amount = Number(form['line_items[0][price_data][unit_amount]']);
      const currency = form['line_items[0][price_data][currency]'];
      if (!Number.isSafeInteger(amount) || amount < 1 || !currency)
        return error(400, 'invalid_request_error', 'line_items[0][price_data] is incomplete');
      const session = this.newSession({
        amount,
        currency,
        clientReferenceId: form.client_reference_id,
        metadata: Object.fromEntries(
          Object.entries(form)
            .filter(([k]) => k.startsWith('metadata['))
            .map(([k, v]) => [k.slice(9, -1), v]),
        ),
        successUrl: form.success_url,
        cancelUrl: form.cancel_url,
      });
      if (idempotencyKey) this.byIdempotencyKey.set(idempotencyKey, session.id);
      if (this.beforeCreateAnswer) await this.beforeCreateAnswer(session);
      return send(200, session);
    }
    const m = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && m && this.sessions.has(m[1])) return send(200, this.sessions.get(m[1]));
    return error(404, 'invalid_request_error', `Unrecognized request URL (${req.method}: ${url.pathname})`);
  }

  /**
   * The payer paid: the session completes and its event is made (not yet delivered). `amount` and
   * `currency` change what the event says was paid (a tampered or misconfigured price).
   */
  complete(sessionId: string, opts: { amount?: number; currency?: string } = {}): StripeEvent {
    const s = this.sessions.get(sessionId);
    if (!s) throw new Error(`no session ${sessionId}`);
    s.status = 'complete';
    s.payment_status = 'paid';
    s.payment_intent ??= this.id('pi');
    if (opts.amount !== undefined) s.amount_total = opts.amount;
    if (opts.currency !== undefined) s.currency = opts.currency;
    return this.event('checkout.session.completed', { ...s });
  }

  /**
   * A session this server never asked for, as a Payment Link of the same account makes one: its
   * price is the link's, and the payer picks `client_reference_id` (a URL parameter). Complete it
   * with `complete` to get its signed event.
   */
  foreignSession(opts: {
    amount: number;
    currency: string;
    clientReferenceId?: string;
    metadata?: Record<string, string>;
  }): DoubleSession {
    return this.newSession({
      ...opts,
      successUrl: 'https://example.invalid/thanks',
      cancelUrl: 'https://example.invalid/cancel',
    });
  }

  /** An open, unpaid session, kept. */
  private newSession(opts: {
    amount: number;
    currency: string;
    clientReferenceId?: string;
    metadata?: Record<string, string>;
    successUrl: string;
    cancelUrl: string;
  }): DoubleSession {
    const id = this.id('cs');
    const session: DoubleSession = {
      id,
      object: 'checkout.session',
      mode: 'payment',
      status: 'open',
      payment_status: 'unpaid',
      amount_total: opts.amount,
      currency: opts.currency,
      client_reference_id: opts.clientReferenceId ?? null,
      metadata: opts.metadata ?? {},
      payment_intent: null,
      success_url: opts.successUrl,
      cancel_url: opts.cancelUrl,
      url: `${this.baseUrl}/pay/${id}`,
      livemode: false,
      created: Math.floor(Date.now() / 1000),
    };
    this.sessions.set(id, session);
    return session;
  }

  expire(sessionId: string): StripeEvent {
    const s = this.sessions.get(sessionId)!;
    s.status = 'expired';
    return this.event('checkout.session.expired', { ...s });
  }

  event(type: string, object: unknown): StripeEvent {
    const id = this.id('evt');
    const payload = JSON.stringify(
      {
        id,
        object: 'event',
        api_version: '2025-02-24.acacia',
        created: Math.floor(Date.now() / 1000),
        type,
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        data: { object },
      },
      null,
      2,
    );
    return { id, payload };
  }

  /** Delivers an event as Stripe does: POST, JSON, `Stripe-Signature` made by the package's own test helper. */
  static async deliver(
    webhookUrl: string,
    event: StripeEvent,
    secret: string,
    opts: { signature?: string | null } = {},
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': 'Stripe/1.0',
    };
    const signature =
      opts.signature === undefined
        ? signer.webhooks.generateTestHeaderString({ payload: event.payload, secret })
        : opts.signature;
    if (signature !== null) headers['stripe-signature'] = signature;
    const res = await fetch(webhookUrl, { method: 'POST', headers, body: event.payload });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }
}
