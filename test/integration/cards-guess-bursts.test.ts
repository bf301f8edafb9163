/**
 * Issue 43, finding 2: the card PIN limits (5 invalid PINs per subscriber, 20 per address, within
 * 15 minutes; docs/cards.md) hold under concurrent bursts, through the operator's route and the
 * captive portal's form: at most the limit is checked (400 `invalid PIN`) and the rest is 429, by
 * the answers and by the rows of card_redeem_attempts. A valid PIN is no guess, also in a burst.
 * TRUST_PROXY lets each test choose its client address (X-Forwarded-For).
 */
import { and, eq } from 'drizzle-orm';
import { MAX_FAILS_ADDRESS, MAX_FAILS_SUBSCRIBER } from '../../services/cards/redeem';
import { cardRedeemAttempts, cards } from '../../shared/db/schema';
import { adminToken, client, http, startTestApp, type HttpResult, type TestApp } from '../helpers/app';
import { openSession } from './portal-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();
let reseller: number;
let plan: number;
let seq = 0;

beforeAll(async () => {
  t = await startTestApp({ env: { TRUST_PROXY: '1' } });
  api = client(t.baseUrl);
  const r = await api.post('/api/resellers', { name: 'bursts', balance: 1000, currency: 'USD' }, { token: admin });
  expect(r.status).toBe(201);
  reseller = r.body.data.id;
  const p = await api.post(
    '/api/services',
    { name: 'home', price: 10, duration_days: 30, currency: 'USD' },
    { token: admin },
  );
  expect(p.status).toBe(201);
  plan = p.body.data.id;
  const limit = await api.post(
    `/api/resellers/${reseller}/service-limits`,
    { service_id: plan, max_subscribers: null },
    { token: admin },
  );
  expect(limit.status).toBe(200);
});
afterAll(() => t?.close());

let addresses = 0;
/** A client address no other request of the file uses. */
const freshAddress = () => `10.44.${Math.floor(++addresses / 250)}.${(addresses % 250) + 1}`;

async function mkSub(): Promise<{ id: number; username: string }> {
  seq += 1;
  const res = await api.post(
    '/api/subscribers',
    { username: `burst${seq}@isp`, password: 'secret1', service_id: plan, reseller_id: reseller },
    { token: admin },
  );
  expect(res.status).toBe(201);
  return res.body.data;
}

async function mkCard(): Promise<{ serial: string; pin: string }> {
  const res = await api.post('/api/cards/batches', { count: 1, value: 2 }, { token: admin });
  expect(res.status).toBe(201);
  const [serial, pin] = (res.body.csv as string).trim().split('\n')[1].split(',');
  return { serial, pin };
}

/** A 14-digit PIN of no card: `n` keeps a burst's guesses distinct. */
const guess = (n: number) => `7${String(n).padStart(13, '0')}`;

const redeem = (subscriberId: number, pin: string, address: string) =>
  api.post(
    `/api/subscribers/${subscriberId}/redeem-card`,
    { pin },
    { token: admin, headers: { 'X-Forwarded-For': address } },
  );

const redeemInPortal = (pin: string, address: string) =>
  http(t.baseUrl, 'POST', '/portal/redeem', {
    rawBody: new URLSearchParams({ pin }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': address },
  });

/** How many answers had each status, e.g. `{ 400: 5, 429: 17 }`. */
function statuses(results: HttpResult[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of results) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

/** The failed tries recorded for a subscriber or an address, by reason. */
async function failures(where: { subscriberId?: number; address?: string }): Promise<Record<string, number>> {
  const rows = await t.db
    .select()
    .from(cardRedeemAttempts)
    .where(
      and(
        eq(cardRedeemAttempts.ok, false),
        where.subscriberId !== undefined ? eq(cardRedeemAttempts.subscriberId, where.subscriberId) : undefined,
        where.address !== undefined ? eq(cardRedeemAttempts.address, where.address) : undefined,
      ),
    );
  const out: Record<string, number> = {};
  for (const r of rows) out[r.reason ?? ''] = (out[r.reason ?? ''] ?? 0) + 1;
  return out;
}

const INVALID = 'invalid PIN';
const LOCKED = 'too many failed card attempts; a manager can lift the lockout';

describe('card PIN limits under concurrent bursts', () => {
  it('22 concurrent invalid PINs for one subscriber: 5 checked, 17 refused with 429; then its real PIN is 429', async () => {
    const sub = await mkSub();
    const card = await mkCard();
    const results = await Promise.all(Array.from({ length: 22 }, (_, i) => redeem(sub.id, guess(i), freshAddress())));
    expect(statuses(results)).toEqual({ 400: MAX_FAILS_SUBSCRIBER, 429: 22 - MAX_FAILS_SUBSCRIBER });
    expect(await failures({ subscriberId: sub.id })).toEqual({
      [INVALID]: MAX_FAILS_SUBSCRIBER,
      [LOCKED]: 22 - MAX_FAILS_SUBSCRIBER,
    });
    expect((await redeem(sub.id, card.pin, freshAddress())).status).toBe(429);
    expect((await t.db.select().from(cards).where(eq(cards.serial, card.serial)))[0].status).toBe('active');
  });

  it('64 concurrent invalid PINs from one address over 16 subscribers: 20 checked, 44 refused with 429', async () => {
    const subs = await Promise.all(Array.from({ length: 16 }, () => mkSub()));
    const address = freshAddress();
    const results = await Promise.all(
      Array.from({ length: 64 }, (_, i) => redeem(subs[i % 16].id, guess(1000 + i), address)),
    );
    expect(statuses(results)).toEqual({ 400: MAX_FAILS_ADDRESS, 429: 64 - MAX_FAILS_ADDRESS });
    expect(await failures({ address })).toEqual({ [INVALID]: MAX_FAILS_ADDRESS, [LOCKED]: 64 - MAX_FAILS_ADDRESS });
  });

  it("22 concurrent invalid PINs in the captive portal's form: 5 checked, 17 refused with 429", async () => {
    const sub = await mkSub();
    const address = freshAddress();
    await openSession(t, sub.username, address);
    const results = await Promise.all(Array.from({ length: 22 }, (_, i) => redeemInPortal(guess(2000 + i), address)));
    expect(statuses(results)).toEqual({ 400: MAX_FAILS_SUBSCRIBER, 429: 22 - MAX_FAILS_SUBSCRIBER });
    expect(results.find((r) => r.status === 429)?.text).toContain(LOCKED);
    expect(await failures({ subscriberId: sub.id })).toEqual({
      [INVALID]: MAX_FAILS_SUBSCRIBER,
      [LOCKED]: 22 - MAX_FAILS_SUBSCRIBER,
    });
  });

  it('20 concurrent redemptions of one valid card for one subscriber: one succeeds, the rest 409, none counted', async () => {
    const sub = await mkSub();
    const card = await mkCard();
    const address = freshAddress();
    const results = await Promise.all(Array.from({ length: 20 }, () => redeem(sub.id, card.pin, address)));
    expect(statuses(results)).toEqual({ 200: 1, 409: 19 });
    expect(await failures({ subscriberId: sub.id })).toEqual({ 'card already used': 19 });
    expect((await redeem(sub.id, guess(3000), address)).status).toBe(400);
  });
});
