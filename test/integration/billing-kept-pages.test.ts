/**
 * Pages kept between requests (services/billing/list-page-cache.ts, migrations 0010, 0012 and 0033):
 * a kept page (a search, a tree, a date range) is served only while invoice_list_generation is the
 * one it was confirmed at or no change logged since matches its filter, so every write that changes
 * what a list holds shows on the next request while writes elsewhere keep the page, and its rows are
 * read fresh, so a payment shows without the list being walked again.
 */
import { TransactionRollbackError } from 'drizzle-orm';
import type { PoolClient } from 'pg';
import { createInvoices } from '../../shared/billing';
import { pgPool, type Tx } from '../../shared/db/client';
import { invoiceListGeneration } from '../../shared/db/schema';
import { listInvoicesJson } from '../../services/billing/invoice-list';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;

type Row = { id: number; reseller_id: number; paid_amount: number; balance: number; status: string };
type Page = { data: Row[]; pagination: { page: number; limit: number; total: number } };

const tree = { root: 0, child: 0, other: 0 };
/** Subscribers named `Keptname <n>` (more than a thousand: `keptname` is a broad search), by reseller. */
const kept: Record<'root' | 'child' | 'other', number[]> = { root: [], child: [], other: [] };
let planId: number;

async function list(query: string, tok = adminToken()): Promise<Page> {
  const res = await api.get<Page>(`/api/invoices${query}`, { token: tok });
  expect(res.status).toBe(200);
  return res.body;
}

const ids = (p: Page) => p.data.map((i) => i.id);

/** What `search=keptname` should list, newest first, by the search's definition (docs/billing.md). */
async function keptnameIds(resellers?: number[]): Promise<number[]> {
  const { rows } = await t.pool.query<{ id: number }>(
    `
    select id from invoices i
    where (i.invoice_number ilike '%keptname%' or exists (select 1 from subscribers s
      where s.id = i.subscriber_id and (s.username ilike '%keptname%' or s.full_name ilike '%keptname%')))
      and ($1::int[] is null or i.reseller_id = any($1))
    order by id desc`,
    [resellers ?? null],
  );
  return rows.map((r) => r.id);
}

async function generation(): Promise<number> {
  const [row] = await t.db.select().from(invoiceListGeneration);
  return row.n;
}

/** `n` invoices of a subscriber in one transaction (createInvoices, as renewals make them). */
async function invoicesFor(subscriberId: number, resellerId: number, n: number): Promise<number[]> {
  return t.db.transaction(async (tx) => {
    const made = await createInvoices(
      tx as unknown as Tx,
      Array.from({ length: n }, () => ({
        subscriberId,
        resellerId,
        items: [{ description: 'Monthly plan', qty: 1, unitPrice: 1000 }],
        taxRate: 0,
      })),
    );
    return made.map((m) => m.invoice.id);
  });
}

/**
 * The names of the billing statements `run` sends through the app's pool (in this process), by
 * `pool.query` or on a connection taken from it.
 */
async function statementsOf<T>(
  run: () => Promise<T>,
  between?: (name: string) => Promise<void>,
): Promise<{ result: T; names: string[] }> {
  const names: string[] = [];
  const pool = pgPool();
  const recorded = <Q extends (config: unknown, values?: unknown) => Promise<unknown>>(query: Q) =>
    (async (config: unknown, values?: unknown) => {
      const name = (config as { name?: string }).name;
      // Only the list's: not the gateway's identity check (read again when its cached entry expires)
      // nor the billing service's timers (status counts' fold, the change log's pruning).
      if (name && /^billing_(list|search)_/.test(name)) names.push(name);
      const res = await query(config, values);
      if (name && between) await between(name);
      return res;
    }) as unknown as Q;
  type Query = (config: unknown, values?: unknown) => Promise<unknown>;
  const query = pool.query.bind(pool) as Query;
  const spy = jest.spyOn(pool, 'query').mockImplementation(recorded(query) as unknown as typeof pool.query);
  const connect = pool.connect.bind(pool) as (callback?: unknown) => Promise<PoolClient>;
  const taken: { client: PoolClient; query: PoolClient['query'] }[] = [];
  // pool.query takes its connection with a callback: that one is recorded by the spy above.
  const connectSpy = jest.spyOn(pool, 'connect').mockImplementation((async (callback?: unknown) => {
    if (callback) return connect(callback);
    const client = await connect();
    // A client taken again within the run is recorded already: wrapping it twice counted twice.
    if (taken.some((t) => t.client === client)) return client;
    taken.push({ client, query: client.query });
    // Released, the client serves pool.query too, which passes a callback: that call goes through as is.
    const own = recorded(client.query.bind(client) as Query);
    const direct = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) =>
      typeof args[args.length - 1] === 'function' ? direct(...args) : own(args[0], args[1])) as PoolClient['query'];
    return client;
  }) as unknown as typeof pool.connect);
  try {
    return { result: await run(), names };
  } finally {
    spy.mockRestore();
    connectSpy.mockRestore();
    for (const t of taken.reverse()) t.client.query = t.query;
  }
}

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  planId = (await seedPlan(t.db, { price: 1000 })).id;
  tree.root = (await seedReseller(t.db, { name: 'Root' })).id;
  tree.child = (await seedReseller(t.db, { name: 'Child', parentId: tree.root })).id;
  tree.other = (await seedReseller(t.db, { name: 'Other' })).id;
  const { rows } = await t.pool.query<{ id: number; reseller_id: number }>(
    `
    insert into subscribers (username, password_enc, full_name, service_id, reseller_id, expiry_date)
    select 'kept' || g || '@isp', 'x', 'Keptname ' || g, $1, ($2::int[])[1 + g % 3], '2099-01-01'
    from generate_series(1, 1002) g order by g returning id, reseller_id`,
    [planId, [tree.root, tree.child, tree.other]],
  );
  for (const r of rows)
    kept[r.reseller_id === tree.root ? 'root' : r.reseller_id === tree.child ? 'child' : 'other'].push(r.id);
  // Interleaved, so that each reseller's invoices are spread over the id order.
  for (let k = 0; k < 4; k++) {
    for (const which of ['root', 'child', 'other'] as const) {
      await invoicesFor(kept[which][k], tree[which], 2);
    }
  }
});
afterAll(() => t.close());

describe('a kept search page', () => {
  it('is served again without running the search, then shows a new matching invoice at once', async () => {
    const q = '?search=keptname&limit=4';
    const first = await list(q);
    expect(ids(first)).toEqual((await keptnameIds()).slice(0, 4));
    expect(first.pagination.total).toBe(24);
    const again = await statementsOf(() => list(q));
    expect(again.names).toContain('billing_list_kept_page');
    expect(again.names).not.toContain('billing_search_subscribers');
    expect(again.result).toEqual(first);

    const before = await generation();
    const created = await api.post<{ data: { id: number } }>(
      '/api/invoices',
      { subscriber_id: kept.child[10], items: [{ description: 'Extra', qty: 1, unit_price: 5 }] },
      { token: adminToken() },
    );
    expect(created.status).toBe(201);
    expect(await generation()).toBe(before + 1);
    const after = await list(q);
    expect(ids(after)[0]).toBe(created.body.data.id);
    expect(ids(after)).toEqual((await keptnameIds()).slice(0, 4));
    expect(after.pagination.total).toBe(25);
  });

  it('follows a subscriber renamed out of the search and one renamed into it', async () => {
    const pages = [
      '?search=keptname&limit=4',
      '?search=keptname&limit=4&page=2',
      '?search=keptname&limit=100&order=asc',
    ];
    const check = async () => {
      const all = await keptnameIds();
      const got = await Promise.all(pages.map((q) => list(q)));
      expect(ids(got[0])).toEqual(all.slice(0, 4));
      expect(ids(got[1])).toEqual(all.slice(4, 8));
      expect(ids(got[2])).toEqual([...all].reverse());
      for (const p of got) expect(p.pagination.total).toBe(all.length);
      return all;
    };
    const start = await check();
    // The newest invoice's subscriber leaves the search...
    const [{ subscriber_id: leaving }] = (
      await t.pool.query<{ subscriber_id: number }>('select subscriber_id from invoices where id = $1', [start[0]])
    ).rows;
    const renamed = await api.put(
      `/api/subscribers/${leaving}`,
      { full_name: 'Someone Else' },
      { token: adminToken() },
    );
    expect(renamed.status).toBe(200);
    const without = await check();
    expect(without).not.toContain(start[0]);
    expect(without.length).toBeLessThan(start.length);
    // ... and a subscriber of no match comes in with its invoices.
    const plain = (await seedSubscriber(t.db, { resellerId: tree.other, serviceId: planId, fullName: 'Plain Person' }))
      .id;
    const theirs = await invoicesFor(plain, tree.other, 2);
    expect(await check()).toEqual(without);
    await api.put(`/api/subscribers/${plain}`, { full_name: 'Keptname Plain' }, { token: adminToken() });
    const withPlain = await check();
    expect(withPlain.slice(0, 2)).toEqual([...theirs].reverse());
  });

  it('loses a deleted invoice and gains one whose number comes to match', async () => {
    const q = '?search=keptname&limit=4';
    const [top] = ids(await list(q));
    expect((await api.del(`/api/invoices/${top}`, { token: adminToken() })).status).toBe(200);
    const afterDelete = await list(q);
    expect(ids(afterDelete)).not.toContain(top);
    expect(ids(afterDelete)).toEqual((await keptnameIds()).slice(0, 4));
    // Numbers are not editable through the API; the trigger must follow any writer anyway.
    const nobody = (await seedSubscriber(t.db, { resellerId: tree.root, serviceId: planId, fullName: 'Nobody' })).id;
    const [, older] = await invoicesFor(nobody, tree.root, 2);
    await list(q);
    await t.pool.query(`update invoices set invoice_number = 'KEPTNAME-RENUMBERED' where id = $1`, [older]);
    const afterRenumber = await list(q);
    expect(ids(afterRenumber)[0]).toBe(older);
    expect(ids(afterRenumber)).toEqual((await keptnameIds()).slice(0, 4));
  });

  it('shows a payment on its rows without running the search again', async () => {
    const q = '?search=keptname&limit=4';
    const page = await list(q);
    const target = page.data.find((i) => i.status === 'pending')!;
    const before = await generation();
    const paid = await api.post(
      `/api/invoices/${target.id}/payment`,
      { amount: target.balance },
      { token: adminToken() },
    );
    expect(paid.status).toBe(200);
    expect(await generation()).toBe(before);
    const after = await statementsOf(() => list(q));
    expect(after.names).toContain('billing_list_kept_page');
    expect(after.names).not.toContain('billing_search_subscribers');
    expect(ids(after.result)).toEqual(ids(page));
    const row = after.result.data.find((i) => i.id === target.id)!;
    expect(row).toMatchObject({ status: 'paid', paid_amount: target.balance, balance: 0 });
    expect(after.result.pagination.total).toBe(page.pagination.total);
  });

  it("is never another tree's: a reseller caller gets its own rows after an admin kept the page", async () => {
    const q = '?search=keptname&limit=100';
    const all = await list(q);
    expect(ids(all)).toEqual(await keptnameIds());
    expect(new Set(all.data.map((i) => i.reseller_id))).toEqual(new Set([tree.root, tree.child, tree.other]));
    const rootToken = token('reseller', { resellerId: tree.root });
    for (let k = 0; k < 2; k++) {
      const mine = await list(q, rootToken);
      expect(ids(mine)).toEqual(await keptnameIds([tree.root, tree.child]));
      expect(mine.pagination.total).toBe(mine.data.length);
    }
    const childToken = token('reseller', { resellerId: tree.child });
    expect(ids(await list(q, childToken))).toEqual(await keptnameIds([tree.child]));
    // reseller_id: the admin's kept page of another tree stays out of reach; one inside is the same page.
    expect(ids(await list(`${q}&reseller_id=${tree.other}`))).toEqual(await keptnameIds([tree.other]));
    expect((await api.get(`/api/invoices${q}&reseller_id=${tree.other}`, { token: rootToken })).status).toBe(403);
    expect(ids(await list(`${q}&reseller_id=${tree.child}`))).toEqual(await keptnameIds([tree.child]));
    expect(ids(await list(`${q}&reseller_id=${tree.child}`, rootToken))).toEqual(await keptnameIds([tree.child]));
  });

  it("is not kept when a write lands between the subscribers' statement and the page's", async () => {
    // A narrow search: the page statement takes the matching subscribers' ids from the first statement.
    const racer = (await seedSubscriber(t.db, { resellerId: tree.other, serviceId: planId, fullName: 'Racer One' })).id;
    const late = (await seedSubscriber(t.db, { resellerId: tree.other, serviceId: planId, fullName: 'Runner Late' }))
      .id;
    const first = await invoicesFor(racer, tree.other, 2);
    const second = await invoicesFor(late, tree.other, 2);
    const raced = await statementsOf(
      () => list('?search=racer'),
      async (name) => {
        if (name === 'billing_search_subscribers')
          await t.pool.query(`update subscribers set full_name = 'Racer Two' where id = $1`, [late]);
      },
    );
    // Served as the two statements saw it (the page is as fresh as a read that began before the rename)...
    expect(ids(raced.result)).toEqual([...first].reverse());
    // ... but not kept: the next request reads the rename, and that page is kept.
    const next = await statementsOf(() => list('?search=racer'));
    expect(next.names).toContain('billing_search_subscribers');
    expect(ids(next.result)).toEqual([...first, ...second].reverse());
    const third = await statementsOf(() => list('?search=racer'));
    expect(third.names).not.toContain('billing_search_subscribers');
    expect(third.result).toEqual(next.result);
  });

  it('serves a narrow search (a number) from the kept page too', async () => {
    const [{ n }] = (await t.pool.query<{ n: string }>(`select invoice_number as n from invoices order by id limit 1`))
      .rows;
    const first = await list(`?search=${encodeURIComponent(n)}`);
    expect(first.data).toHaveLength(1);
    const again = await statementsOf(() =>
      listInvoicesJson({ kind: 'all' }, { search: n, order: 'desc', limit: 50, offset: 0 }),
    );
    expect(again.names).toEqual(['billing_list_kept_page']);
    expect(JSON.parse(again.result.json)).toEqual(first.data);
  });
});

/** What `where` lists, newest first (by issue date first for a date range). */
async function expectedIds(where: string, values: unknown[] = [], order = 'id desc'): Promise<number[]> {
  return (
    await t.pool.query<{ id: number }>(`select id from invoices i where ${where} order by ${order}`, values)
  ).rows.map((r) => r.id);
}

describe('requests for one kept page at once', () => {
  it('share one read after the request that found the page changed, each answer read after its request', async () => {
    const filter = { search: 'keptname', order: 'desc' as const, limit: 7, offset: 0 };
    await listInvoicesJson({ kind: 'all' }, filter);
    const [made] = await invoicesFor(kept.root[0], tree.root, 1);
    const burst = await statementsOf(() =>
      Promise.all(Array.from({ length: 20 }, () => listInvoicesJson({ kind: 'all' }, filter))),
    );
    // The first request checked the page (changed), checked it again in its snapshot and moved it;
    // the other 19, arrived meanwhile, share one check after it. Unshared: a check each at least.
    expect(burst.names).toEqual([
      'billing_list_kept_page',
      'billing_list_kept_page',
      'billing_list_move_0',
      'billing_list_kept_page',
    ]);
    const expected = (await keptnameIds()).slice(0, 7);
    expect(expected[0]).toBe(made);
    for (const page of burst.result) expect(JSON.parse(page.json).map((i: Row) => i.id)).toEqual(expected);
  });
});

describe('a kept tree or date-range page', () => {
  it("serves a reseller's tree again by id, with a payment on its rows, and follows a new invoice and a move", async () => {
    const rootToken = token('reseller', { resellerId: tree.root });
    const inTree = () => expectedIds('reseller_id = any($1)', [[tree.root, tree.child]]);
    const q = '?limit=3&page=2';
    const first = await list(q, rootToken);
    expect(ids(first)).toEqual((await inTree()).slice(3, 6));
    const target = first.data.find((i) => i.status === 'pending')!;
    expect((await api.post(`/api/invoices/${target.id}/payment`, { amount: 1 }, { token: adminToken() })).status).toBe(
      200,
    );
    const again = await statementsOf(() => list(q, rootToken));
    expect(again.names).toContain('billing_list_kept_page');
    expect(ids(again.result)).toEqual(ids(first));
    expect(again.result.data.find((i) => i.id === target.id)!.paid_amount).toBe(target.paid_amount + 1);
    expect(again.result.pagination.total).toBe((await inTree()).length);
    // A new invoice in the tree shifts page 2 at once; one moved out leaves it.
    await invoicesFor(kept.child[30], tree.child, 3);
    expect(ids(await list(q, rootToken))).toEqual((await inTree()).slice(3, 6));
    const [moved] = (await inTree()).slice(3, 4);
    await t.pool.query('update invoices set reseller_id = $1 where id = $2', [tree.other, moved]);
    const after = await list(q, rootToken);
    expect(ids(after)).not.toContain(moved);
    expect(ids(after)).toEqual((await inTree()).slice(3, 6));
    expect(after.pagination.total).toBe((await inTree()).length);
    // The admin's page of the whole list is another entry.
    expect(ids(await list(q))).toEqual((await expectedIds('true')).slice(3, 6));
  });

  it('serves a date range again and follows an invoice whose issue date enters it', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const [entering] = await invoicesFor(kept.other[31], tree.other, 1);
    await t.pool.query(`update invoices set issue_date = '2020-01-01' where id = $1`, [entering]);
    const q = `?from=${today}&to=${today}&limit=2`;
    const inRange = () => expectedIds('issue_date = $1', [today], 'issue_date desc, id desc');
    const first = await list(q);
    expect(ids(first)).toEqual((await inRange()).slice(0, 2));
    const again = await statementsOf(() => list(q));
    expect(again.names).toEqual(['billing_list_kept_page']);
    expect(again.result).toEqual(first);
    await t.pool.query('update invoices set issue_date = $1 where id = $2', [today, entering]);
    const after = await list(q);
    expect(ids(after)).toEqual((await inRange()).slice(0, 2));
    expect(ids(after)).toContain(entering);
    expect(after.pagination.total).toBe(first.pagination.total + 1);
  });
});

type Served = 'kept' | 'moved' | 'computed';

/**
 * How a request got its page: the kept one, the kept one moved by the changes logged since (its move
 * statement ran, page-moves.ts), or computed (a list statement or the search's subscribers ran).
 */
async function served(query: string, tok = adminToken()): Promise<{ page: Page; how: Served }> {
  const { result, names } = await statementsOf(() => list(query, tok));
  expect(names).toContain('billing_list_kept_page');
  const how: Served = names.some((n) => /^billing_list_\d+$/.test(n) || n === 'billing_search_subscribers')
    ? 'computed'
    : names.some((n) => n.startsWith('billing_list_move_'))
      ? 'moved'
      : 'kept';
  return { page: result, how };
}

describe('a kept page and the changes logged since (invoice_list_changes)', () => {
  it("keeps a tree's page across another tree's writes, and computes it again after an invoice written, moved in or out, or deleted in it", async () => {
    const rootToken = token('reseller', { resellerId: tree.root });
    const inTree = async () => (await expectedIds('reseller_id = any($1)', [[tree.root, tree.child]])).slice(2, 4);
    const q = '?limit=2&page=2';
    const expectKept = async () => {
      const r = await served(q, rootToken);
      expect(r.how).toBe('kept');
      expect(ids(r.page)).toEqual(await inTree());
    };
    const expectComputed = async () => {
      const r = await served(q, rootToken);
      expect(r.how).toBe('computed');
      expect(ids(r.page)).toEqual(await inTree());
      expect(r.page.pagination.total).toBe(
        (await expectedIds('reseller_id = any($1)', [[tree.root, tree.child]])).length,
      );
    };
    const shown = await list(q, rootToken);
    expect(ids(shown)).toEqual(await inTree());
    // The kept JSON is served while its rows stand; any write to one of them shows on the next request.
    expect((await list(q, rootToken)).data).toEqual(shown.data);
    await t.pool.query(`update invoices set status = 'void', notes = 'voided' where id = $1`, [shown.data[1].id]);
    const voided = await served(q, rootToken);
    expect(voided.how).toBe('kept');
    expect(voided.page.data[1]).toMatchObject({ id: shown.data[1].id, status: 'void', notes: 'voided' });
    expect(voided.page.data[0]).toEqual(shown.data[0]);
    // Unrelated: another reseller's new invoice, then its deletion; the page is confirmed at each generation.
    const [elsewhere] = await invoicesFor(kept.other[40], tree.other, 1);
    await expectKept();
    await expectKept();
    expect((await api.del(`/api/invoices/${elsewhere}`, { token: adminToken() })).status).toBe(200);
    await expectKept();
    // In the tree: a new invoice, after the page was confirmed at a later generation than it was read at.
    await invoicesFor(kept.child[41], tree.child, 1);
    await expectComputed();
    await expectKept();
    // Moved in from another tree, then out again.
    const [mover] = await invoicesFor(kept.other[42], tree.other, 1);
    await expectKept();
    await t.pool.query('update invoices set reseller_id = $1 where id = $2', [tree.child, mover]);
    await expectComputed();
    await t.pool.query('update invoices set reseller_id = $1 where id = $2', [tree.other, mover]);
    await expectComputed();
    // Deleted in the tree.
    const [first] = await inTree();
    expect((await api.del(`/api/invoices/${first}`, { token: adminToken() })).status).toBe(200);
    await expectComputed();
  });

  it('keeps a search page across writes it does not match, and moves it by a rename into or out of it', async () => {
    const q = '?search=keptname&limit=3';
    const expectPage = async (how: Served) => {
      const r = await served(q);
      expect(r.how).toBe(how);
      const all = await keptnameIds();
      expect(ids(r.page)).toEqual(all.slice(0, 3));
      expect(r.page.pagination.total).toBe(all.length);
    };
    await list(q);
    const outsider = (
      await seedSubscriber(t.db, { resellerId: tree.root, serviceId: planId, fullName: 'Outsider One' })
    ).id;
    await invoicesFor(outsider, tree.root, 2);
    await expectPage('kept');
    // A rename that leaves the name outside the search rewrites search_text, not what it matches.
    expect(
      (await api.put(`/api/subscribers/${outsider}`, { full_name: 'Outsider Two' }, { token: adminToken() })).status,
    ).toBe(200);
    await expectPage('kept');
    expect(
      (await api.put(`/api/subscribers/${outsider}`, { full_name: 'Keptname Outsider' }, { token: adminToken() }))
        .status,
    ).toBe(200);
    await expectPage('moved');
    await expectPage('kept');
    expect(
      (await api.put(`/api/subscribers/${outsider}`, { full_name: 'Outsider Three' }, { token: adminToken() })).status,
    ).toBe(200);
    await expectPage('moved');
    // A matching invoice below the page still changes the total.
    await t.pool.query(
      `update invoices set invoice_number = 'KEPTNAME-OLD' where id = (select min(id) from invoices where subscriber_id = $1)`,
      [outsider],
    );
    await expectPage('moved');
  });

  it('keeps a date range across invoices of other dates, and refreshes when one leaves the range', async () => {
    const day = '2021-06-01';
    const [a, b] = await invoicesFor(kept.root[43], tree.root, 2);
    await t.pool.query('update invoices set issue_date = $1 where id = any($2)', [day, [a, b]]);
    const q = `?from=${day}&to=${day}`;
    expect(ids(await list(q))).toEqual([b, a]);
    await invoicesFor(kept.root[44], tree.root, 1);
    const kept1 = await served(q);
    expect(kept1.how).toBe('kept');
    expect(ids(kept1.page)).toEqual([b, a]);
    await t.pool.query(`update invoices set issue_date = '2021-06-02' where id = $1`, [b]);
    const after = await served(q);
    expect(after.how).toBe('computed');
    expect(ids(after.page)).toEqual([a]);
    expect(after.page.pagination.total).toBe(1);
  });

  it('refreshes every page after a transaction of more than 1,000 invoices, or once the changes were pruned', async () => {
    const rootToken = token('reseller', { resellerId: tree.root });
    const q = '?limit=2';
    await list(q, rootToken);
    // Another tree's invoices, but too many to log one by one: one `every` row stands for them.
    await t.pool.query(
      `insert into invoices (invoice_number, subscriber_id, reseller_id, kind, amount, tax_rate, tax_amount, total,
         paid_amount, status, currency, issue_date, due_date, commission_rate, commission_amount, public_token_nonce)
       select 'BULK-' || g, $1, $2, 'manual', 100, 0, 0, 100, 0, 'pending', 'USD', current_date, current_date, 0, 0, 'bulk' || g
       from generate_series(1, 1001) g`,
      [kept.other[45], tree.other],
    );
    const { rows } = await t.pool.query<{ every: boolean; n: number }>(
      `select every, count(*)::int as n from invoice_list_changes where generation = (select n from invoice_list_generation) group by 1 order by 1`,
    );
    expect(rows).toEqual([
      { every: false, n: 1000 },
      { every: true, n: 1 },
    ]);
    expect((await served(q, rootToken)).how).toBe('computed');
    expect((await served(q, rootToken)).how).toBe('kept');
    // The log of the next generation gone (pruned): the page cannot be confirmed, so it is computed.
    await invoicesFor(kept.other[46], tree.other, 1);
    await t.pool.query('delete from invoice_list_changes');
    const pruned = await served(q, rootToken);
    expect(pruned.how).toBe('computed');
    expect(ids(pruned.page)).toEqual(
      (await expectedIds('reseller_id = any($1)', [[tree.root, tree.child]])).slice(0, 2),
    );
  });
});

describe('a kept page moved by the changes logged since (page-moves.ts)', () => {
  it('equals the list computed by SQL after every write, in both orders and at every page; a search page moves', async () => {
    const rootToken = token('reseller', { resellerId: tree.root });
    const inRootTree = [tree.root, tree.child];
    const lists = [
      { q: '', tok: adminToken(), expected: () => expectedIds('true') },
      { q: '&search=keptname', tok: adminToken(), expected: () => keptnameIds() },
      { q: '', tok: rootToken, expected: () => expectedIds('reseller_id = any($1)', [inRootTree]) },
      { q: '&search=keptname', tok: rootToken, expected: () => keptnameIds(inRootTree) },
      {
        q: `&reseller_id=${tree.child}`,
        tok: adminToken(),
        expected: () => expectedIds('reseller_id = $1', [tree.child]),
      },
    ];
    // A fixed sequence (mulberry32), so that a failure replays.
    let seed = 26;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
      return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)];
    const which = () => pick(['root', 'child', 'other'] as const);
    const subscriber = (w: 'root' | 'child' | 'other') => kept[w][200 + Math.floor(random() * 30)];
    const written: number[] = [];
    const writes: (() => Promise<unknown>)[] = [
      async () => {
        const w = which();
        written.push(...(await invoicesFor(subscriber(w), tree[w], 1 + Math.floor(random() * 3))));
      },
      async () => {
        const id = written.splice(Math.floor(random() * written.length), 1)[0];
        if (id !== undefined) expect((await api.del(`/api/invoices/${id}`, { token: adminToken() })).status).toBe(200);
      },
      () => t.pool.query('update invoices set reseller_id = $1 where id = $2', [tree[which()], pick(written) ?? 0]),
      () =>
        t.pool.query(`update subscribers set full_name = $1 where id = $2`, [
          random() < 0.5 ? 'Gone' : 'Keptname back',
          subscriber(which()),
        ]),
      () =>
        t.pool.query(`update invoices set invoice_number = $1 where id = $2`, [
          `KEPTNAME-${Math.floor(random() * 1e6)}`,
          pick(written) ?? 0,
        ]),
    ];
    const hows: Record<'search' | 'other', Record<Served, number>> = {
      search: { kept: 0, moved: 0, computed: 0 },
      other: { kept: 0, moved: 0, computed: 0 },
    };
    for (const l of lists)
      for (const order of ['desc', 'asc'])
        for (const page of [1, 2, 3]) await list(`?limit=3&page=${page}&order=${order}${l.q}`, l.tok);
    for (let step = 0; step < 20; step++) {
      await pick(writes)();
      for (const l of lists) {
        const all = await l.expected();
        for (const order of ['desc', 'asc'] as const) {
          const expected = order === 'desc' ? all : [...all].reverse();
          for (const page of [1, 2, 3]) {
            const r = await served(`?limit=3&page=${page}&order=${order}${l.q}`, l.tok);
            expect({ step, q: l.q, order, page, ids: ids(r.page), total: r.page.pagination.total }).toEqual({
              step,
              q: l.q,
              order,
              page,
              ids: expected.slice((page - 1) * 3, page * 3),
              total: all.length,
            });
            hows[l.q.includes('search') ? 'search' : 'other'][r.how]++;
          }
        }
      }
    }
    // A search's pages move instead of being computed again; other lists' are computed (the move
    // would cost what computing does).
    expect(hows.search.moved).toBeGreaterThan(30);
    expect(hows.search.computed).toBe(0);
    expect(hows.other.moved).toBe(0);
    expect(hows.other.computed).toBeGreaterThan(30);
    // About 700 requests: 7 s on a quiet host, over a minute in a loaded CI run.
  }, 240_000);
});

describe("the app's PostgreSQL sessions", () => {
  it('run without JIT, even where a server has it on (a kept page was compiled at every request)', async () => {
    const { rows } = await pgPool().query<{ jit: string }>('show jit');
    expect(rows[0].jit).toBe('off');
  });
});

describe('invoice_list_generation', () => {
  it('moves once per transaction that creates invoices, never with payments, edits, status changes or rollbacks', async () => {
    const g = await generation();
    await t.db.transaction(async (tx) => {
      for (const which of ['root', 'other'] as const) {
        await createInvoices(
          tx as unknown as Tx,
          Array.from({ length: 20 }, (_, k) => ({
            subscriberId: kept[which][100 + k],
            resellerId: tree[which],
            items: [{ description: 'Batch', qty: 1, unitPrice: 700 }],
            taxRate: 0,
          })),
        );
      }
    });
    expect(await generation()).toBe(g + 1);
    const [invoice] = await invoicesFor(kept.root[200], tree.root, 1);
    expect(await generation()).toBe(g + 2);
    expect((await api.post(`/api/invoices/${invoice}/payment`, { amount: 1 }, { token: adminToken() })).status).toBe(
      200,
    );
    const [edited] = await invoicesFor(kept.root[201], tree.root, 1);
    const after = await generation();
    expect(
      (
        await api.put(
          `/api/invoices/${edited}`,
          { notes: 'edited', items: [{ description: 'Fixed', qty: 2, unit_price: 3 }] },
          { token: adminToken() },
        )
      ).status,
    ).toBe(200);
    await t.pool.query(`update invoices set status = 'overdue' where id = $1`, [edited]);
    // A rename that changes only letter case leaves search_text, so what searches match, as it was.
    const [{ name }] = (
      await t.pool.query<{ name: string }>('select full_name as name from subscribers where id = $1', [kept.root[200]])
    ).rows;
    expect(
      (await api.put(`/api/subscribers/${kept.root[200]}`, { full_name: name.toUpperCase() }, { token: adminToken() }))
        .status,
    ).toBe(200);
    // The rollback is the only way out: the invoice was written, and an error before it fails here.
    await expect(
      t.db.transaction(async (tx) => {
        expect(
          await createInvoices(tx as unknown as Tx, [
            {
              subscriberId: kept.root[202],
              resellerId: tree.root,
              items: [{ description: 'x', qty: 1, unitPrice: 1 }],
              taxRate: 0,
            },
          ]),
        ).toHaveLength(1);
        tx.rollback();
      }),
    ).rejects.toThrow(TransactionRollbackError);
    expect(await generation()).toBe(after);
  });
});
