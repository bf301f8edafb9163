/** The invoice template and its model without a browser: escaping, money by minor units, RTL, merging. */
import { combinedModel, type BrandingSettings } from '../../services/billing/documents-model';
import type { InvoiceDocument } from '../../services/billing/documents-data';
import { renderInvoiceHtml, type DocumentModel } from '../../services/billing/templates/invoice';
import { ChromiumNotFoundError, findChromium } from '../../services/pdf-renderer/chromium';
import { PAPER_NAMES } from '../../shared/paper';

const branding: BrandingSettings = {
  language: 'en',
  operator_name: 'Op <b>',
  operator_address: '',
  operator_phone: '',
  operator_email: '',
  operator_logo_url: '',
  how_to_pay: '',
};

function model(over: Partial<DocumentModel> = {}): DocumentModel {
  return {
    mode: 'pdf',
    narrow: false,
    language: 'en',
    operator: { name: 'Skyline', address: '', phone: '', email: '', logoUrl: '' },
    howToPay: '',
    invoiceNumber: 'INV-2025-000001',
    issueDate: '2025-03-01',
    dueDate: '2025-03-15',
    status: 'pending',
    currency: 'USD',
    subscriber: null,
    items: [{ description: 'Fibre', qty: '1', unitPriceMinor: 1000, amountMinor: 1000 }],
    subtotalMinor: 1000,
    taxRate: '0',
    taxMinor: 0,
    totalMinor: 1000,
    paidMinor: 0,
    balanceMinor: 1000,
    payments: [],
    notes: '',
    qrSvg: null,
    pdfUrl: null,
    ...over,
  };
}

describe('invoice template', () => {
  it('escapes every text it prints', () => {
    const html = renderInvoiceHtml(
      model({
        operator: { name: '<script>alert(1)</script>', address: '', phone: '', email: '', logoUrl: '' },
        items: [{ description: '"><img src=x onerror=alert(1)>', qty: '1', unitPriceMinor: 1, amountMinor: 1 }],
        notes: "it's <b>",
      }),
    );
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('it&#39;s &lt;b&gt;');
  });

  it('drops a logo that is not http(s) or an inline image', () => {
    expect(
      renderInvoiceHtml(
        model({ operator: { name: 'x', address: '', phone: '', email: '', logoUrl: 'javascript:alert(1)' } }),
      ),
    ).not.toContain('javascript:');
    expect(
      renderInvoiceHtml(
        model({ operator: { name: 'x', address: '', phone: '', email: '', logoUrl: 'https://isp.example/logo.png' } }),
      ),
    ).toContain('<img src="https://isp.example/logo.png"');
  });

  it("formats money with the currency's minor units", () => {
    expect(renderInvoiceHtml(model({ currency: 'JPY', totalMinor: 1234567 }))).toContain('1,234,567 JPY');
    expect(renderInvoiceHtml(model({ currency: 'KWD', totalMinor: 1234567 }))).toContain('1,234.567 KWD');
    expect(renderInvoiceHtml(model({ currency: 'USD', totalMinor: 5 }))).toContain('0.05 USD');
  });

  it('lays Arabic out right to left with Arabic labels; unknown languages fall back to English', () => {
    const ar = renderInvoiceHtml(model({ language: 'ar' }));
    expect(ar).toContain('<html lang="ar" dir="rtl">');
    expect(ar).toContain('فاتورة');
    expect(ar).toContain('<bdi dir="ltr">INV-2025-000001</bdi>');
    const fa = renderInvoiceHtml(model({ language: 'fa' }));
    expect(fa).toContain('dir="rtl"');
    expect(fa).toContain('Invoice');
    expect(renderInvoiceHtml(model({ language: 'de' }))).toContain('<html lang="de" dir="ltr">');
  });

  it('shows the PDF link on the page only', () => {
    expect(renderInvoiceHtml(model({ mode: 'page', pdfUrl: '/api/invoices/public/1/pdf?token=a&b' }))).toContain(
      'href="/api/invoices/public/1/pdf?token=a&amp;b"',
    );
    expect(renderInvoiceHtml(model({ mode: 'pdf', pdfUrl: '/x' }))).not.toContain('pdf-link');
  });
});

describe('combined statement', () => {
  const doc = (
    id: number,
    number: string,
    total: number,
    paid: number,
    rate: string,
    due: string,
  ): InvoiceDocument => ({
    invoice: {
      id,
      invoiceNumber: number,
      subscriberId: 1,
      resellerId: 1,
      kind: 'manual',
      amount: total,
      taxRate: rate,
      taxAmount: 0,
      total,
      paidAmount: paid,
      status: paid ? 'partial' : 'pending',
      currency: 'USD',
      issueDate: '2025-01-01',
      dueDate: due,
      paidAt: null,
      notes: null,
      commissionRate: '0',
      commissionAmount: 0,
      consolidatedInto: null,
      publicTokenNonce: null,
      publicTokenHash: null,
      createdBy: null,
      createdAt: new Date(),
      updatedAt: new Date(),
    },
    items: [
      { id, invoiceId: id, position: 0, description: `line ${id}`, qty: '1.000', unitPrice: total, amount: total },
    ],
    payments: [],
  });

  it('sums totals, keeps the earliest due date, prefixes lines with their invoice, has no QR', () => {
    const m = combinedModel(
      [doc(1, 'INV-1', 2000, 0, '5.00', '2025-02-01'), doc(2, 'INV-2', 3000, 500, '10.00', '2025-01-20')],
      null,
      branding,
      'A4',
      '2025-03-01',
    );
    expect(m).toMatchObject({
      combinedNumbers: ['INV-1', 'INV-2'],
      invoiceNumber: 'INV-1 - INV-2',
      totalMinor: 5000,
      paidMinor: 500,
      balanceMinor: 4500,
      dueDate: '2025-01-20',
      issueDate: '2025-03-01',
      taxRate: null,
      status: 'partial',
      qrSvg: null,
    });
    expect(m.items.map((i) => i.description)).toEqual(['INV-1: line 1', 'INV-2: line 2']);
  });
});

describe('paper sizes and Chromium discovery', () => {
  it('has exactly 17 papers, receipt rolls included', () => {
    expect(PAPER_NAMES).toHaveLength(17);
    expect(PAPER_NAMES).toEqual(
      expect.arrayContaining([
        'A3',
        'A4',
        'A5',
        'A6',
        'B4',
        'B5',
        'Letter',
        'Legal',
        'Tabloid',
        'Ledger',
        'Executive',
        'Statement',
        'Folio',
        'C5',
        'Receipt80',
        'Receipt58',
      ]),
    );
  });

  it('prefers CHROMIUM_PATH, then Debian chromium, and names the fix when there is none', () => {
    expect(findChromium({ CHROMIUM_PATH: '/opt/chrome' }, (p) => p === '/opt/chrome')).toBe('/opt/chrome');
    expect(findChromium({}, (p) => p === '/usr/bin/chromium')).toBe('/usr/bin/chromium');
    expect(() => findChromium({ CHROMIUM_PATH: '/nope' }, () => false)).toThrow(/CHROMIUM_PATH=\/nope/);
    const missing = (() => {
      try {
        findChromium({}, () => false);
      } catch (err) {
        return err as Error;
      }
    })();
    expect(missing).toBeInstanceOf(ChromiumNotFoundError);
    expect(missing?.message).toMatch(/apt-get install -y chromium.*CHROMIUM_PATH/);
  });
});
