/**
 * Readiness that means ready (issue 25), black-box: the six units as separate processes
 * (runtime/cluster.ts), a client hammering the gateway from the moment it listens. `/health`
 * answers 503 until the gateway can serve every route of the installation, then 200 for good; a
 * route whose unit has not announced itself yet answers 503 with `Retry-After`, never 404; and no
 * request sent after the first 200 of `/health` meets a 503.
 */
import { createTestDatabase } from '../helpers/app';
import { freePort, type Cluster } from '../../runtime/cluster';
import { startTestCluster } from './cluster-harness';
import { suiteTransporter } from '../helpers/transporter';

jest.setTimeout(240_000);

const { transporter, label } = suiteTransporter({ transporter: '', name: "Moleculer's loopback TCP transporter" });

interface Seen {
  sentAt: number;
  path: string;
  status: number;
  retryAfter: string | null;
}

/** One route of each unit, with a bad token (401 once the route is known) or a wrong password. */
const PROBES: { method: string; path: string; body?: unknown; unit: string }[] = [
  {
    method: 'POST',
    path: '/api/auth/login',
    body: { username: 'nobody', password: 'wrong-pw-1' },
    unit: 'subscribers',
  },
  { method: 'GET', path: '/api/subscribers', unit: 'subscribers' },
  { method: 'GET', path: '/api/invoices', unit: 'billing' },
  { method: 'GET', path: '/api/invoices/7/pdf', unit: 'billing' },
  { method: 'GET', path: '/api/nas', unit: 'network-access' },
  { method: 'GET', path: '/api/subscribers/3/bandwidth', unit: 'network-access' },
];

let cluster: (Cluster & { log: string[] }) | undefined;

afterAll(async () => {
  await cluster?.stop(10_000);
});

it(`answers /health 200 only once every route is served, and 503 (never 404) before, over ${label}`, async () => {
  const databaseUrl = await createTestDatabase();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const seen: Seen[] = [];
  let hammering = true;

  const call = async (method: string, path: string, body?: unknown) => {
    const sentAt = Date.now();
    try {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: 'Bearer not-a-token', 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      await res.arrayBuffer();
      seen.push({ sentAt, path, status: res.status, retryAfter: res.headers.get('retry-after') });
    } catch {
      // Not listening yet.
    }
  };
  const hammer = (async () => {
    while (hammering) {
      await Promise.all([call('GET', '/health'), ...PROBES.map((p) => call(p.method, p.path, p.body))]);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();

  cluster = await startTestCluster(databaseUrl, {
    TRANSPORTER: transporter,
    PORT: String(port),
    RATE_LIMIT_PER_MIN: '1000000',
    PUBLIC_RATE_LIMIT_PER_MIN: '1000000',
    // The login probe is a wrong password sent hundreds of times: the sign-in limits (429) are
    // tested in sign-in-limits.test.ts, not here.
    LOGIN_FAILURES_PER_USERNAME: '1000000',
    LOGIN_FAILURES_PER_ADDRESS: '1000000',
  });
  // A few more rounds once the cluster says it is up, and at least three after the first 200 of
  // /health: on a loaded machine one round can take longer than the 1.5 s, and the checks below
  // need answers sent after readiness.
  const upAt = Date.now();
  const healthyRounds = () => seen.filter((s) => s.path === '/health' && s.status === 200).length;
  while (Date.now() - upAt < 1_500 || (healthyRounds() < 3 && Date.now() - upAt < 60_000)) {
    await new Promise((r) => setTimeout(r, 100));
  }
  hammering = false;
  await hammer;

  const health = seen.filter((s) => s.path === '/health').sort((a, b) => a.sentAt - b.sentAt);
  const firstOk = health.find((s) => s.status === 200);
  expect(firstOk).toBeDefined();
  const summary = (list: Seen[]) => [...new Set(list.map((s) => `${s.path} ${s.status}`))].sort();

  // Nothing ever said the API had no such route.
  expect(seen.filter((s) => s.status === 404).map((s) => s.path)).toEqual([]);
  // The gateway listened before it was ready, and said so.
  const early = seen.filter((s) => s.sentAt < firstOk!.sentAt);
  expect(early.filter((s) => s.path === '/health').length).toBeGreaterThan(0);
  expect(summary(early.filter((s) => s.path === '/health'))).toEqual(['/health 503']);
  // Before readiness a route is either already served (401: bad token, wrong password) or 503 with Retry-After.
  for (const s of early.filter((x) => x.path !== '/health')) {
    expect([401, 503]).toContain(s.status);
    if (s.status === 503) expect(s.retryAfter).toBe('2');
  }
  // From the first 200 on: readiness stays, and every route of every unit is served.
  const late = seen.filter((s) => s.sentAt > firstOk!.sentAt);
  expect(summary(late.filter((s) => s.path === '/health'))).toEqual(['/health 200']);
  expect(summary(late.filter((s) => s.path !== '/health'))).toEqual(
    [...new Set(PROBES.map((p) => `${p.path} 401`))].sort(),
  );
  console.log(
    `readiness: ${early.length} answers before the first 200 of /health (${summary(early).join(', ')}), ${late.length} after`,
  );
});
