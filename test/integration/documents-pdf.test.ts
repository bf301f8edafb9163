/**
 * Invoice PDFs and public pages through the real gateway, the real renderer and Debian's Chromium:
 * the PDF's text (pdftotext), page size (pdfinfo) for all 17 papers, its QR code (pdftoppm + jsQR),
 * the public page in a real browser, tokens, scope and paper validation.
 */
import { eq } from 'drizzle-orm';
import { chromium, type Browser } from 'playwright-core';
import { invoices } from '../../shared/db/schema';
import { PAPER_NAMES, PAPER_SIZES } from '../../shared/paper';
import { publicUrl } from '../../shared/public-links';
import { saveSettings } from '../../shared/settings';
import { db } from '../../shared/db/client';
import { findChromium } from '../../services/pdf-renderer/chromium';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import {
  decodeQr,
  fetchPdf,
  mmToPt,
  pdfInfo,
  pdfText,
  seedInvoice,
  seedReseller,
  seedSubscriber,
} from './documents-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
let invoice: Awaited<ReturnType<typeof seedInvoice>>;
let resellerA: { id: number; path: string };
let resellerB: { id: number; path: string };

/** The public URL as the QR code carries it, rebased on the test server (PUBLIC_BASE_URL is fictitious). */
function local(url: string): string {
  return url.replace('http://billing.test', t.baseUrl);
}

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  resellerA = await seedReseller(t, 'North');
  resellerB = await seedReseller(t, 'South');
  const sub = await seedSubscriber(t, resellerA.id);
  invoice = await seedInvoice(t, sub, {
    items: [
      { description: 'Fibre 100 Mbps, March', qty: 1, unitPrice: 25000 },
      { description: 'Router rental', qty: 2, unitPrice: 1250 },
    ],
    taxRate: 10,
    notes: 'Thank you for choosing us',
    paid: 10000,
  });
  await saveSettings(db(), {
    operator_name: 'Skyline Networks',
    how_to_pay: 'Pay at any Skyline agent or bank transfer IBAN XX00 1234',
  });
});
afterAll(() => t.close());

describe('GET /api/invoices/:id/pdf', () => {
  it('streams a PDF whose text holds the number, items, totals, payments, notes and how-to-pay', async () => {
    const res = await fetchPdf(`${t.baseUrl}/api/invoices/${invoice.id}/pdf`, adminToken());
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/pdf');
    expect(res.body.subarray(0, 5).toString()).toBe('%PDF-');
    const text = await pdfText(res.body);
    for (const expected of [
      invoice.invoiceNumber,
      'Skyline Networks',
      'Layla Haddad',
      'Fibre 100 Mbps, March',
      'Router rental',
      '275.00 USD', // subtotal: 250.00 + 2 x 12.50
      '27.50 USD', // tax 10 %
      '302.50 USD', // total
      '100.00 USD', // paid
      '202.50 USD', // balance
      'R-77',
      'Thank you for choosing us',
      'IBAN XX00 1234',
      'Partially paid',
      'Mar 15, 2025', // the due date in the one date format (shared/format.ts)
    ]) {
      expect(text).toContain(expected);
    }
  });

  it('prints a QR code that decodes to the invoice public URL', async () => {
    const res = await fetchPdf(`${t.baseUrl}/api/invoices/${invoice.id}/pdf`, adminToken());
    const [row] = await t.db.select().from(invoices).where(eq(invoices.id, invoice.id));
    expect(await decodeQr(res.body)).toBe(publicUrl(invoice.id, row.publicTokenNonce!));
  });

  it.each(PAPER_NAMES)('paper %s gives its page size', async (paper) => {
    const res = await fetchPdf(`${t.baseUrl}/api/invoices/${invoice.id}/pdf?paper=${paper}`, adminToken());
    expect(res.status).toBe(200);
    const info = await pdfInfo(res.body);
    const size = PAPER_SIZES[paper];
    // Chromium rounds page sizes to whole CSS pixels: 0.75 pt.
    expect(Math.abs(info.widthPt - mmToPt(size.width))).toBeLessThanOrEqual(1);
    if (size.height === null) {
      // Receipt rolls: one page as long as the content.
      expect(info.pages).toBe(1);
      expect(info.heightPt).toBeGreaterThan(mmToPt(60));
    } else {
      expect(Math.abs(info.heightPt - mmToPt(size.height))).toBeLessThanOrEqual(1);
    }
    if (paper === 'Receipt58')
      expect(await decodeQr(res.body)).toMatch(/^http:\/\/billing\.test\/api\/invoices\/public\//);
  });

  it('uses default_paper_size when no paper is named', async () => {
    await saveSettings(db(), { default_paper_size: 'Letter' });
    try {
      const info = await pdfInfo((await fetchPdf(`${t.baseUrl}/api/invoices/${invoice.id}/pdf`, adminToken())).body);
      expect(Math.round(info.widthPt)).toBe(612);
      expect(Math.round(info.heightPt)).toBe(792);
    } finally {
      await saveSettings(db(), { default_paper_size: 'A4' });
    }
  });

  it('400 names the paper field for an unknown paper', async () => {
    const res = await api.get(`/api/invoices/${invoice.id}/pdf?paper=A9`, { token: adminToken() });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^paper must be one of A3, A4/);
  });

  it('401 without a token, 404 for an unknown invoice, 403 outside the caller tree', async () => {
    expect((await api.get(`/api/invoices/${invoice.id}/pdf`)).status).toBe(401);
    const missing = await api.get('/api/invoices/999999/pdf', { token: adminToken() });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('invoice not found');
    expect(
      (await api.get(`/api/invoices/${invoice.id}/pdf`, { token: token('reseller', { resellerId: resellerB.id }) }))
        .status,
    ).toBe(403);
    const own = await fetchPdf(
      `${t.baseUrl}/api/invoices/${invoice.id}/pdf`,
      token('reseller', { resellerId: resellerA.id }),
    );
    expect(own.status).toBe(200);
  });

  it('lays Arabic out right to left with an Arabic font embedded', async () => {
    await saveSettings(db(), { language: 'ar' });
    try {
      const res = await fetchPdf(`${t.baseUrl}/api/invoices/${invoice.id}/pdf`, adminToken());
      const info = await pdfInfo(res.body);
      expect(info.fonts).toMatch(/NotoSansArabic|NotoNaskhArabic/);
      const text = await pdfText(res.body);
      expect(text).toContain(invoice.invoiceNumber);
      expect(text).toContain('302.50 USD');
      const page = await api.get(`/api/invoices/public/${invoice.id}?token=${tokenOf(await currentPublicUrl())}`);
      expect(page.text).toContain('<html lang="ar" dir="rtl">');
      expect(page.text).toContain('فاتورة');
    } finally {
      await saveSettings(db(), { language: 'en' });
    }
  });
});

async function currentPublicUrl(): Promise<string> {
  const [row] = await t.db.select().from(invoices).where(eq(invoices.id, invoice.id));
  return publicUrl(invoice.id, row.publicTokenNonce!);
}

function tokenOf(url: string): string {
  return new URL(url).searchParams.get('token')!;
}

describe('public receipt page and PDF', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: findChromium(),
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
  });
  afterAll(() => browser.close());

  it('opens in a real browser, shows the invoice, and its PDF link serves the PDF', async () => {
    const page = await browser.newPage();
    try {
      const response = await page.goto(local(await currentPublicUrl()));
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-type']).toBe('text/html; charset=utf-8');
      expect(response?.headers()['referrer-policy']).toBe('no-referrer');
      await expect(page.locator('.invoice-number').innerText()).resolves.toBe(invoice.invoiceNumber);
      // textContent: innerText would show the CSS-uppercased labels.
      const body = (await page.locator('body').textContent()) ?? '';
      expect(body).toContain('Skyline Networks');
      expect(body).toContain('302.50 USD');
      expect(body).toContain('How to pay');
      const href = await page.locator('#pdf-link').getAttribute('href');
      expect(href).toMatch(new RegExp(`^/api/invoices/public/${invoice.id}/pdf\\?token=`));
      const pdf = await page.request.get(new URL(href!, page.url()).toString());
      expect(pdf.status()).toBe(200);
      expect(pdf.headers()['content-type']).toBe('application/pdf');
      expect(await pdfText(await pdf.body())).toContain(invoice.invoiceNumber);
    } finally {
      await page.close();
    }
  });

  it('404 without a token, with a wrong one, or for an unknown id; the same answer each time', async () => {
    const good = tokenOf(await currentPublicUrl());
    const wrong = good.slice(0, -2) + (good.endsWith('AA') ? 'BB' : 'AA');
    for (const path of [
      `/api/invoices/public/${invoice.id}`,
      `/api/invoices/public/${invoice.id}?token=`,
      `/api/invoices/public/${invoice.id}?token=${wrong}`,
      `/api/invoices/public/${invoice.id}/pdf`,
      `/api/invoices/public/${invoice.id}/pdf?token=${wrong}`,
      `/api/invoices/public/999999?token=${good}`,
    ]) {
      const res = await api.get(path);
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 404,
        body: { success: false, message: 'invoice not found' },
      });
    }
  });

  it('public PDF honours paper and refuses an unknown one', async () => {
    const url = local(await currentPublicUrl()).replace('?token=', '/pdf?token=');
    const a5 = await fetchPdf(`${url}&paper=A5`);
    expect(a5.status).toBe(200);
    expect(Math.round((await pdfInfo(a5.body)).widthPt)).toBe(Math.round(mmToPt(148)));
    expect((await fetchPdf(`${url}&paper=Napkin`)).status).toBe(400);
  });

  it('rotating the token kills the old link and the new one works', async () => {
    const before = await currentPublicUrl();
    expect(
      (
        await api.post(
          `/api/invoices/${invoice.id}/public-token`,
          {},
          { token: token('reseller', { resellerId: resellerB.id }) },
        )
      ).status,
    ).toBe(403);
    expect(
      (
        await api.post(
          `/api/invoices/${invoice.id}/public-token`,
          {},
          { token: token('user', { resellerId: resellerA.id }) },
        )
      ).status,
    ).toBe(403);
    const res = await api.post(`/api/invoices/${invoice.id}/public-token`, {}, { token: adminToken() });
    expect(res.status).toBe(200);
    const after = res.body.data.public_url as string;
    expect(after).not.toBe(before);
    expect(after).toBe(await currentPublicUrl());
    expect((await api.get(new URL(before).pathname + new URL(before).search)).status).toBe(404);
    const fresh = await api.get(new URL(after).pathname + new URL(after).search);
    expect(fresh.status).toBe(200);
    expect(fresh.text).toContain(invoice.invoiceNumber);
  });
});
