/**
 * GET /api/transactions (docs/ledger-and-sessions.md): rows written by the real writers (payments,
 * quick-pay, wallet credit, reseller balance) and by the ledger function on other days, currencies
 * and managers; totals per currency equal sums over the matching rows for every filter, before and
 * after ledger_rollup is folded; names beside ids; CSV content, escaping and
 * streaming past a cursor batch; scope of a reseller's tree.
 */
import type { Tx } from '../../shared/db/client';
import { recordTransaction, type LedgerEntry } from '../../shared/ledger';
import { foldLedgerRollup } from '../../shared/db/ledger-rollup';
import { adminToken, client, ensureTokenManager, token, type TestApp, startTestApp } from '../helpers/app';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
const tree = { root: 0, child: 0, other: 0 };
const subs = { root: 0, child: 0, other: 0 };
const usernames = { root: '', child: '', other: '' };
const admin = adminToken();
/** A cashier: its id is the manager named on the rows it writes. */
const CASHIER_ID = 77;
let rootReseller = '';
let otherReseller = '';

interface Totals {
  currency: string;
  count: number;
  incoming: number;
  outgoing: number;
  net: number;
}
interface Row {
  id: number;
  type: string;
  amount: number;
  currency: string;
  method: string | null;
  subscriber_id: number | null;
  subscriber_username: string | null;
  reseller_id: number | null;
  reseller_name: string | null;
  manager_id: number | null;
  manager_username: string | null;
  notes: string | null;
  created_at: string;
}
interface Page {
  data: Row[];
  totals: Totals[];
  pagination: { page: number; limit: number; total: number };
}

async function page(query: string, tok = admin): Promise<Page> {
  const res = await api.get<Page>(`/api/transactions${query}`, { token: tok });
  expect(res.status).toBe(200);
  return res.body;
}

/** Every row of a filter, page by page. */
async function allRows(query: string, tok = admin): Promise<Row[]> {
  const rows: Row[] = [];
  for (let n = 1; ; n++) {
    const p = await page(`${query}${query ? '&' : '?'}limit=7&page=${n}`, tok);
    rows.push(...p.data);
    if (p.data.length < 7) return rows;
  }
}

/** Totals computed here from the ledger itself, in minor units, per currency. */
async function ledgerSums(
  where: string,
  values: unknown[],
): Promise<Record<string, { n: number; in: number; out: number }>> {
  const { rows } = await t.pool.query(
    `select currency, count(*)::int as n, coalesce(sum(amount) filter (where amount > 0), 0)::bigint as i,
            coalesce(sum(amount) filter (where amount < 0), 0)::bigint as o
       from transactions t where ${where} group by currency`,
    values,
  );
  return Object.fromEntries(rows.map((r) => [r.currency.trim(), { n: r.n, in: Number(r.i), out: Number(r.o) }]));
}

const minor = (v: number, currency: string) => Math.round(v * (currency === 'JPY' ? 1 : 100));

function asMinor(totals: Totals[]) {
  return Object.fromEntries(
    totals.map((x) => [
      x.currency,
      { n: x.count, in: minor(x.incoming, x.currency), out: minor(x.outgoing, x.currency) },
    ]),
  );
}

function sumRows(rows: Row[]) {
  const out: Record<string, { n: number; in: number; out: number }> = {};
  for (const r of rows) {
    const s = (out[r.currency] ??= { n: 0, in: 0, out: 0 });
    s.n++;
    const m = minor(r.amount, r.currency);
    if (m > 0) s.in += m;
    else s.out += m;
  }
  return out;
}

async function ledger(entry: LedgerEntry): Promise<number> {
  return t.db.transaction((tx) => recordTransaction(tx as unknown as Tx, entry));
}

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  const plan = await seedPlan(t.db, { price: 1000 });
  const root = await seedReseller(t.db, { name: 'Ledger Root' });
  tree.root = root.id;
  rootReseller = root.name;
  tree.child = (await seedReseller(t.db, { name: 'Ledger Child', parentId: tree.root })).id;
  const other = await seedReseller(t.db, { name: 'Ledger Other' });
  tree.other = other.id;
  otherReseller = other.name;
  for (const which of ['root', 'child', 'other'] as const) {
    const s = await seedSubscriber(t.db, {
      resellerId: tree[which],
      serviceId: plan.id,
      username: `ledger-${which}@isp`,
    });
    subs[which] = s.id;
    usernames[which] = s.username;
  }
  await t.pool.query(
    `insert into managers (id, username, password_hash, role, reseller_id) values ($1, 'cashier-anna', '!', 'reseller', $2)`,
    [CASHIER_ID, tree.root],
  );
  // The real writers: an invoice paid in two parts, quick-pay with an excess to the wallet, a wallet
  // credit and a reseller balance credit.
  const inv = await api.post<{ data: { id: number } }>(
    '/api/invoices',
    { subscriber_id: subs.child, items: [{ description: 'Monthly', qty: 1, unit_price: 30 }] },
    { token: admin },
  );
  expect(inv.status).toBe(201);
  expect(
    (await api.post(`/api/invoices/${inv.body.data.id}/payment`, { amount: 10.25, method: 'cash' }, { token: admin }))
      .status,
  ).toBe(200);
  expect(
    (await api.post(`/api/invoices/${inv.body.data.id}/payment`, { amount: 4.5, method: 'card' }, { token: admin }))
      .status,
  ).toBe(200);
  expect(
    (await api.post(`/api/invoices/quick-pay/${subs.other}`, { amount: 12, method: 'bank' }, { token: admin })).status,
  ).toBe(200);
  expect((await api.post(`/api/subscribers/${subs.root}/add-balance`, { amount: 7.5 }, { token: admin })).status).toBe(
    200,
  );
  expect((await api.post(`/api/resellers/${tree.root}/balance`, { amount: 100 }, { token: admin })).status).toBe(200);
  // Other days, a second currency, a manager, a debit, and notes a spreadsheet would run.
  const day = (d: string) => new Date(`${d}T12:00:00Z`);
  await ledger({
    type: 'renewal',
    amount: -2000,
    currency: 'USD',
    subscriberId: subs.root,
    username: usernames.root,
    resellerId: tree.root,
    createdBy: CASHIER_ID,
    createdAt: day('2025-01-10'),
  });
  await ledger({
    type: 'invoice_payment',
    amount: 1500,
    currency: 'USD',
    subscriberId: subs.root,
    username: usernames.root,
    resellerId: tree.root,
    method: 'cash',
    createdBy: CASHIER_ID,
    notes: '=HYPERLINK("x"), "quoted"\nnext',
    createdAt: day('2025-01-10'),
  });
  await ledger({
    type: 'invoice_payment',
    amount: 990,
    currency: 'EUR',
    subscriberId: subs.child,
    username: usernames.child,
    resellerId: tree.child,
    method: 'card',
    createdBy: CASHIER_ID,
    createdAt: day('2025-01-11'),
  });
  await ledger({
    type: 'wallet_credit',
    amount: 250,
    currency: 'EUR',
    subscriberId: subs.other,
    username: usernames.other,
    resellerId: tree.other,
    method: 'cash',
    notes: '+1 bonus',
    createdAt: day('2025-01-31'),
  });
  await ledger({
    type: 'invoice_payment',
    amount: 5000,
    currency: 'JPY',
    subscriberId: subs.other,
    username: usernames.other,
    resellerId: tree.other,
    method: 'cash',
    createdAt: day('2025-02-01'),
  });
  await ledger({
    type: 'reseller_debit',
    amount: -300,
    currency: 'USD',
    resellerId: tree.child,
    method: 'prepaid_card',
    createdBy: CASHIER_ID,
    createdAt: day('2025-02-02'),
  });
  await ledger({
    type: 'rename_fee',
    amount: 100,
    currency: 'USD',
    notes: "operator's own",
    createdAt: day('2025-02-03'),
  });
});
afterAll(() => t.close());

const FILTERS: [string, string, (ids: typeof tree, s: typeof subs) => unknown[]][] = [
  ['', 'true', () => []],
  ['?type=invoice_payment', `type = 'invoice_payment'`, () => []],
  ['?method=cash', `method = 'cash'`, () => []],
  ['?type=invoice_payment&method=card', `type = 'invoice_payment' and method = 'card'`, () => []],
  ['?subscriber_id=SUB_ROOT', 'subscriber_id = $1', (_, s) => [s.root]],
  [
    '?subscriber_id=SUB_OTHER&type=invoice_payment',
    `subscriber_id = $1 and type = 'invoice_payment'`,
    (_, s) => [s.other],
  ],
  ['?reseller_id=ROOT', 'reseller_id = $1', (r) => [r.root]],
  ['?reseller_id=CHILD&from=2025-01-01', `reseller_id = $1 and created_at >= '2025-01-01T00:00:00Z'`, (r) => [r.child]],
  ['?manager_id=77', 'created_by = 77', () => []],
  [
    '?from=2025-01-10&to=2025-01-31',
    `created_at >= '2025-01-10T00:00:00Z' and created_at < '2025-02-01T00:00:00Z'`,
    () => [],
  ],
  ['?to=2025-01-10', `created_at < '2025-01-11T00:00:00Z'`, () => []],
  // Ranges the rollup reads as whole months and partial ones by day (shared/db/ledger-rollup.ts).
  [
    '?from=2025-01-01&to=2025-01-31',
    `created_at >= '2025-01-01T00:00:00Z' and created_at < '2025-02-01T00:00:00Z'`,
    () => [],
  ],
  [
    '?from=2025-01-11&to=2025-02-02',
    `created_at >= '2025-01-11T00:00:00Z' and created_at < '2025-02-03T00:00:00Z'`,
    () => [],
  ],
  [
    '?from=2024-12-31&to=2025-02-01&type=invoice_payment',
    `created_at >= '2024-12-31T00:00:00Z' and created_at < '2025-02-02T00:00:00Z' and type = 'invoice_payment'`,
    () => [],
  ],
  ['?from=2025-01-31', `created_at >= '2025-01-31T00:00:00Z'`, () => []],
  ['?to=2025-01-31', `created_at < '2025-02-01T00:00:00Z'`, () => []],
  [
    '?from=2025-02-01&subscriber_id=SUB_OTHER',
    `created_at >= '2025-02-01T00:00:00Z' and subscriber_id = $1`,
    (_, s) => [s.other],
  ],
];

const withIds = (q: string) =>
  q
    .replace('SUB_ROOT', String(subs.root))
    .replace('SUB_OTHER', String(subs.other))
    .replace('CHILD', String(tree.child))
    .replace('ROOT', String(tree.root));

describe('GET /api/transactions', () => {
  it('totals per currency equal sums over the matching rows for every filter, before and after the deltas move', async () => {
    for (const folded of [false, true]) {
      // The service moves deltas every second as well: totals hold whatever is still pending.
      if (folded) await foldLedgerRollup();
      for (const [query, where, values] of FILTERS) {
        const q = withIds(query);
        const expected = await ledgerSums(where, values(tree, subs));
        const first = await page(q);
        expect({ q, totals: asMinor(first.totals) }).toEqual({ q, totals: expected });
        const rows = await allRows(q);
        expect({ q, rows: sumRows(rows) }).toEqual({ q, rows: expected });
        expect(first.pagination.total).toBe(rows.length);
        for (const tot of first.totals) expect(tot.net).toBeCloseTo(tot.incoming + tot.outgoing, 6);
      }
    }
    // Something actually matched: JPY stays apart from USD and EUR, never summed across.
    const all = await page('');
    expect(all.totals.map((x) => x.currency)).toEqual(['EUR', 'JPY', 'USD']);
    expect(all.totals.find((x) => x.currency === 'JPY')).toMatchObject({ count: 1, incoming: 5000, outgoing: 0 });
  });

  it('keeps totals exact through updates and deletes of ledger rows (triggers on every statement)', async () => {
    const id = await ledger({
      type: 'refill_fee',
      amount: 333,
      currency: 'USD',
      resellerId: tree.other,
      createdAt: new Date('2025-03-01T00:00:00Z'),
    });
    await t.pool.query(`update transactions set amount = 444, reseller_id = $2 where id = $1`, [id, tree.child]);
    await t.pool.query(`update transactions set username = username where true`);
    const before = await page(`?reseller_id=${tree.child}&type=refill_fee`);
    expect(before.totals).toEqual([{ currency: 'USD', count: 1, incoming: 4.44, outgoing: 0, net: 4.44 }]);
    expect((await page(`?reseller_id=${tree.other}&type=refill_fee`)).totals).toEqual([]);
    await t.pool.query(`delete from transactions where id = $1`, [id]);
    expect((await page(`?type=refill_fee`)).totals).toEqual([]);
    await foldLedgerRollup();
    // Every key's kept sums minus the ledger's own, at both grains: nothing left (group by meets NULL
    // keys, a join would not).
    for (const grain of ['day', 'month']) {
      const { rows } = await t.pool.query(
        `select day, reseller_id, type, method, service_id, manager_id, currency from (
          select day, reseller_id, type, method, service_id, manager_id, currency, n, incoming i, outgoing o
            from ledger_rollup where grain = left($1, 1)
          union all
          select date_trunc($1, created_at at time zone 'UTC')::date, reseller_id, type, method, service_id, created_by,
            currency, -count(*), -coalesce(sum(amount) filter (where amount > 0), 0),
            -coalesce(sum(amount) filter (where amount < 0), 0)
          from transactions group by 1, 2, 3, 4, 5, 6, 7) d
        group by 1, 2, 3, 4, 5, 6, 7 having sum(n) <> 0 or sum(i) <> 0 or sum(o) <> 0`,
        [grain],
      );
      expect({ grain, rows }).toEqual({ grain, rows: [] });
    }
    expect((await t.pool.query('select count(*)::int as n from ledger_rollup where not folded')).rows[0].n).toBe(0);
    expect(asMinor((await page('')).totals)).toEqual(await ledgerSums('true', []));
  });

  it('names the subscriber, reseller and manager of each row beside their ids', async () => {
    const rows = await allRows(`?manager_id=${CASHIER_ID}`);
    expect(rows.length).toBe(4);
    for (const r of rows) expect(r.manager_username).toBe('cashier-anna');
    const renewal = rows.find((r) => r.type === 'renewal')!;
    expect(renewal).toMatchObject({
      amount: -20,
      subscriber_id: subs.root,
      subscriber_username: usernames.root,
      reseller_id: tree.root,
      reseller_name: rootReseller,
      manager_id: CASHIER_ID,
      created_at: '2025-01-10T12:00:00.000Z',
    });
    const paid = await allRows(`?subscriber_id=${subs.other}&type=invoice_payment`);
    expect(paid.map((r) => [r.subscriber_username, r.reseller_name])).toContainEqual([usernames.other, otherReseller]);
    // Newest first by default, oldest first on asking.
    const desc = (await page('?limit=500')).data.map((r) => r.created_at);
    expect(desc).toEqual([...desc].sort().reverse());
    const asc = (await page('?limit=500&order=asc')).data.map((r) => r.created_at);
    expect(asc).toEqual([...asc].sort());
  });

  it('keeps a reseller inside its tree', async () => {
    const reseller = token('reseller', { resellerId: tree.root });
    const rows = await allRows('', reseller);
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => r.reseller_id))).toEqual(new Set([tree.root, tree.child]));
    const own = await page('', reseller);
    expect(asMinor(own.totals)).toEqual(await ledgerSums('reseller_id = any($1)', [[tree.root, tree.child]]));
    // Another tree's subscriber named as a filter shows nothing of it.
    const foreign = await page(`?subscriber_id=${subs.other}`, reseller);
    expect(foreign.data).toEqual([]);
    expect(foreign.totals).toEqual([]);
    const refused = await api.get(`/api/transactions?reseller_id=${tree.other}`, { token: reseller });
    expect(refused.status).toBe(403);
    const child = token('reseller', { resellerId: tree.child });
    expect((await api.get(`/api/transactions?reseller_id=${tree.root}`, { token: child })).status).toBe(403);
    expect(new Set((await allRows('', child)).map((r) => r.reseller_id))).toEqual(new Set([tree.child]));
    const csv = await api.get(`/api/transactions?format=csv`, { token: child });
    expect(csv.status).toBe(200);
    const lines = csv.text.trim().split('\r\n').slice(1);
    expect(lines.length).toBe((await allRows('', child)).length);
    expect(csv.text).not.toContain(usernames.other);
    expect((await api.get('/api/transactions')).status).toBe(401);
  });

  it('is in the OpenAPI document, JSON and CSV, beside the session routes', async () => {
    const doc = (await api.get<{ paths: Record<string, Record<string, any>> }>('/api/openapi.json')).body; // eslint-disable-line @typescript-eslint/no-explicit-any -- a document of any shape
    const op = doc.paths['/api/transactions'].get;
    expect(Object.keys(op.responses['200'].content)).toEqual(['application/json', 'text/csv']);
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['type', 'method', 'subscriber_id', 'reseller_id', 'manager_id', 'from', 'to', 'format']),
    );
    expect(Object.keys(doc.paths['/api/sessions'].get.responses['200'].content)).toEqual(['application/json']);
    expect(doc.paths['/api/subscribers/{id}/sessions'].get).toBeDefined();
  });

  it('refuses bad filters with 400', async () => {
    expect((await api.get('/api/transactions?type=gift', { token: admin })).status).toBe(400);
    expect((await api.get('/api/transactions?from=2025-02-01&to=2025-01-01', { token: admin })).status).toBe(400);
    expect((await api.get('/api/transactions?limit=501', { token: admin })).status).toBe(400);
    expect((await api.get('/api/transactions?format=xml', { token: admin })).status).toBe(400);
    // Year 0 is an ISO date PostgreSQL refuses; 9999-12-31's next month is past its calendar (500s before).
    const yearZero = await api.get('/api/transactions?from=0000-01-01', { token: admin });
    expect([yearZero.status, yearZero.body.message]).toEqual([400, 'from must be a date from year 0001 on']);
    expect((await api.get('/api/transactions?from=9999-12-15', { token: admin })).body.pagination.total).toBe(0);
    const last = await api.get('/api/transactions?to=9999-12-31', { token: admin });
    expect(last.status).toBe(200);
    expect(last.body.pagination.total).toBe(
      (await api.get('/api/transactions', { token: admin })).body.pagination.total,
    );
  });
});

describe('GET /api/transactions as CSV', () => {
  it('answers ?format=csv and Accept: text/csv with the rows of the filter, formula cells escaped', async () => {
    const byQuery = await api.get(`/api/transactions?format=csv&manager_id=${CASHIER_ID}&order=asc`, { token: admin });
    expect(byQuery.status).toBe(200);
    expect(byQuery.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(byQuery.headers.get('content-disposition')).toBe('attachment; filename="transactions.csv"');
    await ensureTokenManager(t.baseUrl, admin);
    const res = await fetch(`${t.baseUrl}/api/transactions?manager_id=${CASHIER_ID}&order=asc`, {
      headers: { authorization: `Bearer ${admin}`, accept: 'text/csv' },
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toBe(byQuery.text);
    const [header, ...lines] = text.split('\r\n');
    expect(header).toBe(
      'id,created_at,type,amount,currency,method,subscriber_id,subscriber_username,reseller_id,reseller_name,manager_id,manager_username,invoice_id,invoice_number,reference,notes',
    );
    expect(lines.pop()).toBe('');
    const renewal = lines.find((l) => l.includes(',renewal,'))!;
    expect(renewal).toMatch(
      new RegExp(
        `^\\d+,2025-01-10T12:00:00.000Z,renewal,-20,USD,,${subs.root},${usernames.root},${tree.root},${rootReseller},${CASHIER_ID},cashier-anna,,,,$`,
      ),
    );
    // A formula is defused with a leading apostrophe, then quoted for its comma, quotes and newline.
    expect(text).toContain(`,"'=HYPERLINK(""x""), ""quoted""\nnext"\r\n`);
    const eur = await api.get('/api/transactions?format=csv&type=wallet_credit&to=2025-01-31', { token: admin });
    expect(eur.text).toContain(",'+1 bonus\r\n");
    // A payment's invoice number, as in its JSON row (before, the CSV had the id alone).
    const paid = (await api.get('/api/transactions?type=invoice_payment&limit=1', { token: admin })).body.data[0];
    expect(paid.invoice_number).toEqual(expect.any(String));
    const all = await api.get('/api/transactions?format=csv&type=invoice_payment', { token: admin });
    const line = all.text.split('\r\n').find((l) => l.startsWith(`${paid.id},`))!;
    expect(line.split(',')[13]).toBe(paid.invoice_number); // after invoice_id
    // JSON stays the default, also for an Accept that prefers it.
    const json = await api.get('/api/transactions?limit=1', { token: admin, headers: { accept: 'application/json' } });
    expect(json.headers.get('content-type')).toContain('application/json');
  });

  it('streams every matching row, past the cursor batch, in list order', async () => {
    // 12,345 rows at once (more than two cursor batches of 5,000), as an import would write them.
    await t.pool.query(
      `insert into transactions (type, amount, currency, subscriber_id, username, reseller_id, method, created_by, created_at)
       select 'invoice_payment', 100 + g, 'USD', $1, $2, $3, 'bank', $4, timestamptz '2024-06-01' + g * interval '1 second'
       from generate_series(1, 12345) g`,
      [subs.child, usernames.child, tree.child, CASHIER_ID],
    );
    const res = await api.get(`/api/transactions?format=csv&method=bank&from=2024-06-01&to=2024-06-30&order=asc`, {
      token: admin,
    });
    expect(res.status).toBe(200);
    const lines = res.text.trim().split('\r\n').slice(1);
    expect(lines.length).toBe(12345);
    const amounts = lines.map((l) => Number(l.split(',')[3]));
    expect(amounts[0]).toBe(1.01);
    expect(amounts[12344]).toBe(124.45);
    expect(amounts.every((a, i) => i === 0 || a > amounts[i - 1])).toBe(true);
    const json = await page(`?method=bank&from=2024-06-01&to=2024-06-30`);
    expect(json.pagination.total).toBe(12345);
    const sum = amounts.reduce((s, a) => s + Math.round(a * 100), 0);
    expect(minor(json.totals[0].incoming, 'USD')).toBe(sum);
  });
});
