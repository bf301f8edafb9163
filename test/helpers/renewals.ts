/** What the renewal tests read and set around a default tax (docs/billing.md). */
import { and, eq } from 'drizzle-orm';
import { invoices } from '../../shared/db/schema';
import { adminToken, type client, type TestApp } from './app';

/** The subscriber's renewal invoices, oldest first. */
export const renewalInvoices = (t: TestApp, subscriberId: number) =>
  t.db
    .select()
    .from(invoices)
    .where(and(eq(invoices.subscriberId, subscriberId), eq(invoices.kind, 'renewal')))
    .orderBy(invoices.id);

/** Runs `body` with `default_tax_rate` at `rate`, set back to 0 after it whatever happens. */
export async function withDefaultTax(api: ReturnType<typeof client>, rate: number, body: () => Promise<void>) {
  const admin = { token: adminToken() };
  expect((await api.put('/api/settings', { default_tax_rate: rate }, admin)).status).toBe(200);
  try {
    await body();
  } finally {
    await api.put('/api/settings', { default_tax_rate: 0 }, admin);
  }
}
