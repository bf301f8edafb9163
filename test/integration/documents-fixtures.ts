/**
 * Rows and tools of the document tests: a reseller tree, subscribers, invoices made by the billing
 * unit's own `createInvoice` / `applyPayment` (so numbers and public links are the real ones), and
 * the poppler / QR readers that look inside a PDF.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { applyPayment, createInvoice } from '../../shared/billing';
import type { Tx } from '../../shared/db/client';
import { invoices, resellers, services, subscribers } from '../../shared/db/schema';
import { ensureTokenManager, type TestApp } from '../helpers/app';

const run = promisify(execFile);

export async function seedReseller(t: TestApp, name: string, parentPath = '/') {
  const [row] = await t.db
    .insert(resellers)
    .values({ name, path: '', currency: 'USD', commissionRate: '10' })
    .returning();
  const [withPath] = await t.db
    .update(resellers)
    .set({ path: `${parentPath}${row.id}/` })
    .where(eq(resellers.id, row.id))
    .returning();
  return withPath;
}

let seq = 0;
export async function seedSubscriber(
  t: TestApp,
  resellerId: number,
  opts: { phone?: string | null; fullName?: string } = {},
) {
  const [plan] = await t.db
    .insert(services)
    .values({ name: `plan-${++seq}-${process.pid}`, price: 1000, currency: 'USD', durationDays: 30 })
    .returning();
  const [row] = await t.db
    .insert(subscribers)
    .values({
      username: `doc${seq}@isp`,
      passwordEnc: 'x',
      fullName: opts.fullName ?? 'Layla Haddad',
      phone: opts.phone === undefined ? '+964 770 123 4567' : opts.phone,
      address: '12 Fibre Street',
      serviceId: plan.id,
      resellerId,
      expiryDate: '2099-01-01',
    })
    .returning();
  return row;
}

export interface SeedInvoice {
  items: { description: string; qty: number; unitPrice: number }[];
  taxRate?: number;
  currency?: string;
  notes?: string;
  /** Minor units paid by cash after creation. */
  paid?: number;
}

export async function seedInvoice(t: TestApp, sub: { id: number; resellerId: number }, inv: SeedInvoice) {
  const id = await t.db.transaction(async (tx) => {
    const { invoice } = await createInvoice(tx as unknown as Tx, {
      subscriberId: sub.id,
      resellerId: sub.resellerId,
      items: inv.items,
      taxRate: inv.taxRate ?? 10,
      currency: inv.currency ?? 'USD',
      notes: inv.notes ?? null,
      issueDate: '2025-03-01',
      dueDate: '2025-03-15',
    });
    if (inv.paid)
      await applyPayment(tx as unknown as Tx, {
        invoiceId: invoice.id,
        amount: inv.paid,
        method: 'cash',
        reference: 'R-77',
      });
    return invoice.id;
  });
  const [row] = await t.db.select().from(invoices).where(eq(invoices.id, id));
  return row;
}

async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'doc-test-'));
  try {
    return await fn(dir);
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
}

export function pdfText(pdf: Buffer): Promise<string> {
  return withTempDir(async (dir) => {
    const file = path.join(dir, 'doc.pdf');
    await fs.promises.writeFile(file, pdf);
    return (await run('pdftotext', ['-layout', file, '-'])).stdout;
  });
}

export async function pdfInfo(
  pdf: Buffer,
): Promise<{ pages: number; widthPt: number; heightPt: number; fonts: string }> {
  return withTempDir(async (dir) => {
    const file = path.join(dir, 'doc.pdf');
    await fs.promises.writeFile(file, pdf);
    const info = (await run('pdfinfo', [file])).stdout;
    const size = /Page size:\s+([\d.]+) x ([\d.]+) pts/.exec(info);
    const pages = /Pages:\s+(\d+)/.exec(info);
    const fonts = (await run('pdffonts', [file])).stdout;
    return { pages: Number(pages?.[1]), widthPt: Number(size?.[1]), heightPt: Number(size?.[2]), fonts };
  });
}

/** The first page rasterised by pdftoppm, then searched for a QR code. */
export function decodeQr(pdf: Buffer): Promise<string | null> {
  return withTempDir(async (dir) => {
    const file = path.join(dir, 'doc.pdf');
    await fs.promises.writeFile(file, pdf);
    await run('pdftoppm', ['-png', '-r', '150', '-f', '1', '-l', '1', '-singlefile', file, path.join(dir, 'page')]);
    const png = PNG.sync.read(await fs.promises.readFile(path.join(dir, 'page.png')));
    const code = jsQR(
      new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length),
      png.width,
      png.height,
    );
    return code?.data ?? null;
  });
}

export async function fetchPdf(
  url: string,
  token?: string,
): Promise<{ status: number; type: string | null; body: Buffer; headers: Headers }> {
  await ensureTokenManager(new URL(url).origin, token);
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    body: Buffer.from(await res.arrayBuffer()),
    headers: res.headers,
  };
}

export const mmToPt = (mm: number) => (mm * 72) / 25.4;
