/**
 * From rows and settings to the template's model: one invoice, or several merged in memory
 * (send-combined). Money stays in minor units until the template formats it for the currency.
 */
import QRCode from 'qrcode';
import { PAPER_SIZES, type PaperSize } from '../../shared/paper';
import type { Settings } from '../../shared/settings';
import type { DocumentSubscriber, InvoiceDocument } from './documents-data';
import type { DocumentModel } from './templates/invoice';

/** Papers narrower than this are laid out as a single-column receipt. */
const NARROW_BELOW_MM = 100;
/** Papers shorter than this set their invoice compact (A5, Statement, C5, DL, A6). */
const COMPACT_BELOW_MM = 240;
/** Compact papers narrower than this set it smaller still (A6, DL). */
const TINY_BELOW_MM = 120;

/** How dense a paper's layout is: every one fits a one-line invoice on one page (issue 39). */
export function densityOf(paper: PaperSize): DocumentModel['density'] {
  const { width, height } = PAPER_SIZES[paper];
  if (width < NARROW_BELOW_MM || height === null || height >= COMPACT_BELOW_MM) return undefined;
  return width < TINY_BELOW_MM ? 'tiny' : 'compact';
}

export type BrandingSettings = Pick<
  Settings,
  | 'language'
  | 'operator_name'
  | 'operator_address'
  | 'operator_phone'
  | 'operator_email'
  | 'operator_logo_url'
  | 'how_to_pay'
>;

export async function qrSvg(url: string): Promise<string> {
  // Margin 4 is the quiet zone the QR standard asks for; level M survives a creased printout.
  return QRCode.toString(url, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 });
}

function baseModel(s: BrandingSettings, mode: DocumentModel['mode'], paper: PaperSize) {
  return {
    mode,
    narrow: PAPER_SIZES[paper].width < NARROW_BELOW_MM,
    density: densityOf(paper),
    language: s.language,
    operator: {
      name: s.operator_name,
      address: s.operator_address,
      phone: s.operator_phone,
      email: s.operator_email,
      logoUrl: s.operator_logo_url,
    },
    howToPay: s.how_to_pay,
  };
}

function subscriberOf(sub: DocumentSubscriber | null): DocumentModel['subscriber'] {
  if (!sub) return null;
  return { name: sub.fullName ?? '', username: sub.username, phone: sub.phone ?? '', address: sub.address ?? '' };
}

function itemsOf(doc: InvoiceDocument, prefix: string): DocumentModel['items'] {
  return doc.items.map((it) => ({
    description: prefix + it.description,
    qty: String(Number(it.qty)),
    unitPriceMinor: it.unitPrice,
    amountMinor: it.amount,
  }));
}

function paymentsOf(doc: InvoiceDocument): DocumentModel['payments'] {
  return doc.payments.map((p) => ({
    date: p.paidAt.toISOString().slice(0, 10),
    method: p.method,
    reference: p.reference,
    amountMinor: p.amount,
  }));
}

export interface SingleOptions {
  mode: DocumentModel['mode'];
  paper: PaperSize;
  /** The invoice's public URL (QR code), or null when it has no public link. */
  publicUrl: string | null;
  pdfUrl: string | null;
  /** The receipt page's Pay link (online payment configured and a balance to pay), else null. */
  payUrl?: string | null;
}

export async function invoiceModel(
  doc: InvoiceDocument,
  sub: DocumentSubscriber | null,
  s: BrandingSettings,
  o: SingleOptions,
): Promise<DocumentModel> {
  const i = doc.invoice;
  return {
    ...baseModel(s, o.mode, o.paper),
    invoiceNumber: i.invoiceNumber,
    issueDate: i.issueDate,
    dueDate: i.dueDate,
    status: i.status,
    currency: i.currency,
    subscriber: subscriberOf(sub),
    items: itemsOf(doc, ''),
    subtotalMinor: i.amount,
    taxRate: String(Number(i.taxRate)),
    taxMinor: i.taxAmount,
    totalMinor: i.total,
    paidMinor: i.paidAmount,
    balanceMinor: i.total - i.paidAmount,
    payments: paymentsOf(doc),
    notes: i.notes ?? '',
    qrSvg: o.publicUrl ? await qrSvg(o.publicUrl) : null,
    pdfUrl: o.pdfUrl,
    payUrl: o.payUrl ?? null,
  };
}

/**
 * Several open invoices as one statement, never stored: items carry their invoice number, totals
 * are sums, the due date is the earliest. No QR code: no public page shows this merge.
 */
export function combinedModel(
  docs: InvoiceDocument[],
  sub: DocumentSubscriber | null,
  s: BrandingSettings,
  paper: PaperSize,
  today: string,
): DocumentModel {
  const sum = (f: (d: InvoiceDocument) => number) => docs.reduce((acc, d) => acc + f(d), 0);
  const rates = new Set(docs.map((d) => String(Number(d.invoice.taxRate))));
  const numbers = docs.map((d) => d.invoice.invoiceNumber);
  const total = sum((d) => d.invoice.total);
  const paid = sum((d) => d.invoice.paidAmount);
  return {
    ...baseModel(s, 'pdf', paper),
    combinedNumbers: numbers,
    invoiceNumber: numbers.length === 1 ? numbers[0] : `${numbers[0]} - ${numbers[numbers.length - 1]}`,
    issueDate: today,
    dueDate: docs.map((d) => d.invoice.dueDate).sort()[0],
    status: paid > 0 ? 'partial' : 'pending',
    currency: docs[0].invoice.currency,
    subscriber: subscriberOf(sub),
    items: docs.flatMap((d) => itemsOf(d, `${d.invoice.invoiceNumber}: `)),
    subtotalMinor: sum((d) => d.invoice.amount),
    taxRate: rates.size === 1 ? [...rates][0] : null,
    taxMinor: sum((d) => d.invoice.taxAmount),
    totalMinor: total,
    paidMinor: paid,
    balanceMinor: total - paid,
    payments: docs.flatMap(paymentsOf),
    notes: docs
      .map((d) => d.invoice.notes)
      .filter(Boolean)
      .join('\n'),
    qrSvg: null,
    pdfUrl: null,
  };
}
