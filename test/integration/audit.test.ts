/**
 * The audit trail through HTTP (docs/security.md): settings, managers, API keys, a subscriber's
 * single action and a payment each append one row in their own transaction, with the actor (a
 * manager or an API key), the address, the target and the fields changed (secrets masked);
 * GET /api/audit filters and scopes them; nothing changes or deletes a row.
 */
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { seedInvoice, seedReseller, seedSubscriber } from './documents-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
let east: { id: number };
let west: { id: number };
let eastSub: { id: number; resellerId: number };

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  east = await seedReseller(t, 'East');
  west = await seedReseller(t, 'West');
  eastSub = await seedSubscriber(t, east.id);
  await t.pool.query(`update subscribers set mac_address = 'AA:BB:CC:DD:EE:FF' where id = $1`, [eastSub.id]);
});
afterAll(() => t?.close());

interface AuditView {
  id: number;
  actor_type: string;
  manager_id: number | null;
  api_key_id: number | null;
  ip: string | null;
  action: string;
  target_type: string;
  target_id: number | null;
  reseller_id: number | null;
  changes: Record<string, unknown>;
}

async function trail(query = ''): Promise<AuditView[]> {
  const res = await api.get(`/api/audit${query}`, { token: adminToken() });
  expect(res.status).toBe(200);
  return res.body.data;
}

describe('the audit trail', () => {
  it('settings: before and after, a secret only as changed', async () => {
    const res = await api.put(
      '/api/settings',
      { default_tax_rate: 5, telegram_bot_token: '123:very-secret' },
      { token: adminToken() },
    );
    expect(res.status).toBe(200);
    const [row] = await trail('?target_type=settings');
    expect(row).toMatchObject({ action: 'settings.update', actor_type: 'manager', manager_id: 1 });
    expect(row.ip).toMatch(/127\.0\.0\.1/);
    expect(row.changes.default_tax_rate).toEqual([0, 5]);
    expect(row.changes.telegram_bot_token).toEqual(['', 'changed']);
    expect(JSON.stringify(row)).not.toContain('very-secret');
  });

  it('managers: create, update, delete', async () => {
    const created = await api.post(
      '/api/managers',
      { username: 'audited', password: 'long-enough-1', role: 'user', permissions: ['subscribers.view'] },
      { token: adminToken() },
    );
    const id = created.body.data.id;
    await api.put(`/api/managers/${id}`, { password: 'another-long-1' }, { token: adminToken() });
    await api.del(`/api/managers/${id}`, { token: adminToken() });
    const rows = await trail(`?target_type=manager&target_id=${id}`);
    expect(rows.map((r) => r.action)).toEqual(['manager.delete', 'manager.update', 'manager.create']);
    expect(rows[1].changes).toEqual({ password: 'changed' });
  });

  it("a subscriber's single action, with the fields it changed", async () => {
    const res = await api.post(`/api/subscribers/${eastSub.id}/reset-mac`, {}, { token: adminToken() });
    expect(res.status).toBe(200);
    const [row] = await trail(`?target_type=subscriber&target_id=${eastSub.id}`);
    expect(row).toMatchObject({ action: 'subscriber.reset_mac', reseller_id: east.id });
    expect(row.changes.macAddress).toEqual(['AA:BB:CC:DD:EE:FF', null]);
  });

  it('a payment (in its transaction)', async () => {
    const invoice = await seedInvoice(t, eastSub, { items: [{ description: 'April', qty: 1, unitPrice: 1000 }] });
    const paid = await api.post(
      `/api/invoices/${invoice.id}/payment`,
      { amount: 5, method: 'cash' },
      { token: adminToken(), headers: { 'idempotency-key': 'audit-pay-1' } },
    );
    expect(paid.status).toBe(200);
    const [row] = await trail(`?target_type=invoice&target_id=${invoice.id}`);
    expect(row).toMatchObject({ action: 'payment.create', reseller_id: east.id });
    expect(row.changes).toMatchObject({ amount: 5, method: 'cash' });
    // Without Idempotency-Key: the one-statement path writes its row in the same statement.
    await t.pool.query(`update invoices set due_date = current_date + 30 where id = $1`, [invoice.id]);
    const fast = await api.post(`/api/invoices/${invoice.id}/payment`, { amount: 2 }, { token: adminToken() });
    expect(fast.status).toBe(200);
    const [again] = await trail(`?target_type=invoice&target_id=${invoice.id}`);
    expect(again).toMatchObject({
      action: 'payment.create',
      actor_type: 'manager',
      manager_id: 1,
      reseller_id: east.id,
    });
    expect(again.ip).toMatch(/127\.0\.0\.1/);
    expect(again.changes).toEqual({ payment_id: fast.body.data.payment.id, amount: 2, method: 'cash' });
  });

  it('a bulk job: one row with its size and payload', async () => {
    const res = await api.post(
      '/api/subscribers/bulk-action',
      { ids: [eastSub.id], action: 'reset_mac' },
      { token: adminToken() },
    );
    expect(res.status).toBe(200);
    const [row] = await trail('?target_type=bulk_job');
    expect(row).toMatchObject({ action: 'bulk.reset_mac', actor_type: 'manager', changes: { ids: 1, payload: {} } });
  });

  it("an API key's writes name the key; its creation and revocation are rows too", async () => {
    const created = await api.post('/api/api-keys', { name: 'ops', full: true }, { token: adminToken() });
    const { key, id } = created.body.data;
    expect((await api.put('/api/settings', { default_due_days: 10 }, { token: key })).status).toBe(200);
    const [row] = await trail('?target_type=settings');
    expect(row).toMatchObject({ actor_type: 'api_key', api_key_id: id, manager_id: 1 });
    expect((await trail(`?api_key_id=${id}`)).map((r) => r.action)).toEqual(['settings.update']);
    await api.del(`/api/api-keys/${id}`, { token: adminToken() });
    const keyRows = await trail(`?target_type=api_key&target_id=${id}`);
    expect(keyRows.map((r) => r.action)).toEqual(['api_key.revoke', 'api_key.create']);
    // Never the secret.
    expect(JSON.stringify(keyRows)).not.toContain(key.slice(created.body.data.prefix.length + 1));
  });

  it('is scoped: a reseller reads its tree, a user none; filters by actor and time; nothing edits it', async () => {
    const reseller = token('reseller', { resellerId: east.id });
    const mine = await api.get('/api/audit', { token: reseller });
    expect(mine.status).toBe(200);
    expect(mine.body.data.length).toBeGreaterThan(0);
    expect(mine.body.data.every((r: AuditView) => r.reseller_id === east.id)).toBe(true);
    const westRows = await api.get('/api/audit', { token: token('reseller', { resellerId: west.id }) });
    expect(westRows.body.data).toEqual([]);
    expect((await api.get('/api/audit', { token: token('user', { permissions: ['subscribers.view'] }) })).status).toBe(
      403,
    );
    expect((await trail('?actor=1')).every((r) => r.manager_id === 1)).toBe(true);
    expect(await trail(`?from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);
    const all = await trail();
    expect((await api.put(`/api/audit/${all[0].id}`, {}, { token: adminToken() })).status).toBe(404);
    expect((await api.del(`/api/audit/${all[0].id}`, { token: adminToken() })).status).toBe(404);
  });
});
