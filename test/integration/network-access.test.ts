/**
 * network-access end to end on a real PostgreSQL: subscribers and sessions in the database, a NAS
 * simulator answering RFC 5176 on UDP, a RouterOS API simulator on TCP. Actions are called through
 * the broker with a verified caller in `meta.auth`, as the gateway does.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Auth } from '../../shared/auth/claims';
import { coaOutcomes, dailyUsage, outbox, processedEvents, radacct } from '../../shared/db/schema';
import { saveSettings } from '../../shared/settings';
import type { CoaClient } from '../../services/network-access/coa/client';
import { drainOutbox } from '../../services/network-access/relay.service';
import { warmOutcomeWrites } from '../../services/network-access/outcomes';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { waitFor } from '../helpers/wait';
import { NasSimulator, type SimAnswer } from '../sim/nas-simulator';
import { RouterOsSimulator } from '../sim/routeros-simulator';

const SECRET = 'nas-secret-1';
const API = { username: 'billing', password: 'api-pass-1' };

let t: TestApp;
let api: ReturnType<typeof client>;
let nasSim: NasSimulator;
let rosSim: RouterOsSimulator;
/** What the NAS simulator answers, per user name (default ACK), and after how long. */
const answers = new Map<string, SimAnswer>();
let nasLatencyMs = 2;
let resellerId: number;
let otherResellerId: number;
let planId: number;
let nasId: number;
let sessionSeq = 0;

const admin: Auth = { managerId: 1, role: 'admin', resellerId: null, permissions: [], jti: 'test', exp: 4102444800 };
const as = (auth: Partial<Auth>): Auth => ({ ...admin, role: 'reseller', ...auth });
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test reads whatever the action answers
const call = <T = { data: Record<string, any> }>(action: string, params: Record<string, unknown>, auth: Auth = admin) =>
  t.app.broker.call(action, params, { meta: { auth } }) as Promise<T>;
const status = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (err: { code?: number }) => err.code,
  );

async function subscriber(username: string, owner = resellerId): Promise<number> {
  const res = await api.post(
    '/api/subscribers',
    { username, password: 'pw', service_id: planId, reseller_id: owner },
    { token: adminToken() },
  );
  expect(res.status).toBe(201);
  return res.body.data.id;
}

async function online(username: string, ip = '100.64.1.2'): Promise<string> {
  const id = `sess-${++sessionSeq}`;
  await t.db.insert(radacct).values({
    acctsessionid: id,
    acctuniqueid: `u-${id}`,
    username,
    nasipaddress: '127.0.0.1',
    framedipaddress: ip,
    acctstarttime: new Date(Date.now() - 3600_000),
    acctupdatetime: new Date(),
  });
  return id;
}

/** An IPv6-only session: radacct's IPv6 columns as FreeRADIUS writes them, no framedipaddress. */
async function onlineV6(
  username: string,
  v6: { address?: string; prefix?: string; delegated?: string },
): Promise<string> {
  const id = `sess-${++sessionSeq}`;
  await t.pool.query(
    `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, framedipv6address, framedipv6prefix,
                          delegatedipv6prefix, acctstarttime, acctupdatetime)
     values ($1, $2, $3, '127.0.0.1', $4, $5, $6, now() - interval '1 hour', now())`,
    [id, `u-${id}`, username, v6.address ?? null, v6.prefix ?? null, v6.delegated ?? null],
  );
  return id;
}

beforeAll(async () => {
  // The relay reads these from the process environment, as in production.
  Object.assign(process.env, { OUTBOX_POLL_MS: '200', OUTBOX_REDELIVER_SECONDS: '1' });
  t = await startTestApp();
  api = client(t.baseUrl);
  nasSim = await new NasSimulator({
    secret: SECRET,
    latencyMs: () => nasLatencyMs,
    answer: (r) => answers.get(r.userName) ?? 'ack',
  }).start();
  rosSim = await new RouterOsSimulator({
    ...API,
    emptyReply: true,
    tickMs: 5,
    pingRtts: { '100.64.9.9': [3, null, 5], '2001:db8:9::2': [4, 6] },
  }).start();
  const token = adminToken();
  resellerId = (await api.post('/api/resellers', { name: 'north', balance: 1000, currency: 'USD' }, { token })).body
    .data.id;
  otherResellerId = (await api.post('/api/resellers', { name: 'south', balance: 1000, currency: 'USD' }, { token }))
    .body.data.id;
  planId = (
    await api.post(
      '/api/services',
      { name: 'home', price: 10, duration_days: 30, currency: 'USD', rate_limit: '10M/10M' },
      { token },
    )
  ).body.data.id;
  for (const r of [resellerId, otherResellerId])
    await api.post(`/api/resellers/${r}/service-limits`, { service_id: planId }, { token });
  const nas = await call('nas.create', {
    name: 'edge-1',
    ip_address: '127.0.0.1',
    secret: SECRET,
    coa_port: nasSim.port,
    api_port: rosSim.port,
    api_username: API.username,
    api_password: API.password,
  });
  nasId = nas.data.id;
});

afterAll(async () => {
  delete process.env.OUTBOX_POLL_MS;
  delete process.env.OUTBOX_REDELIVER_SECONDS;
  await t?.close();
  await nasSim?.stop();
  await rosSim?.stop();
});

describe('POST /api/subscribers/:id/disconnect', () => {
  it('sends a Disconnect-Request to the NAS of the live session; the NAS acknowledges', async () => {
    const id = await subscriber('ali@north');
    const session = await online('ali@north', '100.64.1.2');
    const res = await call('networkAccess.disconnect', { id });
    expect(res.data).toMatchObject({
      subscriber_id: id,
      username: 'ali@north',
      outcome: 'disconnected',
      message: 'session disconnected',
      sessions: [
        {
          session_id: session,
          ip_address: '100.64.1.2',
          nas: { id: nasId, name: 'edge-1', ip_address: '127.0.0.1' },
          outcome: 'disconnected',
          via: 'coa',
          attempts: 1,
          error_cause: null,
        },
      ],
    });
    expect(nasSim.requests.at(-1)).toMatchObject({
      code: 'Disconnect-Request',
      userName: 'ali@north',
      acctSessionId: session,
      framedIp: '100.64.1.2',
    });
    const [row] = await t.db.select().from(coaOutcomes).where(eq(coaOutcomes.subscriberId, id));
    expect(row).toMatchObject({ source: 'request', action: 'disconnect', outcome: 'disconnected', eventId: null });
  });

  it("an IPv6-only session (radacct's IPv6 columns, no IPv4) is identified by its IPv6 address and prefixes", async () => {
    const id = await subscriber('six@north');
    const session = `sess-${++sessionSeq}`;
    await t.pool.query(
      `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, framedipv6address, framedipv6prefix,
                            delegatedipv6prefix, acctstarttime, acctupdatetime)
       values ($1, $2, 'six@north', '127.0.0.1', '2001:db8:6::1', '2001:db8:6::/64', '2001:db8:6600::/56',
               now() - interval '1 hour', now())`,
      [session, `u-${session}`],
    );
    const res = await call('networkAccess.disconnect', { id });
    expect(res.data).toMatchObject({
      outcome: 'disconnected',
      sessions: [{ session_id: session, ip_address: '2001:db8:6::1', outcome: 'disconnected' }],
    });
    expect(nasSim.requests.at(-1)!.attributes).toEqual([
      ['User-Name', 'six@north'],
      ['Acct-Session-Id', session],
      ['Framed-IPv6-Address', '2001:db8:6::1'],
      ['Framed-IPv6-Prefix', '2001:db8:6::/64'],
      ['Delegated-IPv6-Prefix', '2001:db8:6600::/56'],
    ]);
  });

  it('offline: 200 with outcome offline, nothing sent', async () => {
    const id = await subscriber('off@north');
    const before = nasSim.stats.received;
    const res = await call('networkAccess.disconnect', { id });
    expect(res.data).toEqual({
      subscriber_id: id,
      username: 'off@north',
      outcome: 'offline',
      message: 'subscriber is offline',
      sessions: [],
    });
    expect(nasSim.stats.received).toBe(before);
  });

  it("a NAK: rejected, with the NAS's Error-Cause; 503 (no such session) counts as offline", async () => {
    const id = await subscriber('nak@north');
    await online('nak@north');
    answers.set('nak@north', { nak: 501 });
    const res = await call('networkAccess.disconnect', { id });
    expect(res.data).toMatchObject({
      outcome: 'rejected',
      message: 'the access server rejected the request: 501 Administratively Prohibited',
    });
    expect(res.data.sessions[0].error_cause).toEqual({ code: 501, name: 'Administratively Prohibited' });
    answers.set('nak@north', { nak: 503 });
    expect((await call('networkAccess.disconnect', { id })).data.outcome).toBe('offline');
  });

  it('CoA unanswered: retransmitted, then kicked through the router API (/ppp/active/remove)', async () => {
    const id = await subscriber('mute@north');
    await online('mute@north');
    answers.set('mute@north', 'silent');
    rosSim.addSession({ name: 'mute@north', address: '100.64.1.2' });
    const res = await call('networkAccess.disconnect', { id });
    expect(res.data).toMatchObject({ outcome: 'kicked', sessions: [{ outcome: 'kicked', via: 'api', attempts: 2 }] });
    expect([...rosSim.sessions.values()].some((s) => s.name === 'mute@north')).toBe(false);
    // The router has no such session any more (RouterOS 7.18 answers !empty): offline.
    expect((await call('networkAccess.disconnect', { id })).data).toMatchObject({
      outcome: 'offline',
      sessions: [{ via: 'api' }],
    });
  });

  it('CoA unanswered, IPv6-only session the router knows under another name: found by its delegated prefix, kicked', async () => {
    // The state a rename leaves: accounting has the new name, the router the old one until the
    // session ends. By name alone the router has nothing (outcome offline, the session left up).
    const id = await subscriber('six-new@north');
    await onlineV6('six-new@north', { prefix: '2001:db8:61::/64', delegated: '2001:db8:6100::/56' });
    answers.set('six-new@north', 'silent');
    rosSim.addSession({ name: 'six-old@north', ipv6Prefix: '2001:db8:61::/64', delegatedPrefix: '2001:db8:6100::/56' });
    rosSim.addSession({
      name: 'bystander@north',
      ipv6Prefix: '2001:db8:62::/64',
      delegatedPrefix: '2001:db8:6200::/56',
    });
    const res = await call('networkAccess.disconnect', { id });
    expect(res.data).toMatchObject({
      outcome: 'kicked',
      sessions: [{ ip_address: null, outcome: 'kicked', via: 'api' }],
    });
    const names = [...rosSim.sessions.values()].map((s) => s.name);
    expect(names).not.toContain('six-old@north');
    expect(names).toContain('bystander@north');
  });

  it('CoA unanswered, IPv6-only session with a WAN prefix only: found by the route to its interface, kicked', async () => {
    const id = await subscriber('wan6-new@north');
    await onlineV6('wan6-new@north', { address: '2001:db8:63::2', prefix: '2001:db8:63::/64' });
    answers.set('wan6-new@north', 'silent');
    rosSim.addSession({ name: 'wan6-old@north', ipv6Prefix: '2001:db8:63::/64' });
    const res = await call('networkAccess.disconnect', { id });
    expect(res.data).toMatchObject({
      outcome: 'kicked',
      sessions: [{ ip_address: '2001:db8:63::2', outcome: 'kicked', via: 'api' }],
    });
    expect([...rosSim.sessions.values()].some((s) => s.name === 'wan6-old@north')).toBe(false);
  });

  it('CoA unanswered and no API credentials: failed, saying why', async () => {
    await call('nas.update', { id: nasId, api_username: null, api_password: null });
    try {
      const id = await subscriber('mute2@north');
      await online('mute2@north');
      answers.set('mute2@north', 'silent');
      const res = await call('networkAccess.disconnect', { id });
      expect(res.data.outcome).toBe('failed');
      expect(res.data.message).toMatch(/no API credentials/);
    } finally {
      await call('nas.update', { id: nasId, api_username: API.username, api_password: API.password });
    }
  });

  it('a session on an unregistered NAS fails, naming the address', async () => {
    const id = await subscriber('stray@north');
    await t.db.insert(radacct).values({
      acctsessionid: 'stray',
      acctuniqueid: 'u-stray',
      username: 'stray@north',
      nasipaddress: '192.0.2.77',
      acctstarttime: new Date(),
    });
    const res = await call('networkAccess.disconnect', { id });
    expect(res.data).toMatchObject({
      outcome: 'failed',
      sessions: [{ nas: null, nas_ip: '192.0.2.77', detail: expect.stringMatching(/192.0.2.77 is not registered/) }],
    });
  });

  it('permission, scope and existence', async () => {
    const id = await subscriber('scoped@north');
    expect(await status(call('networkAccess.disconnect', { id }, as({ resellerId, permissions: [] })))).toBe(403);
    expect(
      await status(
        call(
          'networkAccess.disconnect',
          { id },
          as({ resellerId: otherResellerId, permissions: ['subscribers.disconnect'] }),
        ),
      ),
    ).toBe(403);
    expect(
      await status(
        call('networkAccess.disconnect', { id }, as({ resellerId, permissions: ['subscribers.disconnect'] })),
      ),
    ).toBe(200);
    expect(await status(call('networkAccess.disconnect', { id: 999999 }))).toBe(404);
  });
});

describe('outbox events', () => {
  const outcomeOfEvent = (eventId: number) =>
    waitFor(
      `outcome of event ${eventId}`,
      async () => (await t.db.select().from(coaOutcomes).where(eq(coaOutcomes.eventId, eventId)))[0],
    );

  it('deactivate -> outbox row -> relay -> Disconnect-Request; outcome and processed_events recorded, row published', async () => {
    const id = await subscriber('deact@north');
    await online('deact@north');
    expect((await api.post(`/api/subscribers/${id}/deactivate`, {}, { token: adminToken() })).status).toBe(200);
    const [row] = await t.db
      .select()
      .from(outbox)
      .where(sql`${outbox.payload}->>'subscriber_id' = ${String(id)}`);
    const outcome = await outcomeOfEvent(row.id);
    expect(outcome).toMatchObject({
      source: 'event',
      action: 'disconnect',
      subscriberId: id,
      username: 'deact@north',
      reason: 'disable',
      outcome: 'disconnected',
    });
    expect(await t.db.select().from(processedEvents).where(eq(processedEvents.eventId, row.id))).toHaveLength(1);
    expect((await t.db.select().from(outbox).where(eq(outbox.id, row.id)))[0].publishedAt).not.toBeNull();
    expect(nasSim.requests.filter((r) => r.userName === 'deact@north')).toHaveLength(1);
  });

  it('rename: accounting moves to the new name, the Disconnect-Request carries the name the router knows', async () => {
    const id = await subscriber('old@north');
    const session = await online('old@north');
    const res = await api.post(`/api/subscribers/${id}/rename`, { new_username: 'new@north' }, { token: adminToken() });
    expect(res.status).toBe(200);
    const [row] = await t.db
      .select()
      .from(outbox)
      .where(and(eq(outbox.event, 'subscriber.disconnect'), sql`${outbox.payload}->>'subscriber_id' = ${String(id)}`));
    expect(await outcomeOfEvent(row.id)).toMatchObject({
      outcome: 'disconnected',
      username: 'old@north',
      reason: 'rename',
    });
    expect(nasSim.requests.filter((r) => r.acctSessionId === session)).toEqual([
      expect.objectContaining({ userName: 'old@north' }),
    ]);
  });

  it('bulk disconnect flows through the outbox to every id', async () => {
    const names = ['b1@north', 'b2@north', 'b3@north'];
    const ids: number[] = [];
    for (const n of names) {
      ids.push(await subscriber(n));
      await online(n);
    }
    const res = await api.post('/api/subscribers/bulk-action', { ids, action: 'disconnect' }, { token: adminToken() });
    expect(res.status).toBe(200);
    await waitFor('three outcomes', async () => {
      const rows = await t.db
        .select()
        .from(coaOutcomes)
        .where(and(eq(coaOutcomes.source, 'event'), inArray(coaOutcomes.subscriberId, ids)));
      return rows.length === 3 && rows;
    });
    for (const n of names) expect(nasSim.requests.filter((r) => r.userName === n)).toHaveLength(1);
  });

  /** `count` subscribers named <prefix>N@north, each with a live session from `net` + N. */
  async function manyOnline(prefix: string, count: number, net: string) {
    const { rows } = await t.db.execute<{ id: number; username: string }>(sql`
      insert into subscribers (username, password_enc, service_id, reseller_id, expiry_date)
      select ${prefix} || g || '@north', 'x', ${planId}::int, ${resellerId}::int, current_date + 30
        from generate_series(1, ${count}::int) g order by g returning id, username`);
    await t.db.execute(sql`
      insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, framedipaddress, acctstarttime, acctupdatetime)
      select ${prefix} || '-' || g, ${prefix} || '-u-' || g, ${prefix} || g || '@north', '127.0.0.1', ${net}::inet + g,
             now() - interval '1 hour', now()
        from generate_series(1, ${count}::int) g`);
    return rows.map((r) => ({ id: Number(r.id), username: r.username }));
  }

  /** One bulk disconnect of all of them; each must get exactly one request and one `disconnected` outcome. */
  async function disconnectAll(subs: { id: number; username: string }[]): Promise<void> {
    const ids = subs.map((s) => s.id);
    const res = await api.post('/api/subscribers/bulk-action', { ids, action: 'disconnect' }, { token: adminToken() });
    expect(res.status).toBe(200);
    const outcomes = await waitFor(`${ids.length} outcomes`, async () => {
      const found = await t.db
        .select()
        .from(coaOutcomes)
        .where(and(eq(coaOutcomes.source, 'event'), inArray(coaOutcomes.subscriberId, ids)));
      return found.length === ids.length && found;
    });
    expect(outcomes.every((o) => o.outcome === 'disconnected')).toBe(true);
    for (const s of subs) expect(nasSim.requests.filter((q) => q.userName === s.username)).toHaveLength(1);
  }

  it('a bulk disconnect of 200 online subscribers (several bulk batches, actions started in slices): one request and one outcome each', async () => {
    await disconnectAll(await manyOnline('many', 200, '100.65.0.0'));
  });

  it('a bulk job written faster than its NAS answers (events held back while the NAS drains): one request and one outcome each', async () => {
    const subs = await manyOnline('slow', 600, '100.66.0.0');
    // 8 in flight answered in 10 ms, in the settings too (the service rereads them every 30 s).
    const coa = (t.app.broker.getLocalService('networkAccess') as unknown as { clients: { coa: CoaClient } }).clients
      .coa;
    await saveSettings(t.db, { coa_max_in_flight_per_nas: 8 });
    coa.options.maxInFlightPerNas = 8;
    nasLatencyMs = 10;
    try {
      await disconnectAll(subs);
    } finally {
      await saveSettings(t.db, { coa_max_in_flight_per_nas: 64 });
      coa.options.maxInFlightPerNas = 64;
      nasLatencyMs = 2;
    }
  });

  it("warming the outcome statement at start writes nothing and leaves the next job's outcomes whole", async () => {
    const count = async () =>
      (
        await t.db.execute<{ outcomes: number; processed: number }>(
          sql`select (select count(*)::int from coa_outcomes) as outcomes, (select count(*)::int from processed_events) as processed`,
        )
      ).rows[0];
    const before = await count();
    await warmOutcomeWrites();
    expect(await count()).toEqual(before);
    const id = await subscriber('warm@north');
    await online('warm@north');
    expect((await api.post(`/api/subscribers/${id}/deactivate`, {}, { token: adminToken() })).status).toBe(200);
    const [row] = await t.db
      .select()
      .from(outbox)
      .where(sql`${outbox.payload}->>'subscriber_id' = ${String(id)}`);
    expect(await outcomeOfEvent(row.id)).toMatchObject({ username: 'warm@north', outcome: 'disconnected' });
    expect(await t.db.select().from(processedEvents).where(eq(processedEvents.eventId, row.id))).toHaveLength(1);
  });

  it('the same event delivered twice is acted on once', async () => {
    const id = await subscriber('twice@north');
    await online('twice@north');
    const published = async (username: string, subscriberId: number) => {
      const [row] = await t.db
        .insert(outbox)
        .values({
          event: 'subscriber.disconnect',
          payload: { subscriber_id: subscriberId, username, reason: 'disconnect' },
          publishedAt: new Date(),
        })
        .returning();
      return { row, event: { subscriber_id: subscriberId, username, reason: 'disconnect', event_id: row.id } };
    };
    const { row, event } = await published('twice@north', id);
    await t.app.broker.emit('subscriber.disconnect', event);
    await t.app.broker.emit('subscriber.disconnect', event);
    await outcomeOfEvent(row.id);
    // The late duplicate arrives together with a fresh event: once the fresh one's outcome is
    // recorded, the consumer has looked both up (one batch, or the duplicate's before it).
    const markerId = await subscriber('marker@north');
    await online('marker@north');
    const marker = await published('marker@north', markerId);
    await Promise.all([
      t.app.broker.emit('subscriber.disconnect', event),
      t.app.broker.emit('subscriber.disconnect', marker.event),
    ]);
    expect(await outcomeOfEvent(marker.row.id)).toMatchObject({ outcome: 'disconnected' });
    expect(nasSim.requests.filter((r) => r.userName === 'marker@north')).toHaveLength(1);
    expect(nasSim.requests.filter((r) => r.userName === 'twice@north')).toHaveLength(1);
    expect(await t.db.select().from(coaOutcomes).where(eq(coaOutcomes.eventId, row.id))).toHaveLength(1);
  });

  it("an event published but never processed (a crash after the relay's commit) is published again", async () => {
    const id = await subscriber('lost@north');
    await online('lost@north');
    const [row] = await t.db
      .insert(outbox)
      .values({
        event: 'subscriber.disconnect',
        payload: { subscriber_id: id, username: 'lost@north', reason: 'renew' },
        publishedAt: new Date(Date.now() - 60_000),
        attempts: 1,
      })
      .returning();
    expect(await outcomeOfEvent(row.id)).toMatchObject({ outcome: 'disconnected', reason: 'renew' });
    expect((await t.db.select().from(outbox).where(eq(outbox.id, row.id)))[0].attempts).toBe(2);
  });

  it('subscriber.rate_limit: a CoA-Request with Mikrotik-Rate-Limit, no disconnect', async () => {
    const id = await subscriber('fup@north');
    const session = await online('fup@north');
    const [row] = await t.db
      .insert(outbox)
      .values({
        event: 'subscriber.rate_limit',
        payload: { subscriber_id: id, username: 'fup@north', rate_limit: '1M/2M', fup_level: 2 },
      })
      .returning();
    expect(await outcomeOfEvent(row.id)).toMatchObject({
      action: 'rate_limit',
      outcome: 'applied',
      reason: 'fup_level 2: 1M/2M',
    });
    expect(nasSim.requests.filter((r) => r.userName === 'fup@north')).toEqual([
      {
        code: 'CoA-Request',
        userName: 'fup@north',
        acctSessionId: session,
        framedIp: '100.64.1.2',
        rateLimit: '1M/2M',
        attributes: [
          ['User-Name', 'fup@north'],
          ['Acct-Session-Id', session],
          ['Framed-IP-Address', '100.64.1.2'],
          ['Mikrotik-Rate-Limit', '1M/2M'],
        ],
        packet: expect.any(Buffer),
        seen: 1,
      },
    ]);
  });

  it('subscriber.rate_limit with no limit to apply: the session is disconnected to reconnect without one', async () => {
    const id = await subscriber('unfup@north');
    await online('unfup@north');
    const [row] = await t.db
      .insert(outbox)
      .values({
        event: 'subscriber.rate_limit',
        payload: { subscriber_id: id, username: 'unfup@north', rate_limit: null, fup_level: 0 },
      })
      .returning();
    expect(await outcomeOfEvent(row.id)).toMatchObject({
      action: 'rate_limit',
      outcome: 'disconnected',
      reason: 'fup_level 0: no limit (disconnected)',
    });
    expect(nasSim.requests.filter((r) => r.userName === 'unfup@north').map((r) => r.code)).toEqual([
      'Disconnect-Request',
    ]);
  });

  it('two relays draining at once publish each row exactly once (for update skip locked)', async () => {
    // Rows no consumer subscribes to, so only the relays' bookkeeping is under test. The app's own
    // relay, woken by the insert, drains beside the three: four relays in all.
    await t.db.execute(
      sql`insert into outbox (event, payload) select 'test.relay', jsonb_build_object('n', g) from generate_series(1, 1200) g`,
    );
    const seen: number[] = [];
    const fake = {
      emit: async (event: string, payload: { event_id: number }) => {
        if (event === 'test.relay') seen.push(payload.event_id);
      },
    };
    await Promise.all([drainOutbox(fake as never), drainOutbox(fake as never), drainOutbox(fake as never)]);
    expect(seen.length).toBeGreaterThan(0);
    // The three return when every row left is published or claimed: the app's relay may still hold
    // a claimed batch, which it publishes in its own transaction.
    await waitFor(
      'the last claimed batch',
      async () =>
        (
          await t.db.execute<{ n: number }>(
            sql`select count(*)::int as n from outbox where event = 'test.relay' and published_at is null`,
          )
        ).rows[0].n === 0,
    );
    const published = await t.db.execute<{ n: number }>(
      sql`select count(*)::int as n from outbox where event = 'test.relay' and published_at is not null and attempts = 1`,
    );
    expect(published.rows[0].n).toBe(1200);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('a batch the broker refuses goes back to the outbox and is published by the next drain', async () => {
    const refused: number[] = [];
    const failing = {
      emit: async (_event: string, payload: { event_id: number }) => {
        refused.push(payload.event_id);
        throw new Error('transporter down');
      },
    };
    // The app's relay, woken by the insert, may claim the rows first (it won 20 rounds of 5 rows in a
    // loaded CI run): more rows than its batch, so this drain finds some left, and again if not.
    for (let i = 0; refused.length === 0 && i < 20; i++) {
      await t.db.execute(
        sql`insert into outbox (event, payload) select 'test.refused', jsonb_build_object('n', g) from generate_series(1, 2000) g`,
      );
      await drainOutbox(failing as never).catch((err: Error) => expect(err.message).toBe('transporter down'));
    }
    expect(refused.length).toBeGreaterThan(0);
    // Published again by the app's relay at its next poll: a second attempt, not left for the sweep.
    await waitFor(
      'the refused rows published again',
      async () =>
        (
          await t.db.execute<{ n: number }>(
            sql`select count(*)::int as n from outbox where id = any(${sql.param(refused)}::bigint[]) and published_at is not null and attempts = 2`,
          )
        ).rows[0].n === new Set(refused).size,
    );
  });
});

describe('ping and torch through the router API', () => {
  it("ping runs /ping on the session's NAS towards its address", async () => {
    const id = await subscriber('ping@north');
    await online('ping@north', '100.64.9.9');
    const res = await call('networkAccess.ping', { id, count: 3, size: 100 });
    expect(res.data).toMatchObject({
      subscriber_id: id,
      username: 'ping@north',
      nas: { id: nasId },
      address: '100.64.9.9',
      sent: 3,
      received: 2,
      loss_percent: 33,
      min_ms: 3,
      max_ms: 5,
    });
    expect(res.data.raw).toMatch(/timeout/);
  });

  it('torch reads /tool/torch on <pppoe-username>', async () => {
    const id = await subscriber('torch@north');
    await online('torch@north');
    rosSim.options.torch = {
      '<pppoe-torch@north>': [
        {
          protocol: 'tcp',
          src: '8.8.8.8',
          srcPort: 443,
          dst: '100.64.1.2',
          dstPort: 51000,
          tx: 4_000_000,
          rx: 100_000,
        },
      ],
    };
    const res = await call('networkAccess.torch', { id, duration: 2 });
    expect(res.data).toMatchObject({
      interface: '<pppoe-torch@north>',
      duration_seconds: 2,
      samples: 2,
      download_bps: 4_000_000,
      upload_bps: 100_000,
    });
    expect(res.data.connections).toHaveLength(1);
  });

  it('ping: an IPv6-only session is pinged at its IPv6 address; one with prefixes only is a 409 saying why', async () => {
    const id = await subscriber('ping6@north');
    await onlineV6('ping6@north', { address: '2001:db8:9::2', prefix: '2001:db8:9::/64' });
    const res = await call('networkAccess.ping', { id, count: 2 });
    expect(res.data).toMatchObject({ address: '2001:db8:9::2', sent: 2, received: 2, min_ms: 4, max_ms: 6 });
    const bare = await subscriber('pd6@north');
    await onlineV6('pd6@north', { delegated: '2001:db8:9900::/56' });
    const err = await call('networkAccess.ping', { id: bare }).catch((e: { code: number; message: string }) => e);
    expect(err).toMatchObject({ code: 409, message: expect.stringMatching(/no address to ping/) });
  });

  it('torch: the IPv6 flows of an IPv6-only session are broken down per connection', async () => {
    const id = await subscriber('torch6@north');
    await onlineV6('torch6@north', { address: '2001:db8:a::2', prefix: '2001:db8:a::/64' });
    rosSim.options.torch = {
      '<pppoe-torch6@north>': [
        {
          protocol: 'tcp',
          src: '2001:db8:ff::1',
          srcPort: 443,
          dst: '2001:db8:a::2',
          dstPort: 50001,
          tx: 3_000_000,
          rx: 50_000,
        },
      ],
    };
    const res = await call('networkAccess.torch', { id, duration: 1 });
    expect(res.data).toMatchObject({ download_bps: 3_000_000, upload_bps: 50_000 });
    expect(res.data.connections).toEqual([
      expect.objectContaining({ src_address: '2001:db8:ff::1', dst_address: '2001:db8:a::2', download_bps: 3_000_000 }),
    ]);
  });

  it('offline is 409; a failing router API is 500 naming it; permission is checked', async () => {
    const id = await subscriber('noping@north');
    expect(await status(call('networkAccess.ping', { id }))).toBe(409);
    expect(await status(call('networkAccess.torch', { id }))).toBe(409);
    await online('noping@north');
    // No flows configured for this interface: the router traps.
    const err = await call('networkAccess.torch', { id, duration: 1 }).catch(
      (e: { code: number; message: string }) => e,
    );
    expect(err).toMatchObject({ code: 500, message: expect.stringMatching(/access server API failed \(trap\)/) });
    expect(
      await status(call('networkAccess.ping', { id }, as({ resellerId, permissions: ['subscribers.torch'] }))),
    ).toBe(403);
  });
});

describe('GET /api/subscribers/:id/bandwidth', () => {
  it('24 hourly points from accounting, 30 daily points from daily_usage, recent sessions', async () => {
    const id = await subscriber('bw@north');
    const now = Date.now();
    const hour = 3600_000;
    // A closed session of 2 hours, 3 to 1 hours ago, and an open one started 30 minutes ago.
    await t.db.insert(radacct).values([
      {
        acctsessionid: 'bw-1',
        acctuniqueid: 'u-bw-1',
        username: 'bw@north',
        nasipaddress: '127.0.0.1',
        acctstarttime: new Date(now - 3 * hour),
        acctstoptime: new Date(now - hour),
        acctsessiontime: 7200,
        acctoutputoctets: 7_200_000,
        acctinputoctets: 720_000,
        acctterminatecause: 'User-Request',
      },
      {
        acctsessionid: 'bw-2',
        acctuniqueid: 'u-bw-2',
        username: 'bw@north',
        nasipaddress: '127.0.0.1',
        acctstarttime: new Date(now - hour / 2),
        acctupdatetime: new Date(now),
        acctoutputoctets: 900_000,
        acctinputoctets: 90_000,
        framedipaddress: '100.64.3.3',
      },
    ]);
    // daily_usage is filled by the accounting trigger (migration 0007) from these rows.
    const today = new Date().toISOString().slice(0, 10);
    const usage = await t.db.select().from(dailyUsage).where(eq(dailyUsage.subscriberId, id));
    const res = await call('networkAccess.bandwidth', { id });
    const d = res.data;
    expect(d.last_24h).toHaveLength(24);
    expect(d.last_24h.reduce((s: number, p: { download_bytes: number }) => s + p.download_bytes, 0)).toBe(8_100_000);
    expect(d.last_24h.reduce((s: number, p: { upload_bytes: number }) => s + p.upload_bytes, 0)).toBe(810_000);
    expect(d.last_30d).toHaveLength(30);
    expect(d.last_30d.at(-1).date).toBe(today);
    expect(d.last_30d.reduce((s: number, p: { download_bytes: number }) => s + p.download_bytes, 0)).toBe(
      usage.reduce((s, u) => s + u.downloadBytes, 0),
    );
    expect(usage.reduce((s, u) => s + u.downloadBytes, 0)).toBe(8_100_000);
    expect(d.sessions.map((s: { session_id: string }) => s.session_id)).toEqual(['bw-2', 'bw-1']);
    expect(d.sessions[1]).toMatchObject({
      online: false,
      duration_seconds: 7200,
      download_bytes: 7_200_000,
      avg_download_bps: 8000,
      terminate_cause: 'User-Request',
    });
    expect(d.sessions[0]).toMatchObject({ online: true, ip_address: '100.64.3.3', stopped_at: null });
    expect(
      await status(call('networkAccess.bandwidth', { id }, as({ resellerId, permissions: ['subscribers.view'] }))),
    ).toBe(403);
  });
});

describe('settings', () => {
  it('coa_max_in_flight_per_nas and coa_retransmits are settings (PUT /api/settings)', async () => {
    const res = await api.put(
      '/api/settings',
      { coa_max_in_flight_per_nas: 16, coa_retransmits: 2 },
      { token: adminToken() },
    );
    expect(res.status).toBe(200);
    expect((await api.put('/api/settings', { coa_max_in_flight_per_nas: 0 }, { token: adminToken() })).status).toBe(
      400,
    );
    await saveSettings(t.db, { coa_max_in_flight_per_nas: 64, coa_retransmits: 1 });
  });
});
