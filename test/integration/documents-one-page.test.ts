/**
 * Issue 39: a one-line invoice fits on one page of every paper, "How to pay" block and QR code
 * included, in English and in Arabic (whose font is taller). Rendered through the real route, the
 * real template and Chromium; poppler's pdfinfo counts the pages.
 */
import { saveSettings } from '../../shared/settings';
import { db } from '../../shared/db/client';
import { PAPER_NAMES } from '../../shared/paper';
import { adminToken, http, startTestApp, type TestApp } from '../helpers/app';
import { decodeQr, fetchPdf, pdfInfo, pdfText, seedInvoice, seedReseller, seedSubscriber } from './documents-fixtures';

// The first render starts Chromium: room beyond jest's default on a busy machine.
jest.setTimeout(120_000);

let t: TestApp;
let invoiceId: number;

/** What an operator's settings look like on a real installation: every branding line filled. */
const BRANDING = {
  operator_name: 'Skyline Networks',
  operator_address: '14 Tigris Street, Karrada\nBaghdad, Iraq',
  operator_phone: '+964 770 000 1111',
  operator_email: 'billing@skyline.example',
  operator_logo_url:
    'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  how_to_pay:
    'Pay at any Skyline agent, by ZainCash to 0770 000 1111, or by bank transfer to IBAN IQ00 RAFI 0000 1234 5678.\n' +
    'Write your username as the payment reference. Agent code SKY77.',
};

beforeAll(async () => {
  t = await startTestApp();
  const reseller = await seedReseller(t, 'North');
  const sub = await seedSubscriber(t, reseller.id);
  const invoice = await seedInvoice(t, sub, {
    items: [{ description: 'Fibre 100 Mbps, March', qty: 1, unitPrice: 25000 }],
    taxRate: 10,
    notes: 'Thank you for choosing us',
    paid: 10000,
  });
  invoiceId = invoice.id;
  // A public link, so the QR code is printed as on every invoice sent to a subscriber.
  const rotated = await http(t.baseUrl, 'POST', `/api/invoices/${invoiceId}/public-token`, {
    token: adminToken(),
    body: {},
  });
  expect(rotated.status).toBe(200);
});
afterAll(() => t.close());

describe.each(['en', 'ar'])('one-line invoice in %s', (language) => {
  beforeAll(() => saveSettings(db(), { ...BRANDING, language }));

  it.each(PAPER_NAMES)('%s: one page, how-to-pay block and QR code on it', async (paper) => {
    const res = await fetchPdf(`${t.baseUrl}/api/invoices/${invoiceId}/pdf?paper=${paper}`, adminToken());
    expect(res.status).toBe(200);
    expect((await pdfInfo(res.body)).pages).toBe(1);
    expect(await pdfText(res.body)).toContain('SKY77');
    // The QR code is read off the first (and only) page.
    expect(await decodeQr(res.body)).toMatch(/^http:\/\/billing\.test\/api\/invoices\/public\//);
  });
});
