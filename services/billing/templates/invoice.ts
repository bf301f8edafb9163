/**
 * The one invoice template: the public receipt page and every PDF (all 17 papers, receipt rolls
 * included) come from this function, so what a subscriber sees online and on paper cannot differ.
 * It is a pure function of a prepared model: no database, no settings lookups, no I/O.
 */
import { dateHtml, escapeHtml, ltr, moneyHtml, ownDirection, safeLogo } from './html';
import { isRtl, labelsFor } from './labels';

export interface DocumentItem {
  description: string;
  qty: string;
  unitPriceMinor: number;
  amountMinor: number;
}

export interface DocumentPayment {
  date: string;
  method: string;
  reference: string | null;
  amountMinor: number;
}

export interface DocumentModel {
  /** `page`: the public HTML page (with its PDF link); `pdf`: input of the renderer. */
  mode: 'page' | 'pdf';
  /** Narrow paper (receipt rolls): one column, small type. */
  narrow: boolean;
  /**
   * Short paper (A5, Statement, C5, DL: `compact`) or small on both sides (A6: `tiny`): smaller
   * type, spacing and QR code, so a one-line invoice with its how-to-pay block fits on one page.
   */
  density?: 'compact' | 'tiny';
  language: string;
  operator: { name: string; address: string; phone: string; email: string; logoUrl: string };
  howToPay: string;
  /** Set when several invoices are merged into one unsaved document (send-combined). */
  combinedNumbers?: string[];
  invoiceNumber: string;
  issueDate: string;
  dueDate: string;
  status: string;
  currency: string;
  subscriber: { name: string; username: string; phone: string; address: string } | null;
  items: DocumentItem[];
  subtotalMinor: number;
  /** Percent as text ("7.5"), or null when merged invoices have different rates. */
  taxRate: string | null;
  taxMinor: number;
  totalMinor: number;
  paidMinor: number;
  balanceMinor: number;
  payments: DocumentPayment[];
  notes: string;
  /** Inline SVG of the QR code of the public URL; null when the document has no public page. */
  qrSvg: string | null;
  /** Link of the public PDF, shown on the page only. */
  pdfUrl: string | null;
  /** The Pay link of the public page (docs/payments.md), or null. */
  payUrl?: string | null;
}

/** The document's one style sheet: a constant, so the receipt's CSP names it by a hash made once. */
export const INVOICE_STYLE = `
* { box-sizing: border-box; }
html, body { margin: 0; padding: 0; }
body { font-family: 'Noto Sans', 'Noto Sans Arabic', 'DejaVu Sans', sans-serif; color: #1d232a; font-size: 10.5pt; line-height: 1.35; }
[dir=rtl] body, body[dir=rtl] { font-family: 'Noto Sans Arabic', 'Noto Naskh Arabic', 'Noto Sans', 'DejaVu Sans', sans-serif; }
.doc { padding: 12mm; }
header { display: flex; justify-content: space-between; gap: 8mm; align-items: flex-start; border-bottom: 2px solid #1d232a; padding-bottom: 4mm; }
header img { max-height: 18mm; max-width: 50mm; display: block; margin-bottom: 2mm; }
.operator .name { font-size: 14pt; font-weight: 700; }
.operator div, .muted { color: #4a5560; }
h1 { margin: 0; font-size: 18pt; text-align: end; }
.meta { display: grid; grid-template-columns: auto auto; gap: 1mm 4mm; margin-top: 2mm; }
.meta dt { color: #4a5560; }
.meta dd { margin: 0; text-align: end; font-weight: 600; }
.parties { display: flex; justify-content: space-between; gap: 8mm; margin: 5mm 0; }
.label { font-size: 8.5pt; text-transform: uppercase; letter-spacing: .04em; color: #4a5560; margin-bottom: 1mm; }
table { width: 100%; border-collapse: collapse; }
th, td { padding: 1.6mm 1.5mm; text-align: start; vertical-align: top; }
thead th { border-bottom: 1px solid #1d232a; font-size: 9pt; }
tbody tr td { border-bottom: 1px solid #d9dee3; }
.num { text-align: end; white-space: nowrap; }
.date { white-space: nowrap; }
.totals { margin-top: 4mm; margin-inline-start: auto; width: 70mm; max-width: 100%; }
.totals td { border: 0; padding: 1mm 1.5mm; }
.totals .grand td { border-top: 1px solid #1d232a; font-weight: 700; }
.totals .due td { font-weight: 700; font-size: 12pt; }
section { margin-top: 5mm; break-inside: avoid; }
.status { display: inline-block; padding: .5mm 2mm; border: 1px solid currentColor; border-radius: 2mm; }
.status-paid { color: #18794e; } .status-overdue, .status-void { color: #b42318; }
.footer { display: flex; gap: 6mm; align-items: center; justify-content: space-between; margin-top: 6mm; break-inside: avoid; }
.qr svg { width: 32mm; height: 32mm; display: block; }
.howtopay { flex: 1; }
.download.pay { background: #0a7d3b; margin-inline-end: 3mm; }
.download { display: inline-block; margin-top: 4mm; padding: 2mm 4mm; background: #1d232a; color: #fff; text-decoration: none; border-radius: 1.5mm; }
body.compact { font-size: 8.5pt; line-height: 1.3; }
.compact .doc { padding: 7mm; }
.compact header { gap: 5mm; padding-bottom: 2.5mm; }
.compact header img { max-height: 12mm; max-width: 40mm; }
.compact .operator .name { font-size: 11pt; }
.compact h1 { font-size: 13pt; }
.compact .parties { margin: 3mm 0; }
.compact .label { font-size: 7pt; }
.compact th, .compact td { padding: 1mm; }
.compact thead th { font-size: 7.5pt; }
.compact section { margin-top: 3mm; }
.compact .totals { margin-top: 2.5mm; width: 60mm; }
.compact .totals td { padding: .5mm 1mm; }
.compact .totals .due td { font-size: 9.5pt; }
.compact .footer { margin-top: 3mm; gap: 4mm; }
.compact .qr svg { width: 24mm; height: 24mm; }
.compact .qr .muted { font-size: 6.5pt; max-width: 24mm; }
body.tiny { font-size: 7pt; line-height: 1.25; }
.tiny .doc { padding: 4mm; }
.tiny header { gap: 3mm; padding-bottom: 1.5mm; }
.tiny header img { max-height: 8mm; max-width: 30mm; margin-bottom: 1mm; }
.tiny .operator .name { font-size: 9pt; }
.tiny h1 { font-size: 10.5pt; }
.tiny .meta { gap: .3mm 2mm; margin-top: 1mm; }
.tiny .parties { margin: 2mm 0; gap: 4mm; }
.tiny .label { font-size: 6pt; margin-bottom: .5mm; }
.tiny th, .tiny td { padding: .6mm .8mm; }
.tiny thead th { font-size: 6.5pt; }
.tiny section { margin-top: 2mm; }
.tiny .totals { margin-top: 1.5mm; width: 50mm; }
.tiny .totals td { padding: .3mm .8mm; }
.tiny .totals .due td { font-size: 8pt; }
.tiny .footer { margin-top: 2mm; gap: 3mm; }
.tiny .qr svg { width: 20mm; height: 20mm; }
.tiny .qr .muted { font-size: 5.5pt; max-width: 20mm; }
body.narrow { font-size: 8pt; }
.narrow .doc { padding: 3mm; }
.narrow header, .narrow .parties, .narrow .footer { display: block; }
.narrow h1 { text-align: start; font-size: 12pt; margin-top: 2mm; }
.narrow .operator .name { font-size: 10pt; }
.narrow .totals { width: 100%; }
.narrow .qr svg { width: 30mm; height: 30mm; margin: 3mm auto 0; }
.narrow th, .narrow td { padding: 1mm .5mm; }
@media screen { body { background: #eef1f4; } .doc { max-width: 210mm; margin: 6mm auto; background: #fff; box-shadow: 0 1px 4px rgba(0,0,0,.15); } }
@media screen and (max-width: 600px) { .doc { margin: 0; padding: 5mm; } header, .parties, .footer { display: block; } h1 { text-align: start; } }
`;

export function renderInvoiceHtml(m: DocumentModel): string {
  const t = labelsFor(m.language);
  const dir = isRtl(m.language) ? 'rtl' : 'ltr';
  const money = (minor: number) => moneyHtml(minor, m.currency);
  const day = (value: string) => dateHtml(value, m.language);
  const logo = safeLogo(m.operator.logoUrl);
  const title = m.combinedNumbers ? t.statement : t.invoice;
  const statusText = t.statuses[m.status] ?? m.status;

  const operatorLines = [m.operator.address, m.operator.phone, m.operator.email]
    .filter(Boolean)
    .map((line) => `<div>${ownDirection(line)}</div>`)
    .join('');
  const subscriber = m.subscriber
    ? [
        `<div><strong>${ownDirection(m.subscriber.name || m.subscriber.username)}</strong></div>`,
        m.subscriber.name ? `<div>${ltr(m.subscriber.username)}</div>` : '',
        m.subscriber.phone ? `<div>${ltr(m.subscriber.phone)}</div>` : '',
        m.subscriber.address ? `<div>${ownDirection(m.subscriber.address)}</div>` : '',
      ].join('')
    : '';

  const rows = m.items
    .map(
      (it) =>
        `<tr><td>${ownDirection(it.description)}</td><td class="num">${ltr(it.qty)}</td>` +
        `<td class="num">${money(it.unitPriceMinor)}</td><td class="num">${money(it.amountMinor)}</td></tr>`,
    )
    .join('');
  const payments = m.payments.length
    ? `<section><div class="label">${t.payments}</div><table><thead><tr><th>${t.date}</th><th>${t.method}</th><th>${t.reference}</th><th class="num">${t.amount}</th></tr></thead><tbody>` +
      m.payments
        .map(
          (p) =>
            `<tr><td>${day(p.date)}</td><td>${escapeHtml(t.methods[p.method] ?? p.method)}</td><td>${ltr(p.reference ?? '')}</td><td class="num">${money(p.amountMinor)}</td></tr>`,
        )
        .join('') +
      '</tbody></table></section>'
    : '';
  const taxLabel = m.taxRate === null ? t.tax : `${t.tax} (${ltr(`${m.taxRate}%`)})`;

  return `<!doctype html>
<html lang="${escapeHtml(m.language)}" dir="${dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(`${title} ${m.invoiceNumber} - ${m.operator.name}`)}</title>
<style>${INVOICE_STYLE}</style>
</head>
<body class="${m.narrow ? 'narrow' : (m.density ?? '')}" dir="${dir}">
<main class="doc">
<header>
  <div class="operator">
    ${logo ? `<img src="${escapeHtml(logo)}" alt="">` : ''}
    <div class="name">${ownDirection(m.operator.name)}</div>
    ${operatorLines}
  </div>
  <div>
    <h1>${title}</h1>
    <dl class="meta">
      <dt>${t.number}</dt><dd class="invoice-number">${ltr(m.invoiceNumber)}</dd>
      <dt>${t.issueDate}</dt><dd>${day(m.issueDate)}</dd>
      <dt>${t.dueDate}</dt><dd>${day(m.dueDate)}</dd>
      <dt>${t.status}</dt><dd><span class="status status-${escapeHtml(m.status)}">${escapeHtml(statusText)}</span></dd>
    </dl>
  </div>
</header>
<div class="parties">
  <div><div class="label">${t.billTo}</div>${subscriber}</div>
  ${m.combinedNumbers ? `<div><div class="label">${t.includes}</div>${m.combinedNumbers.map((n) => `<div>${ltr(n)}</div>`).join('')}</div>` : ''}
</div>
<table class="items">
  <thead><tr><th>${t.description}</th><th class="num">${t.qty}</th><th class="num">${t.unitPrice}</th><th class="num">${t.amount}</th></tr></thead>
  <tbody>${rows}</tbody>
</table>
<table class="totals">
  <tr><td>${t.subtotal}</td><td class="num">${money(m.subtotalMinor)}</td></tr>
  <tr><td>${taxLabel}</td><td class="num">${money(m.taxMinor)}</td></tr>
  <tr class="grand"><td>${t.total}</td><td class="num">${money(m.totalMinor)}</td></tr>
  <tr><td>${t.paid}</td><td class="num">${money(m.paidMinor)}</td></tr>
  <tr class="due"><td>${t.balance}</td><td class="num">${money(m.balanceMinor)}</td></tr>
</table>
${payments}
${m.notes ? `<section><div class="label">${t.notes}</div><div>${ownDirection(m.notes)}</div></section>` : ''}
<div class="footer">
  ${m.howToPay ? `<div class="howtopay"><div class="label">${t.howToPay}</div><div>${ownDirection(m.howToPay)}</div></div>` : '<div></div>'}
  ${m.qrSvg ? `<div class="qr" title="${escapeHtml(t.scanToView)}">${m.qrSvg}<div class="muted">${escapeHtml(t.scanToView)}</div></div>` : ''}
</div>
${m.mode === 'page' && m.payUrl ? `<a class="download pay" id="pay-link" href="${escapeHtml(m.payUrl)}">${t.payOnline}</a>` : ''}
${m.mode === 'page' && m.pdfUrl ? `<a class="download" id="pdf-link" href="${escapeHtml(m.pdfUrl)}">${t.downloadPdf}</a>` : ''}
</main>
</body>
</html>`;
}
