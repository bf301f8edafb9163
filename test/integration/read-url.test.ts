/**
 * DATABASE_READ_URL (docs/operations.md): reports, CSV exports and the ledger list read from the read
 * URL; writes, and the reads that must see them, from DATABASE_URL. Two databases stand for the
 * primary and its replica: a row present in only one of them tells where each read went.
 */
import { Pool } from 'pg';
import { adminToken, client, createTestDatabase, startTestApp, type TestApp } from '../helpers/app';
import { seedBillingSubscriber } from './billing-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
let replica: Pool;
const admin = adminToken();

beforeAll(async () => {
  const readUrl = await createTestDatabase();
  t = await startTestApp({ env: { DATABASE_READ_URL: readUrl } });
  api = client(t.baseUrl);
  replica = new Pool({ connectionString: readUrl, max: 2 });
});

afterAll(async () => {
  await replica?.end();
  await t?.close();
});

test('reports, exports and the ledger list read DATABASE_READ_URL; the rest DATABASE_URL', async () => {
  const subscriberId = await seedBillingSubscriber(t.db, 'North');
  const inv = await api.post(
    '/api/invoices',
    { subscriber_id: subscriberId, items: [{ description: 'Router', qty: 1, unit_price: 100 }], tax_rate: 0 },
    { token: admin },
  );
  expect(inv.status).toBe(201);
  const invoiceId = inv.body.data.id as number;
  const paid = await api.post(`/api/invoices/${invoiceId}/payment`, { amount: 40, method: 'cash' }, { token: admin });
  expect(paid.status).toBe(200);

  // The write went to DATABASE_URL only.
  const onPrimary = await t.pool.query(`select username from transactions where type = 'invoice_payment'`);
  expect(onPrimary.rows).toHaveLength(1);
  const onReplica = await replica.query(`select count(*)::int as n from transactions`);
  expect(onReplica.rows[0].n).toBe(0);

  // A record read back after a write is the primary's.
  const back = await api.get(`/api/invoices/${invoiceId}`, { token: admin });
  expect(back.status).toBe(200);
  expect(back.body.data.paid_amount).toBe(40);

  // The lag-tolerant reads see the read database, which has neither the payment nor the open invoice.
  const list = await api.get('/api/transactions', { token: admin });
  expect(list.status).toBe(200);
  expect(list.body.data).toEqual([]);
  expect(list.body.pagination.total).toBe(0);
  const aging = await api.get('/api/reports/aging?by=subscriber', { token: admin });
  expect(aging.status).toBe(200);
  expect(aging.body.data).toEqual([]);

  // A row only the read database holds is what they answer.
  await replica.query(
    `insert into transactions (type, amount, currency, method, notes) values ('invoice_payment', 7700, 'USD', 'cash', 'only on the replica')`,
  );
  const again = await api.get('/api/transactions', { token: admin });
  expect(again.status).toBe(200);
  expect(again.body.data.map((r: { notes: string }) => r.notes)).toEqual(['only on the replica']);
  const csv = await api.get('/api/transactions?format=csv', { token: admin });
  expect(csv.status).toBe(200);
  const lines = csv.text.trim().split('\n');
  expect(lines).toHaveLength(2); // the header and the replica's row
  expect(lines[1]).toContain('only on the replica');
});
