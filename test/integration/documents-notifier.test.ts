/**
 * send-chat and send-combined against local stubs of the WhatsApp Cloud API and the Telegram Bot
 * API: the stubs check each request exactly as the providers document it. Also: retries of
 * transient failures, a provider's rejection quoted back, the delivery log, the configuration and
 * phone errors, and that send-combined changes no stored row.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { asc, eq } from 'drizzle-orm';
import { db } from '../../shared/db/client';
import { deliveries, invoiceItems, invoicePayments, invoices, transactions } from '../../shared/db/schema';
import { saveSettings } from '../../shared/settings';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { pdfText, seedInvoice, seedReseller, seedSubscriber } from './documents-fixtures';

// Short pauses between retries; read by the notifier when the app starts.
process.env.NOTIFIER_RETRY_BASE_MS = '5';

interface FilePart {
  filename: string;
  type: string;
  bytes: Buffer;
}
interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  json?: unknown;
  form?: Record<string, string | FilePart>;
  formOrder?: string[];
}
type Reply = { status: number; body: unknown };

/** A provider stand-in: records each request, multipart parsed by the platform's own parser. */
class Stub {
  received: Received[] = [];
  replies: Array<(r: Received) => Reply> = [];
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const rec: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers };
      const type = req.headers['content-type'] ?? '';
      if (type.startsWith('application/json')) rec.json = JSON.parse(body.toString());
      if (type.startsWith('multipart/form-data')) {
        const form = await new Request('http://stub/', {
          method: 'POST',
          headers: { 'content-type': type },
          body,
        }).formData();
        rec.form = {};
        rec.formOrder = [];
        for (const [name, value] of form.entries()) {
          rec.formOrder.push(name);
          rec.form[name] =
            typeof value === 'string'
              ? value
              : { filename: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) };
        }
      }
      this.received.push(rec);
      const reply = (this.replies.shift() ?? this.fallback)(rec);
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    });
  });
  fallback: (r: Received) => Reply = () => ({ status: 500, body: { error: 'no reply configured' } });

  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  reset(fallback: (r: Received) => Reply, ...replies: Array<(r: Received) => Reply>): void {
    this.received = [];
    this.fallback = fallback;
    this.replies = replies;
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** WhatsApp Cloud API answers, as documented. */
const waOk = (r: Received): Reply =>
  r.path.endsWith('/media')
    ? { status: 200, body: { id: 'media-4711' } }
    : {
        status: 200,
        body: {
          messaging_product: 'whatsapp',
          contacts: [{ input: '9647701234567', wa_id: '9647701234567' }],
          messages: [{ id: 'wamid.HBgM' }],
        },
      };
const waRejected: Reply = {
  status: 400,
  body: {
    error: {
      message: '(#131030) Recipient phone number not in allowed list',
      type: 'OAuthException',
      code: 131030,
      fbtrace_id: 'Az8',
    },
  },
};

let t: TestApp;
let api: ReturnType<typeof client>;
let wa: Stub;
let tg: Stub;
let waBase: string;
let tgBase: string;
let reseller: { id: number; path: string };
let other: { id: number; path: string };
let sub: Awaited<ReturnType<typeof seedSubscriber>>;
let first: Awaited<ReturnType<typeof seedInvoice>>;
let second: Awaited<ReturnType<typeof seedInvoice>>;
let settled: Awaited<ReturnType<typeof seedInvoice>>;

beforeAll(async () => {
  wa = new Stub();
  tg = new Stub();
  waBase = `${await wa.start()}/v21.0`;
  tgBase = await tg.start();
  t = await startTestApp();
  api = client(t.baseUrl);
  reseller = await seedReseller(t, 'East');
  other = await seedReseller(t, 'West');
  sub = await seedSubscriber(t, reseller.id);
  first = await seedInvoice(t, sub, {
    items: [{ description: 'January service', qty: 1, unitPrice: 2000 }],
    taxRate: 0,
  });
  second = await seedInvoice(t, sub, {
    items: [{ description: 'February service', qty: 1, unitPrice: 3000 }],
    taxRate: 0,
    paid: 500,
  });
  settled = await seedInvoice(t, sub, {
    items: [{ description: 'December service', qty: 1, unitPrice: 1000 }],
    taxRate: 0,
    paid: 1000,
  });
});
afterAll(async () => {
  await t.close();
  await Promise.all([wa.stop(), tg.stop()]);
});

async function useWhatsApp(): Promise<void> {
  await saveSettings(db(), {
    messaging_provider: 'whatsapp',
    whatsapp_access_token: 'EAAG-test-token',
    whatsapp_phone_number_id: '1055',
    whatsapp_base_url: waBase,
    // The stubs listen on loopback, which the address policy refuses by default.
    allow_private_targets: true,
    operator_name: 'Skyline',
  });
}

async function deliveryRow(id: number) {
  const [row] = await t.db.select().from(deliveries).where(eq(deliveries.id, id));
  return row;
}

describe('WhatsApp Cloud API', () => {
  beforeAll(useWhatsApp);

  it('uploads the PDF as media, then sends a document message, and logs the delivery', async () => {
    wa.reset(waOk);
    const res = await api.post(
      `/api/invoices/${first.id}/send-chat`,
      { caption: 'Your bill' },
      { token: adminToken() },
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: { delivery_id: expect.any(Number), provider: 'whatsapp', status: 'sent' },
    });

    expect(wa.received).toHaveLength(2);
    const [upload, message] = wa.received;
    const filename = `${first.invoiceNumber}.pdf`;
    expect(upload).toMatchObject({
      method: 'POST',
      path: '/v21.0/1055/media',
      headers: { authorization: 'Bearer EAAG-test-token' },
    });
    expect(upload.formOrder).toEqual(['messaging_product', 'type', 'file']);
    expect(upload.form).toMatchObject({
      messaging_product: 'whatsapp',
      type: 'application/pdf',
      file: { filename, type: 'application/pdf' },
    });
    const pdf = (upload.form!.file as FilePart).bytes;
    expect(await pdfText(pdf)).toContain(first.invoiceNumber);

    expect(message).toMatchObject({
      method: 'POST',
      path: '/v21.0/1055/messages',
      headers: { authorization: 'Bearer EAAG-test-token' },
    });
    expect(message.headers['content-type']).toBe('application/json');
    expect(message.json).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '9647701234567',
      type: 'document',
      document: { id: 'media-4711', filename, caption: 'Your bill' },
    });

    expect(await deliveryRow(res.body.data.delivery_id)).toMatchObject({
      invoiceId: first.id,
      invoiceIds: [first.id],
      subscriberId: sub.id,
      provider: 'whatsapp',
      phone: '9647701234567',
      status: 'sent',
      providerMessageId: 'wamid.HBgM',
      attempts: 1,
      error: null,
      createdBy: 1,
    });
  });

  it('retries a 5xx with backoff and succeeds; every attempt is counted', async () => {
    wa.reset(waOk, () => ({ status: 503, body: { error: { message: 'Service temporarily unavailable', code: 2 } } }));
    const res = await api.post(`/api/invoices/${first.id}/send-chat`, {}, { token: adminToken() });
    expect(res.status).toBe(200);
    expect(wa.received.map((r) => r.path)).toEqual(['/v21.0/1055/media', '/v21.0/1055/media', '/v21.0/1055/messages']);
    expect((wa.received[2].json as { document: { caption: string } }).document.caption).toBe(
      `Skyline: Invoice ${first.invoiceNumber}, Balance due 20.00 USD`,
    );
    expect(await deliveryRow(res.body.data.delivery_id)).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('gives up after the last attempt with 503 and a failed delivery', async () => {
    wa.reset(() => ({ status: 500, body: { error: { message: 'An unexpected error has occurred', code: 1 } } }));
    const res = await api.post(`/api/invoices/${first.id}/send-chat`, {}, { token: adminToken() });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      success: false,
      message: 'whatsapp unavailable after 3 attempts: An unexpected error has occurred',
    });
    expect(wa.received).toHaveLength(3);
    const [row] = await t.db
      .select()
      .from(deliveries)
      .orderBy(asc(deliveries.id))
      .then((rows) => rows.slice(-1));
    expect(row).toMatchObject({ status: 'failed', attempts: 3, error: 'An unexpected error has occurred' });
  });

  it('a rejection is not retried and its message is quoted with 502', async () => {
    wa.reset(
      waOk,
      (r) => waOk(r),
      () => waRejected,
    );
    const res = await api.post(
      `/api/invoices/${first.id}/send-chat`,
      { phone: '+44 7700 900123' },
      { token: adminToken() },
    );
    expect(res.status).toBe(502);
    expect(res.body.message).toBe(
      'whatsapp rejected the message: (#131030) Recipient phone number not in allowed list',
    );
    expect(wa.received).toHaveLength(2);
    expect((wa.received[1].json as { to: string }).to).toBe('447700900123');
    const [row] = await t.db
      .select()
      .from(deliveries)
      .orderBy(asc(deliveries.id))
      .then((rows) => rows.slice(-1));
    expect(row).toMatchObject({
      status: 'failed',
      attempts: 1,
      phone: '447700900123',
      error: '(#131030) Recipient phone number not in allowed list',
    });
  });

  it('400 names phone when the subscriber has none, or when it is not a phone number', async () => {
    const phoneless = await seedSubscriber(t, reseller.id, { phone: null });
    const inv = await seedInvoice(t, phoneless, { items: [{ description: 'x', qty: 1, unitPrice: 100 }] });
    wa.reset(waOk);
    const none = await api.post(`/api/invoices/${inv.id}/send-chat`, {}, { token: adminToken() });
    expect(none.status).toBe(400);
    expect(none.body.message).toBe('phone is required: the subscriber has no phone number');
    const bad = await api.post(
      `/api/invoices/${inv.id}/send-chat`,
      { phone: 'call me maybe' },
      { token: adminToken() },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('phone must be an international phone number for WhatsApp');
    const typed = await api.post(`/api/invoices/${inv.id}/send-chat`, { phone: 12345 }, { token: adminToken() });
    expect(typed.status).toBe(400);
    expect(typed.body.message).toMatch(/^phone /);
    expect(wa.received).toHaveLength(0);
    expect(await t.db.select().from(deliveries).where(eq(deliveries.invoiceId, inv.id))).toEqual([]);
  });

  it('checks role and scope before anything is sent', async () => {
    wa.reset(waOk);
    expect(
      (
        await api.post(
          `/api/invoices/${first.id}/send-chat`,
          {},
          { token: token('reseller', { resellerId: other.id }) },
        )
      ).status,
    ).toBe(403);
    expect(
      (await api.post(`/api/invoices/${first.id}/send-chat`, {}, { token: token('user', { resellerId: reseller.id }) }))
        .status,
    ).toBe(403);
    expect((await api.post('/api/invoices/999999/send-chat', {}, { token: adminToken() })).status).toBe(404);
    expect(wa.received).toHaveLength(0);
  });
});

describe('send-combined', () => {
  beforeAll(useWhatsApp);

  async function snapshot() {
    return {
      invoices: await t.db.select().from(invoices).orderBy(asc(invoices.id)),
      items: await t.db.select().from(invoiceItems).orderBy(asc(invoiceItems.id)),
      payments: await t.db.select().from(invoicePayments).orderBy(asc(invoicePayments.id)),
      transactions: await t.db.select().from(transactions).orderBy(asc(transactions.id)),
    };
  }

  it('sends one PDF merging the open invoices and changes no stored row', async () => {
    wa.reset(waOk);
    const before = await snapshot();
    const res = await api.post(
      `/api/invoices/${first.id}/send-combined`,
      {},
      { token: token('reseller', { resellerId: reseller.id }) },
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ delivery_id: expect.any(Number), provider: 'whatsapp', status: 'sent' });
    expect(await snapshot()).toEqual(before);

    const file = wa.received[0].form!.file as FilePart;
    expect(file.filename).toBe(`statement-${sub.username.replace('@', '_')}.pdf`);
    const text = await pdfText(file.bytes);
    for (const expected of [
      first.invoiceNumber,
      second.invoiceNumber,
      'January service',
      'February service',
      '50.00 USD',
      '5.00 USD',
      '45.00 USD',
    ]) {
      expect(text).toContain(expected);
    }
    expect(text).not.toContain(settled.invoiceNumber);
    expect(await deliveryRow(res.body.data.delivery_id)).toMatchObject({
      invoiceId: first.id,
      invoiceIds: [first.id, second.id],
      status: 'sent',
    });
  });

  it('merges from any invoice of a subscriber who owes; 409 when the subscriber owes nothing', async () => {
    wa.reset(waOk);
    const res = await api.post(`/api/invoices/${settled.id}/send-combined`, {}, { token: adminToken() });
    // The paid invoice's subscriber still has the two open ones: it merges those.
    expect(res.status).toBe(200);
    const clear = await seedSubscriber(t, reseller.id);
    const paid = await seedInvoice(t, clear, {
      items: [{ description: 'y', qty: 1, unitPrice: 100 }],
      taxRate: 0,
      paid: 100,
    });
    const none = await api.post(`/api/invoices/${paid.id}/send-combined`, {}, { token: adminToken() });
    expect(none.status).toBe(409);
    expect(none.body.message).toBe('the subscriber has no open invoice to combine');
  });
});

describe('Telegram Bot API', () => {
  beforeAll(async () => {
    await saveSettings(db(), {
      messaging_provider: 'telegram',
      telegram_bot_token: '123456:ABC-DEF',
      telegram_base_url: tgBase,
      allow_private_targets: true,
    });
  });

  it('sendDocument with chat_id, document and caption', async () => {
    tg.reset(() => ({ status: 200, body: { ok: true, result: { message_id: 42, chat: { id: 555000111 }, date: 1 } } }));
    const res = await api.post(
      `/api/invoices/${second.id}/send-chat`,
      { phone: '555000111', caption: 'Invoice attached' },
      { token: adminToken() },
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ delivery_id: expect.any(Number), provider: 'telegram', status: 'sent' });
    expect(tg.received).toHaveLength(1);
    const [req] = tg.received;
    expect(req).toMatchObject({ method: 'POST', path: '/bot123456:ABC-DEF/sendDocument' });
    expect(req.formOrder).toEqual(['chat_id', 'document', 'caption']);
    expect(req.form).toMatchObject({
      chat_id: '555000111',
      caption: 'Invoice attached',
      document: { filename: `${second.invoiceNumber}.pdf`, type: 'application/pdf' },
    });
    expect(await pdfText((req.form!.document as FilePart).bytes)).toContain(second.invoiceNumber);
    expect(await deliveryRow(res.body.data.delivery_id)).toMatchObject({
      provider: 'telegram',
      phone: '555000111',
      providerMessageId: '42',
      status: 'sent',
    });
  });

  it("quotes Telegram's description when it refuses", async () => {
    tg.reset(() => ({ status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: chat not found' } }));
    const res = await api.post(`/api/invoices/${second.id}/send-chat`, { phone: '777' }, { token: adminToken() });
    expect(res.status).toBe(502);
    expect(res.body.message).toBe('telegram rejected the message: Bad Request: chat not found');
    expect(tg.received).toHaveLength(1);
  });
});

describe('no messaging account', () => {
  it('409 when no provider is chosen or its credentials are missing; nothing is logged', async () => {
    const count = async () => (await t.db.select().from(deliveries)).length;
    const before = await count();
    await saveSettings(db(), { messaging_provider: 'none' });
    const none = await api.post(`/api/invoices/${first.id}/send-chat`, {}, { token: adminToken() });
    expect(none.status).toBe(409);
    expect(none.body.message).toBe('no messaging account configured (messaging_provider is not set)');
    expect((await api.post(`/api/invoices/${first.id}/send-combined`, {}, { token: adminToken() })).status).toBe(409);
    await saveSettings(db(), { messaging_provider: 'whatsapp', whatsapp_access_token: '' });
    const noToken = await api.post(`/api/invoices/${first.id}/send-chat`, {}, { token: adminToken() });
    expect(noToken.status).toBe(409);
    expect(noToken.body.message).toBe(
      'no messaging account configured (whatsapp_access_token and whatsapp_phone_number_id must be set)',
    );
    expect(await count()).toBe(before);
  });
});
