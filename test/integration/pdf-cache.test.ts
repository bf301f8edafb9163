/**
 * The shared PDF cache (services/billing/pdf-cache.ts, invoice-pdf.ts) through the real gateway,
 * renderer and Chromium: an unchanged invoice is served from the store (the same bytes: a render
 * carries its own creation time), and a payment, an edit, a branding change, a rename or a new
 * public link is never answered with the PDF from before it.
 */
import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import { pdfCache, subscribers } from '../../shared/db/schema';
import { saveSettings } from '../../shared/settings';
import { PgPdfStore } from '../../services/billing/pdf-cache';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { FAKE, suiteTransporter } from '../helpers/transporter';
import { fetchPdf, pdfText, seedInvoice, seedReseller, seedSubscriber } from './documents-fixtures';

// The app joins a transporter so that a gateway-only broker (below) can reach it: PDFs then
// cross the transporter as a stream. CI sets TRANSPORTER to NATS; else Moleculer's Fake one.
const { transporter, label } = suiteTransporter(FAKE);
const namespace = `test-pdf-${crypto.randomBytes(4).toString('hex')}`;

let t: TestApp;
let api: ReturnType<typeof client>;
let invoice: Awaited<ReturnType<typeof seedInvoice>>;
let subscriberId: number;

const pdfUrl = (query = '') => `${t.baseUrl}/api/invoices/${invoice.id}/pdf${query}`;

async function download(query = ''): Promise<Buffer> {
  const res = await fetchPdf(pdfUrl(query), adminToken());
  expect(res.status).toBe(200);
  expect(res.type).toBe('application/pdf');
  return res.body;
}

async function entries(): Promise<{ key: string; paper: string; size: number }[]> {
  return t.db
    .select({ key: pdfCache.key, paper: pdfCache.paper, size: pdfCache.size })
    .from(pdfCache)
    .where(eq(pdfCache.invoiceId, invoice.id));
}

beforeAll(async () => {
  t = await startTestApp({ env: { TRANSPORTER: transporter }, broker: { namespace } });
  api = client(t.baseUrl);
  const reseller = await seedReseller(t, 'North');
  const sub = await seedSubscriber(t, reseller.id);
  subscriberId = sub.id;
  invoice = await seedInvoice(t, sub, {
    items: [{ description: 'Fibre 100 Mbps, March', qty: 1, unitPrice: 25000 }],
    taxRate: 0,
  });
  await saveSettings(t.db, { operator_name: 'Skyline Networks' });
});
afterAll(() => t.close());

describe('PDF cache', () => {
  it('renders once: the second download is the stored bytes, one entry per invoice and paper', async () => {
    const first = await download();
    expect(await entries()).toEqual([expect.objectContaining({ paper: 'A4', size: first.length })]);
    const second = await download();
    expect(second.equals(first)).toBe(true);
    // The public PDF shows the same page: same key, same bytes.
    const rotated = await api.post(`/api/invoices/${invoice.id}/public-token`, {}, { token: adminToken() });
    expect(rotated.status).toBe(200);
    const publicUrl = (rotated.body.data as { public_url: string }).public_url.replace(
      'http://billing.test',
      t.baseUrl,
    );
    const afterRotation = await download();
    // A new link is a new QR code: a new render, and the old entry is gone.
    expect(afterRotation.equals(first)).toBe(false);
    const publicPdf = await fetchPdf(publicUrl.replace('?token=', '/pdf?token='));
    expect(publicPdf.status).toBe(200);
    expect(publicPdf.body.equals(afterRotation)).toBe(true);
    expect(await entries()).toHaveLength(1);
  });

  it('another paper is another entry', async () => {
    const a5 = await download('?paper=A5');
    expect((await download('?paper=A5')).equals(a5)).toBe(true);
    expect((await entries()).map((e) => e.paper).sort()).toEqual(['A4', 'A5']);
  });

  it('a payment is never served the PDF from before it', async () => {
    const before = await download();
    expect(await pdfText(before)).toContain('250.00 USD');
    const paid = await api.post(
      `/api/invoices/${invoice.id}/payment`,
      { amount: 40, method: 'cash', reference: 'PAY-1' },
      { token: adminToken() },
    );
    expect(paid.status).toBe(200);
    const after = await download();
    const text = await pdfText(after);
    expect(text).toContain('PAY-1');
    expect(text).toContain('210.00 USD'); // balance
    expect(after.equals(before)).toBe(false);
  });

  it('an edit is never served the PDF from before it', async () => {
    const other = await seedInvoice(
      t,
      { id: subscriberId, resellerId: invoice.resellerId },
      { items: [{ description: 'Old line', qty: 1, unitPrice: 1000 }], taxRate: 0 },
    );
    const url = `${t.baseUrl}/api/invoices/${other.id}/pdf`;
    const before = (await fetchPdf(url, adminToken())).body;
    expect(await pdfText(before)).toContain('Old line');
    const edited = await api.put(
      `/api/invoices/${other.id}`,
      { items: [{ description: 'New line', qty: 2, unit_price: 7.5 }] },
      { token: adminToken() },
    );
    expect(edited.status).toBe(200);
    const text = await pdfText((await fetchPdf(url, adminToken())).body);
    expect(text).toContain('New line');
    expect(text).not.toContain('Old line');
    expect(text).toContain('15.00 USD');
  });

  it('a branding change or a subscriber rename is never served the PDF from before it', async () => {
    expect(await pdfText(await download())).toContain('Skyline Networks');
    await saveSettings(t.db, { operator_name: 'Aurora Fibre', how_to_pay: 'Pay at Aurora shops' });
    const rebranded = await pdfText(await download());
    expect(rebranded).toContain('Aurora Fibre');
    expect(rebranded).toContain('Pay at Aurora shops');
    expect(rebranded).not.toContain('Skyline Networks');
    await t.db.update(subscribers).set({ fullName: 'Layla Haddad-Karim' }).where(eq(subscribers.id, subscriberId));
    expect(await pdfText(await download())).toContain('Layla Haddad-Karim');
  });

  it('a deleted invoice takes its entries with it; a missing one is 404, not a cached PDF', async () => {
    const other = await seedInvoice(
      t,
      { id: subscriberId, resellerId: invoice.resellerId },
      { items: [{ description: 'Short lived', qty: 1, unitPrice: 500 }], taxRate: 0 },
    );
    expect((await fetchPdf(`${t.baseUrl}/api/invoices/${other.id}/pdf`, adminToken())).status).toBe(200);
    const removed = await api.del(`/api/invoices/${other.id}`, { token: adminToken() });
    expect(removed.status).toBe(200);
    expect(await t.db.select().from(pdfCache).where(eq(pdfCache.invoiceId, other.id))).toEqual([]);
    expect((await fetchPdf(`${t.baseUrl}/api/invoices/${other.id}/pdf`, adminToken())).status).toBe(404);
  });
});

describe(`a gateway on another node, over ${label}`, () => {
  it('receives the cached PDF as a stream through the transporter, the same bytes', async () => {
    const edge = await startTestApp({
      databaseUrl: t.databaseUrl,
      env: { SERVICES: 'gateway', TRANSPORTER: transporter },
      broker: { namespace },
    });
    try {
      await edge.app.broker.waitForServices(['invoice-documents'], 20_000);
      const local = await download();
      const remote = await fetchPdf(`${edge.baseUrl}/api/invoices/${invoice.id}/pdf`, adminToken());
      expect(remote.status).toBe(200);
      expect(remote.type).toBe('application/pdf');
      expect(remote.body.equals(local)).toBe(true);
    } finally {
      await edge.close();
    }
  }, 60_000);
});

describe('PgPdfStore', () => {
  it('evicts least recently used entries down to the size bound', async () => {
    const store = new PgPdfStore(() => t.pool);
    await t.db.delete(pdfCache);
    const put = (key: string, paper: string, size: number) =>
      store.put({ key, invoiceId: invoice.id, paper, pdf: Buffer.alloc(size, 1) });
    await put('k-old', 'A3', 400);
    await put('k-mid', 'B4', 400);
    await put('k-new', 'B5', 400);
    await t.pool.query(
      `update pdf_cache set used_at = now() - (case key when 'k-old' then 3 when 'k-mid' then 2 else 1 end) * interval '1 hour'`,
    );
    expect(await store.evict(900)).toBe(1);
    expect((await t.db.select({ key: pdfCache.key }).from(pdfCache)).map((r) => r.key).sort()).toEqual([
      'k-mid',
      'k-new',
    ]);
    expect((await store.get('k-new'))?.equals(Buffer.alloc(400, 1))).toBe(true);
    expect(await store.get('k-old')).toBeUndefined();
    // A hit refreshes an entry that was not used lately, so it outlives older ones.
    await store.get('k-mid');
    expect(await store.evict(400)).toBe(1);
    expect((await t.db.select({ key: pdfCache.key }).from(pdfCache)).map((r) => r.key)).toEqual(['k-mid']);
  });

  it('a put replaces the entries of the same invoice and paper under other keys', async () => {
    const store = new PgPdfStore(() => t.pool);
    await store.put({ key: 'v1', invoiceId: invoice.id, paper: 'Letter', pdf: Buffer.from('one') });
    await store.put({ key: 'v2', invoiceId: invoice.id, paper: 'Letter', pdf: Buffer.from('two') });
    expect(await store.get('v1')).toBeUndefined();
    expect((await store.get('v2'))?.toString()).toBe('two');
  });
});
