/**
 * The printable card sheet (GET /api/cards/batches/:id/pdf): a grid of cards, `perPage` a page, each
 * with the operator's branding, the serial, the PIN, what it is worth (value or plan) and the QR code
 * of the portal's redeem form. Laid out right-to-left for Arabic and the other RTL languages; serials,
 * PINs and amounts stay left-to-right inside it. The pdf-renderer turns it into PDF with Chromium.
 */
import QRCode from 'qrcode';
import { printedPin } from './pins';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (v: string) => v.replace(/[&<>"']/g, (c) => ESCAPES[c]);
const ltr = (v: string) => `<bdi dir="ltr">${esc(v)}</bdi>`;
const RTL = new Set(['ar', 'fa', 'he', 'ur', 'ps', 'sd', 'yi', 'ku']);

const LABELS = {
  en: {
    card: 'Prepaid card',
    serial: 'Serial',
    pin: 'PIN',
    value: 'Value',
    plan: 'Plan',
    expires: 'Valid until',
    scan: 'Scan to redeem in the portal',
  },
  ar: {
    card: 'بطاقة مسبقة الدفع',
    serial: 'الرقم التسلسلي',
    pin: 'الرقم السري',
    value: 'القيمة',
    plan: 'الباقة',
    expires: 'صالحة حتى',
    scan: 'امسح الرمز لشحن البطاقة في البوابة',
  },
};

export interface SheetModel {
  language: string;
  operatorName: string;
  operatorPhone: string;
  logoUrl: string;
  /** What every card of the batch is worth, as printed: "10.00 USD" or the plan's name. */
  worth: string;
  kind: 'money' | 'plan';
  expiresAt: string | null;
  redeemUrl: string;
  perPage: number;
  cards: { serial: string; pin: string }[];
}

function columnsFor(perPage: number): number {
  return perPage <= 4 ? 1 : perPage <= 12 ? 2 : 3;
}

export async function sheetHtml(m: SheetModel): Promise<string> {
  const l = m.language === 'ar' ? LABELS.ar : LABELS.en;
  const dir = RTL.has(m.language) ? 'rtl' : 'ltr';
  // One image for every card (the same URL): Chromium decodes it once, where an inline SVG per card
  // would be laid out thousands of times in a large sheet.
  const qrSvg = await QRCode.toString(m.redeemUrl, { type: 'svg', errorCorrectionLevel: 'M', margin: 1 });
  const qr = `<img alt="" src="data:image/svg+xml;base64,${Buffer.from(qrSvg).toString('base64')}">`;
  const logo = /^(https?:\/\/|data:image\/(png|jpeg|gif|webp|svg\+xml);base64,)/i.test(m.logoUrl)
    ? `<img class="logo" src="${esc(m.logoUrl)}" alt="">`
    : '';
  const cols = columnsFor(m.perPage);
  // The card's outline (the cutting line) is solid: a dashed rounded border is drawn as a path per
  // dash, which made Chromium's PDF 8 times larger and its rendering 2.5 to 3 times slower.
  const rows = Math.ceil(m.perPage / cols);
  const card = (c: { serial: string; pin: string }) => `
    <div class="card">
      <div class="head">${logo}<div><div class="op">${esc(m.operatorName)}</div><div class="muted">${esc(l.card)}${m.operatorPhone ? ` · ${ltr(m.operatorPhone)}` : ''}</div></div></div>
      <div class="body">
        <dl>
          <dt>${esc(m.kind === 'money' ? l.value : l.plan)}</dt><dd class="worth">${m.kind === 'money' ? ltr(m.worth) : esc(m.worth)}</dd>
          <dt>${esc(l.pin)}</dt><dd class="pin">${ltr(printedPin(c.pin))}</dd>
          <dt>${esc(l.serial)}</dt><dd class="serial">${ltr(c.serial)}</dd>
          ${m.expiresAt ? `<dt>${esc(l.expires)}</dt><dd>${ltr(m.expiresAt)}</dd>` : ''}
        </dl>
        <div class="qr">${qr}<div class="muted small">${esc(l.scan)}</div></div>
      </div>
    </div>`;
  const pages: string[] = [];
  for (let i = 0; i < m.cards.length; i += m.perPage) {
    pages.push(
      `<section class="page">${m.cards
        .slice(i, i + m.perPage)
        .map(card)
        .join('')}</section>`,
    );
  }
  return `<!doctype html><html lang="${esc(m.language)}" dir="${dir}"><head><meta charset="utf-8"><style>
* { box-sizing: border-box; }
html, body { margin: 0; padding: 0; }
body { font-family: 'Noto Sans', 'Noto Sans Arabic', 'DejaVu Sans', sans-serif; color: #1d232a; font-size: 9pt; }
body[dir=rtl], [dir=rtl] body { font-family: 'Noto Sans Arabic', 'Noto Naskh Arabic', 'Noto Sans', 'DejaVu Sans', sans-serif; }
.page { padding: 8mm; display: grid; grid-template-columns: repeat(${cols}, 1fr); grid-template-rows: repeat(${rows}, auto);
  gap: 4mm; page-break-after: always; break-after: page; }
.page:last-child { page-break-after: auto; break-after: auto; }
.card { border: 1px solid #8a949e; border-radius: 2mm; padding: 3mm; break-inside: avoid; }
.head { display: flex; gap: 2mm; align-items: center; border-bottom: 1px solid #ccd; padding-bottom: 1.5mm; margin-bottom: 1.5mm; }
.logo { max-height: 9mm; max-width: 25mm; }
.op { font-weight: 700; font-size: 10pt; }
.muted { color: #4a5560; }
.small { font-size: 6.5pt; }
.body { display: flex; justify-content: space-between; gap: 2mm; }
dl { display: grid; grid-template-columns: auto 1fr; gap: 0.8mm 2mm; margin: 0; }
dt { color: #4a5560; }
dd { margin: 0; font-weight: 600; }
.pin { font-family: 'DejaVu Sans Mono', monospace; font-size: 11pt; letter-spacing: 0.3mm; }
.qr { width: 20mm; text-align: center; }
.qr img { width: 20mm; height: 20mm; display: block; }
</style></head><body dir="${dir}">${pages.join('')}</body></html>`;
}
