/**
 * Trust the database, not the token: every authenticated request is checked against the
 * manager's row as it is now; path ids are canonical; bodies are JSON objects with nothing
 * unknown, duplicated or empty; a zero-total invoice is settled at once.
 */
import { and, eq } from 'drizzle-orm';
import { signToken } from '../../shared/auth/jwt';
import { auditLog, invoices, resellers, subscribers } from '../../shared/db/schema';
import { adminToken, client, startTestApp, TEST_JWT_SECRET, type TestApp } from '../helpers/app';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
let resellerId: number;
let planId: number;
let subscriberId: number;
let invoiceId: number;

const ALL = ['subscribers.view', 'subscribers.create', 'subscribers.delete', 'subscribers.edit'];

async function manager(
  username: string,
  role: 'admin' | 'reseller' | 'user',
  permissions: string[] = [],
): Promise<{ id: number; token: string }> {
  const created = await api.post(
    '/api/managers',
    { username, password: 'long-enough-1', role, reseller_id: role === 'admin' ? null : resellerId, permissions },
    { token: adminToken() },
  );
  expect(created.status).toBe(201);
  const login = await api.post('/api/auth/login', { username, password: 'long-enough-1' });
  expect(login.status).toBe(200);
  return { id: created.body.data.id, token: login.body.data.token };
}

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  resellerId = (await seedReseller(t.db, { name: 'Identity shop' })).id;
  planId = (await seedPlan(t.db, { price: 1000 })).id;
  subscriberId = (await seedSubscriber(t.db, { resellerId, serviceId: planId })).id;
  const inv = await api.post(
    '/api/invoices',
    { subscriber_id: subscriberId, items: [{ description: 'x', qty: 1, unit_price: 10 }] },
    { token: adminToken() },
  );
  expect(inv.status).toBe(201);
  invoiceId = inv.body.data.id;
});
afterAll(() => t.close());

describe('a token is only as good as its manager row', () => {
  it("a deleted admin's token is refused at once", async () => {
    const a = await manager('deleted-admin', 'admin');
    expect((await api.post('/api/resellers', { name: 'ok while alive' }, { token: a.token })).status).toBe(201);
    expect((await api.del(`/api/managers/${a.id}`, { token: adminToken() })).body.data).toEqual({
      id: a.id,
      deleted: true,
    });
    const res = await api.post('/api/resellers', { name: 'after delete' }, { token: a.token });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, message: 'manager no longer exists' });
    expect(await t.db.select().from(resellers).where(eq(resellers.name, 'after delete'))).toHaveLength(0);
  });

  it('cut permissions are 403 on the next request, with the same token', async () => {
    const m = await manager('cut-perms', 'reseller', ALL);
    expect(
      (
        await api.post(
          `/api/resellers/${resellerId}/service-limits`,
          { service_id: planId, max_subscribers: 10 },
          { token: adminToken() },
        )
      ).status,
    ).toBe(200);
    const created = await api.post(
      '/api/subscribers',
      { username: 'cut-1@isp', password: 'pw', service_id: planId },
      { token: m.token },
    );
    expect(created.status).toBe(201);
    await api.put(`/api/managers/${m.id}`, { permissions: ['subscribers.view'] }, { token: adminToken() });
    expect(
      (
        await api.post(
          '/api/subscribers',
          { username: 'cut-2@isp', password: 'pw', service_id: planId },
          { token: m.token },
        )
      ).status,
    ).toBe(403);
    expect((await api.del(`/api/subscribers/${created.body.data.id}`, { token: m.token })).status).toBe(403);
    expect((await api.get(`/api/subscribers/${created.body.data.id}`, { token: m.token })).status).toBe(200);
    const [row] = await t.db.select().from(subscribers).where(eq(subscribers.id, created.body.data.id));
    expect(row.deletedAt).toBeNull();
  });

  it('a reseller lowered to role user can no longer record payments', async () => {
    const m = await manager('lowered', 'reseller');
    expect((await api.post(`/api/invoices/${invoiceId}/payment`, { amount: 1 }, { token: m.token })).status).toBe(200);
    await api.put(`/api/managers/${m.id}`, { role: 'user' }, { token: adminToken() });
    expect((await api.post(`/api/invoices/${invoiceId}/payment`, { amount: 1 }, { token: m.token })).status).toBe(403);
    const [inv] = await t.db.select().from(invoices).where(eq(invoices.id, invoiceId));
    expect(inv.paidAmount).toBe(100);
  });

  it('a validly signed token for a manager id that does not exist is 401', async () => {
    const forged = signToken(
      { managerId: 999_999, role: 'admin', resellerId: null, permissions: [] },
      TEST_JWT_SECRET,
      60,
    ).token;
    const res = await api.get('/api/settings', { token: forged });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, message: 'manager no longer exists' });
  });

  it('a password change ends every earlier token; the new password logs in', async () => {
    const m = await manager('pw-change', 'admin');
    expect((await api.get('/api/settings', { token: m.token })).status).toBe(200);
    expect(
      (await api.put(`/api/managers/${m.id}`, { password: 'a-new-password' }, { token: adminToken() })).status,
    ).toBe(200);
    const res = await api.get('/api/settings', { token: m.token });
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('token revoked');
    const login = await api.post('/api/auth/login', { username: 'pw-change', password: 'a-new-password' });
    expect((await api.get('/api/settings', { token: login.body.data.token })).status).toBe(200);
  });

  it('disable and enable: tokens and logins refused while disabled, both changes audited', async () => {
    const m = await manager('to-disable', 'admin');
    const off = await api.put(`/api/managers/${m.id}`, { active: false }, { token: adminToken() });
    expect(off.status).toBe(200);
    expect(off.body.data.active).toBe(false);
    expect((await api.get('/api/settings', { token: m.token })).body).toEqual({
      success: false,
      message: 'manager is disabled',
    });
    // Answered and audited as a wrong password: the answer does not tell that the account exists.
    expect((await api.post('/api/auth/login', { username: 'to-disable', password: 'long-enough-1' })).body).toEqual({
      success: false,
      message: 'invalid username or password',
    });
    expect((await api.put(`/api/managers/${m.id}`, { active: true }, { token: adminToken() })).body.data.active).toBe(
      true,
    );
    expect((await api.get('/api/settings', { token: m.token })).status).toBe(200);
    const audit = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, 'manager'), eq(auditLog.entityId, m.id)))
      .orderBy(auditLog.id);
    expect(audit.map((a) => [a.action, a.managerId, a.details])).toEqual([
      // The creation is audited too (issue 28), with what the manager was given.
      ['manager.create', 1, expect.objectContaining({ username: 'to-disable' })],
      ['manager.disable', 1, { active: false }],
      ['auth.login_failed', null, { username: 'to-disable' }],
      ['manager.enable', 1, { active: true }],
    ]);
  });

  it('logout still revokes just the calling token', async () => {
    const m = await manager('logs-out', 'admin');
    const second = (await api.post('/api/auth/login', { username: 'logs-out', password: 'long-enough-1' })).body.data
      .token;
    expect((await api.post('/api/auth/logout', {}, { token: m.token })).status).toBe(200);
    expect((await api.get('/api/settings', { token: m.token })).body.message).toBe('token revoked');
    expect((await api.get('/api/settings', { token: second })).status).toBe(200);
  });
});

describe('path ids are canonical positive decimal integers within int4', () => {
  const BAD = ['0x1', '%201', '+1', '01', '1e0', '1.0', '-1', '0', '2147483648', 'abc'];
  const routes = (id: string) =>
    [
      ['GET', `/api/subscribers/${id}`],
      ['DELETE', `/api/invoices/${id}`],
      ['PUT', `/api/managers/${id}`],
      ['GET', `/api/resellers/${id}`],
      ['POST', `/api/invoices/quick-pay/${id}`],
      ['DELETE', `/api/nas/${id}`],
    ] as const;

  it('answers 400 on every route, and touches nothing', async () => {
    for (const id of BAD) {
      for (const [method, path] of routes(id)) {
        const body = method === 'PUT' ? { username: 'renamed' } : method === 'POST' ? { amount: 1 } : undefined;
        const res = await (method === 'GET'
          ? api.get(path, { token: adminToken() })
          : method === 'DELETE'
            ? api.del(path, { token: adminToken() })
            : method === 'PUT'
              ? api.put(path, body, { token: adminToken() })
              : api.post(path, body, { token: adminToken() }));
        expect({ path, status: res.status }).toEqual({ path, status: 400 });
      }
    }
    expect(await t.db.select().from(invoices).where(eq(invoices.id, 1))).toHaveLength(1);
  });

  it('names the field in the message', async () => {
    expect((await api.del('/api/invoices/0x1', { token: adminToken() })).body).toEqual({
      success: false,
      message: 'id must be an integer in plain decimal digits',
    });
    expect((await api.get('/api/subscribers?page=0x2', { token: adminToken() })).body.message).toBe(
      'page must be an integer in plain decimal digits',
    );
  });
});

describe('bodies are JSON objects with something known to change', () => {
  it('PUT /api/invoices/:id with only unknown keys, __proto__ or a duplicated key is 400 and changes nothing', async () => {
    const before = await api.get(`/api/invoices/${invoiceId}`, { token: adminToken() });
    for (const raw of [
      '{"bogus":1}',
      '{"__proto__":{"notes":"x"}}',
      '{"notes":"a","notes":"b"}',
      '{"notes":"a","items":[{"description":"d","description":"e","qty":1,"unit_price":1}]}',
    ]) {
      const res = await api.put(`/api/invoices/${invoiceId}`, undefined, { token: adminToken(), rawBody: raw });
      expect({ raw, status: res.status }).toEqual({ raw, status: 400 });
    }
    expect(
      (
        await api.put(`/api/invoices/${invoiceId}`, undefined, {
          token: adminToken(),
          rawBody: '{"notes":"a","notes":"b"}',
        })
      ).body.message,
    ).toBe('body has the key "notes" more than once');
    expect((await api.put(`/api/invoices/${invoiceId}`, { bogus: 1 }, { token: adminToken() })).body.message).toBe(
      'bogus is not a known field',
    );
    expect((await api.get(`/api/invoices/${invoiceId}`, { token: adminToken() })).body.data).toEqual(before.body.data);
  });

  it('PUT /api/subscribers/:id: null, an array or nothing known is 400; form or text bodies are 415', async () => {
    const path = `/api/subscribers/${subscriberId}`;
    const res = (rawBody: string, type = 'application/json') =>
      api.put(path, undefined, { token: adminToken(), rawBody, headers: { 'content-type': type } });
    expect((await res('null')).body).toEqual({ success: false, message: 'body must be a JSON object' });
    expect((await res('[]')).status).toBe(400);
    expect((await res('"x"')).status).toBe(400);
    expect((await res('{"bogus":1}')).body).toEqual({ success: false, message: 'body has nothing to change' });
    expect((await res('{}')).status).toBe(400);
    expect((await res('full_name=x', 'application/x-www-form-urlencoded')).status).toBe(415);
    expect((await res('full_name=x', 'text/plain')).body).toEqual({
      success: false,
      message: 'content type must be application/json',
    });
    expect((await res('{"full_name":"Kept","bogus":1}')).status).toBe(200);
  });

  it('PUT /api/nas/:id with only unknown fields or nothing is 400, not 500', async () => {
    const nas = await api.post(
      '/api/nas',
      { name: 'n1', ip_address: '10.9.9.9', secret: 'secret-1' },
      { token: adminToken() },
    );
    expect((await api.put(`/api/nas/${nas.body.data.id}`, { a: 1 }, { token: adminToken() })).status).toBe(400);
    expect((await api.put(`/api/nas/${nas.body.data.id}`, {}, { token: adminToken() })).body.message).toBe(
      'body has nothing to change',
    );
  });

  it('a NUL or control character in any text field or in search is 400 naming the field', async () => {
    const created = await api.post(
      '/api/subscribers',
      { username: 'nul@isp', password: 'pw', service_id: planId, full_name: 'a\u0000b' },
      { token: adminToken() },
    );
    expect(created.body).toEqual({ success: false, message: 'full_name must not contain control characters' });
    expect((await api.get('/api/subscribers?search=%00', { token: adminToken() })).body.message).toBe(
      'search must not contain control characters',
    );
    const lines = await api.post(
      '/api/invoices',
      { subscriber_id: subscriberId, items: [{ description: 'bell\u0007', qty: 1, unit_price: 1 }] },
      { token: adminToken() },
    );
    expect(lines.body.message).toBe('items[0].description must not contain control characters');
    const fresh = await api.post(
      '/api/invoices',
      { subscriber_id: subscriberId, items: [{ description: 'ok', qty: 1, unit_price: 1 }] },
      { token: adminToken() },
    );
    expect(
      (
        await api.put(
          `/api/invoices/${fresh.body.data.id}`,
          { notes: 'line one\nline two\tindented' },
          { token: adminToken() },
        )
      ).status,
    ).toBe(200);
  });
});

describe('an invoice of total 0', () => {
  it('is created paid at once, with paid_at and nothing left to pay', async () => {
    const res = await api.post(
      '/api/invoices',
      { subscriber_id: subscriberId, items: [{ description: 'Free month', qty: 1, unit_price: 0 }] },
      { token: adminToken() },
    );
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ total: 0, paid_amount: 0, balance: 0, status: 'paid' });
    expect(res.body.data.paid_at).toEqual(expect.any(String));
    expect(
      (await api.post(`/api/invoices/${res.body.data.id}/payment`, { amount: 1 }, { token: adminToken() })).body
        .message,
    ).toBe('amount exceeds balance');
  });

  it('a pending invoice edited down to 0 is settled the same way', async () => {
    const res = await api.post(
      '/api/invoices',
      { subscriber_id: subscriberId, items: [{ description: 'Router', qty: 1, unit_price: 5 }] },
      { token: adminToken() },
    );
    const edited = await api.put(
      `/api/invoices/${res.body.data.id}`,
      { items: [{ description: 'Router (waived)', qty: 1, unit_price: 0 }] },
      { token: adminToken() },
    );
    expect(edited.status).toBe(200);
    const [row] = await t.db.select().from(invoices).where(eq(invoices.id, res.body.data.id));
    expect(row).toMatchObject({ status: 'paid', total: 0 });
    expect(row.paidAt).toBeInstanceOf(Date);
  });
});
