/**
 * `npm run test:containers` (not part of jest's run; docs/containers.md): builds the images,
 * starts the container stack (scripts/containers.ts) with three pdf-renderers and two
 * network-access containers on free ports, and once `/health` answers 200 calls everything at once:
 * login, settings, plan, reseller, access server, subscriber, renewal, invoice, payment, PDF,
 * public page, then an online subscriber (FreeRADIUS accounting, sent with radclient) deactivated:
 * its Disconnect-Request must reach a NAS simulator on loopback. Then the faults: one pdf-renderer
 * container killed (SIGKILL) during renders (each caller gets its PDF or a clean 503, none hangs),
 * one network-access container killed while disconnects are pending in the outbox (every
 * acknowledged deactivation still reaches the NAS, once, and every outbox row ends published), and
 * renders spread over the three renderers (each one's own metrics, read over the bus). Before the
 * faults, pgBackRest: a full backup, payments, a restore to a timestamp between them beside the
 * live database (the payments before it there, the ones after it not). Prints the
 * seconds of each step and the image sizes; exits non-zero on any failure.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import { ServiceBroker } from 'moleculer';
import { Pool } from 'pg';
import { freePort } from '../../runtime/cluster';
import { buildImages, startStack, waitForHealth, type Stack } from '../../scripts/containers';
import { NasSimulator } from '../sim/nas-simulator';
import { check, docker, printSteps, stepper, waitUntil, type Step } from './steps';

const ADMIN = { username: 'stack-admin', password: 'stack-admin-pw' };
const NAS_SECRET = 'stack-nas-secret';
const steps: Step[] = [];
const step = stepper('[test:containers]', steps);
const log: string[] = [];
let nasLatency = 2;

function containersOf(project: string, service: string): string[] {
  return docker([
    'ps',
    '-q',
    '--filter',
    `label=com.docker.compose.project=${project}`,
    '--filter',
    `label=com.docker.compose.service=${service}`,
  ])
    .split('\n')
    .filter(Boolean);
}

interface Api {
  (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any -- arbitrary JSON answers
}

function apiOf(base: string, token?: string): Api {
  return async (method, path, body) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(40_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON (a PDF, the console page)
    }
    return { status: res.status, body: parsed };
  };
}

function ok<T extends { status: number; body: unknown }>(res: T, status: number, what: string): T {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  return res;
}

function radclient(port: number, kind: 'auth' | 'acct', attrs: string): string {
  const r = spawnSync('radclient', ['-r', '2', '-t', '3', `127.0.0.1:${port}`, kind, NAS_SECRET], {
    input: attrs,
    encoding: 'utf8',
  });
  return `${r.stdout}${r.stderr}`;
}

async function main(): Promise<void> {
  const total = Date.now();
  check(spawnSync('radclient', ['-v']).status !== null, 'radclient installed (apt-get install freeradius-utils)');
  const project = `isp-billing-test-${crypto.randomBytes(3).toString('hex')}`;
  const [port, pgPort, natsPort, authPort, acctPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    COMPOSE_PROJECT_NAME: project,
    NAMESPACE: project,
    PORT: String(port),
    PG_PORT: String(pgPort),
    NATS_PORT: String(natsPort),
    RADIUS_AUTH_PORT: String(authPort),
    RADIUS_ACCT_PORT: String(acctPort),
    JWT_SECRET: crypto.randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: crypto.randomBytes(32).toString('hex'),
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    PDF_RENDERERS: '3',
    NETWORK_ACCESS_REPLICAS: '2',
    // Every render reaches a renderer (no shared PDF store), and an event a killed consumer took is
    // published again after 10 s instead of 2 minutes.
    PDF_CACHE_MAX_MB: '0',
    OUTBOX_REDELIVER_SECONDS: '10',
    LOG_LEVEL: 'warn',
  };

  if (process.env.CONTAINERS_BUILD !== '0') await step('build images', () => buildImages(env));
  const sizes = docker(['image', 'ls', '--format', '{{.Repository}}:{{.Tag}} {{.Size}}'])
    .split('\n')
    .filter((l) => /^isp-billing[a-z-]*:(local|trixie) /.test(l))
    .sort();

  let stack: Stack | undefined;
  let nas: NasSimulator | undefined;
  let observer: ServiceBroker | undefined;
  let db: Pool | undefined;
  try {
    stack = startStack({ env, output: (line) => log.push(line) });
    const s = stack;
    await step('start the stack until /health is 200', () => waitForHealth(s.baseUrl, 300_000, s.up));
    const base = s.baseUrl;
    db = new Pool({ connectionString: `postgres://billing:billing@127.0.0.1:${pgPort}/billing`, max: 4 });

    // ------------------------------------------------------------ everything at once
    const anon = apiOf(base);
    const first = await step(
      'first calls at once (login x4, openapi, console, liveness)',
      () =>
        Promise.all([
          ...Array.from({ length: 4 }, () => anon('POST', '/api/auth/login', ADMIN)),
          anon('GET', '/api/openapi.json'),
          anon('GET', '/'),
          anon('GET', '/health/live'),
        ]),
      (r) => r.map((x) => x.status).join(' '),
    );
    for (const r of first) check(r.status === 200, `first call answered ${r.status}`);
    const token = first[0].body.data.token as string;
    const api = apiOf(base, token);

    nas = await new NasSimulator({ secret: NAS_SECRET, host: '127.0.0.1', latencyMs: () => nasLatency }).start();
    const nasPort = nas.port;
    const [, plan, reseller, nasRow, invoicesList] = await step(
      'settings, plan, reseller, access server, lists at once',
      () =>
        Promise.all([
          api('PUT', '/api/settings', { currency: 'USD', default_tax_rate: 5, operator_name: 'Stack' }).then((r) =>
            ok(r, 200, 'settings'),
          ),
          api('POST', '/api/services', { name: 'Home 20M', price: 20, duration_days: 30, rate_limit: '20M/20M' }).then(
            (r) => ok(r, 201, 'plan'),
          ),
          api('POST', '/api/resellers', { name: 'North shop', balance: 1000 }).then((r) => ok(r, 201, 'reseller')),
          api('POST', '/api/nas', {
            name: 'stack-edge',
            ip_address: '127.0.0.1',
            secret: NAS_SECRET,
            coa_port: nasPort,
          }).then((r) => ok(r, 201, 'nas')),
          api('GET', '/api/invoices').then((r) => ok(r, 200, 'invoice list')),
          api('GET', '/api/subscribers').then((r) => ok(r, 200, 'subscriber list')),
        ]),
    );
    void nasRow;
    void invoicesList;
    const planId = plan.body.data.id;
    const resellerId = reseller.body.data.id;

    const flow = await step('subscriber, renewal, invoice, payment, PDF, public page', async () => {
      ok(
        await api('POST', `/api/resellers/${resellerId}/service-limits`, { service_id: planId, max_subscribers: 100 }),
        200,
        'limit',
      );
      const sub = ok(
        await api('POST', '/api/subscribers', {
          username: 'flow@isp',
          password: 'pppoe-pw',
          service_id: planId,
          reseller_id: resellerId,
        }),
        201,
        'subscriber',
      ).body.data;
      ok(await api('POST', `/api/subscribers/${sub.id}/renew`), 200, 'renew');
      const inv = ok(
        await api('POST', '/api/invoices', {
          subscriber_id: sub.id,
          items: [{ description: 'Router', qty: 1, unit_price: 100 }],
        }),
        201,
        'invoice',
      ).body.data;
      ok(await api('POST', `/api/invoices/${inv.id}/payment`, { amount: 40, method: 'cash' }), 200, 'payment');
      const after = ok(await api('GET', `/api/invoices/${inv.id}`), 200, 'invoice').body.data;
      check(after.paid_amount === 40 && after.status === 'partial', `invoice after payment: ${JSON.stringify(after)}`);
      const pdf = await fetch(`${base}/api/invoices/${inv.id}/pdf`, { headers: { authorization: `Bearer ${token}` } });
      const bytes = Buffer.from(await pdf.arrayBuffer());
      check(pdf.status === 200 && bytes.subarray(0, 5).toString() === '%PDF-', `PDF: ${pdf.status}`);
      const link = after.public_url ?? after.public_link;
      if (typeof link === 'string') {
        const pub = await fetch(link.replace(/^https?:\/\/[^/]+/, base));
        check(pub.status === 200, `public page ${pub.status}`);
      }
      return { subscriberId: sub.id as number, invoiceId: inv.id as number, pdfBytes: bytes.length };
    });

    await step('online via FreeRADIUS, deactivated: the Disconnect-Request reaches the NAS', async () => {
      // FreeRADIUS reads its clients (the nas table) at start: restart it now that the NAS exists.
      await s.compose(['restart', '-t', '5', 'freeradius']);
      const accepted = await waitUntil(
        'FreeRADIUS Access-Accept',
        async () => {
          const out = radclient(authPort, 'auth', 'User-Name=flow@isp,User-Password=pppoe-pw');
          return /Access-Accept/.test(out) && out;
        },
        60_000,
      );
      void accepted;
      const acct = radclient(
        acctPort,
        'acct',
        'User-Name=flow@isp,Acct-Status-Type=Start,Acct-Session-Id=stack-sess-1,NAS-IP-Address=127.0.0.1,Framed-IP-Address=100.64.7.7',
      );
      check(/Accounting-Response/.test(acct), `accounting start answered: ${acct}`);
      await waitUntil('subscriber online', async () => {
        const r = await api('GET', `/api/subscribers/${flow.subscriberId}`);
        return r.body.data?.is_online === true;
      });
      ok(await api('POST', `/api/subscribers/${flow.subscriberId}/deactivate`), 200, 'deactivate');
      await waitUntil('Disconnect-Request at the NAS', async () =>
        nas!.requests.some((r) => r.userName === 'flow@isp' && r.code === 'Disconnect-Request'),
      );
      const seen = nas!.requests.filter((r) => r.userName === 'flow@isp');
      check(
        seen.length === 1 && seen[0].acctSessionId === 'stack-sess-1' && seen[0].framedIp === '100.64.7.7',
        JSON.stringify(seen),
      );
    });

    // ------------------------------------------------------------ pgBackRest: a restore to a point in time
    await step(
      'pgBackRest: full backup, payments, restore to a timestamp beside the live database',
      async () => {
        const [pg] = containersOf(project, 'postgres');
        const sh = (script: string) => docker(['exec', '-e', 'PGPASSWORD=billing', pg, 'sh', '-c', script]);
        // The entrypoint creates the stanza once the server answers; `check` also proves archiving works.
        await waitUntil('pgbackrest check', async () => (sh('pgbackrest --stanza=billing check'), true), 60_000);
        sh('pgbackrest --stanza=billing --type=full backup');
        // pgBackRest keeps a backup's stop time in whole seconds and restores to a time only from a
        // backup that stopped before it: a target in the backup's own second finds no backup.
        await new Promise((r) => setTimeout(r, 1_500));
        const payOne = async (): Promise<number> => {
          const key = crypto.randomUUID();
          for (let attempt = 1; ; attempt++) {
            try {
              const res = await fetch(`${base}/api/invoices/${flow.invoiceId}/payment`, {
                method: 'POST',
                headers: {
                  'content-type': 'application/json',
                  authorization: `Bearer ${token}`,
                  'idempotency-key': key,
                },
                body: JSON.stringify({ amount: 1, method: 'cash' }),
                signal: AbortSignal.timeout(40_000),
              });
              const body = (await res.json()) as { data: { transaction_id: number } };
              check(res.status === 200, `payment ${res.status} ${JSON.stringify(body)}`);
              return body.data.transaction_id;
            } catch (err) {
              // fetch's TypeError: a keep-alive connection the gateway closed as the request went out;
              // the same Idempotency-Key makes the repeat safe.
              if (attempt >= 3 || !(err instanceof TypeError)) throw err;
            }
          }
        };
        const before = [await payOne(), await payOne(), await payOne()];
        const { rows } = await db!.query<{ t: string }>('select clock_timestamp()::text as t');
        const target = rows[0].t;
        await new Promise((r) => setTimeout(r, 1000));
        const after = [await payOne(), await payOne(), await payOne()];
        sh('pgbackrest --stanza=billing check'); // switches WAL and waits until the segment is archived
        const pitrPort = await freePort();
        const dir = '/var/lib/postgresql/pitr';
        sh(
          `rm -rf ${dir} && mkdir -m 700 ${dir} && pgbackrest --stanza=billing --pg1-path=${dir} --type=time "--target=${target}" --target-action=promote restore`,
        );
        sh(
          `$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/pg_ctl -D ${dir} -l /tmp/pitr.log -w -t 120 ` +
            `-o "-p ${pitrPort} -c listen_addresses=127.0.0.1 -c unix_socket_directories=/tmp -c max_connections=300 -c archive_mode=off" start`,
        );
        const restored = new Pool({
          connectionString: `postgres://billing:billing@127.0.0.1:${pitrPort}/billing`,
          max: 1,
        });
        try {
          await waitUntil('the restored server promoted', async () => {
            const r = await restored.query<{ r: boolean }>('select pg_is_in_recovery() as r');
            return !r.rows[0].r;
          });
          const found = await restored.query<{ id: number }>(
            'select id from transactions where id = any($1::bigint[])',
            [[...before, ...after]],
          );
          const ids = new Set(found.rows.map((r) => Number(r.id)));
          check(
            before.every((id) => ids.has(id)),
            `payments before ${target} restored: ${[...ids].join(', ')}`,
          );
          check(
            after.every((id) => !ids.has(id)),
            `payments after ${target} not restored: ${[...ids].join(', ')}`,
          );
        } finally {
          await restored.end().catch(() => undefined);
          sh(
            `$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/pg_ctl -D ${dir} -m immediate stop; rm -rf ${dir}`,
          );
        }
        return target;
      },
      (target) => `restored to ${target}: the 3 payments before it there, the 3 after it not`,
    );

    // ------------------------------------------------------------ fault: a pdf-renderer killed mid-load
    const papers = ['A4', 'A5', 'Letter', 'Legal', 'B5', 'Receipt80', 'Receipt58', 'A4', 'A5', 'Letter', 'B5', 'A4'];
    await step(
      'kill one pdf-renderer (SIGKILL) during 24 renders',
      async () => {
        const renderers = containersOf(project, 'pdf-renderer');
        check(renderers.length === 3, `three pdf-renderer containers (${renderers.length})`);
        const started = Date.now();
        const renders = Array.from({ length: 24 }, (_, i) =>
          fetch(`${base}/api/invoices/${flow.invoiceId}/pdf?paper=${papers[i % papers.length]}`, {
            headers: { authorization: `Bearer ${token}` },
            signal: AbortSignal.timeout(40_000),
          }).then(async (r) => ({
            status: r.status,
            body: Buffer.from(await r.arrayBuffer()),
            seconds: (Date.now() - started) / 1000,
          })),
        );
        await new Promise((r) => setTimeout(r, 300));
        docker(['kill', '-s', 'KILL', renderers[0]]);
        const results = await Promise.all(renders);
        for (const r of results) {
          const pdf = r.status === 200 && r.body.subarray(0, 5).toString() === '%PDF-';
          // A clean failure: 503 (no renderer left to retry on) or 504 (the render deadline, on a starved CPU).
          const clean = (r.status === 503 || r.status === 504) && JSON.parse(r.body.toString()).success === false;
          check(pdf || clean, `render answered ${r.status} ${r.body.subarray(0, 80).toString()}`);
          check(r.seconds < 35, `a render took ${r.seconds} s`);
        }
        docker(['start', renderers[0]]);
        return results;
      },
      (rs) =>
        `${rs.filter((r) => r.status === 200).length} PDFs, ${rs.filter((r) => r.status !== 200).length} clean 503/504, slowest ${Math.max(...rs.map((r) => r.seconds)).toFixed(1)} s`,
    );
    ok(await api('GET', `/api/invoices/${flow.invoiceId}`), 200, 'the flow goes on after the renderer was killed');

    // ------------------------------------------------------------ fault: network-access killed, outbox pending
    const COUNT = 20;
    await step(
      `kill one network-access (SIGKILL) with ${COUNT} disconnects pending`,
      async () => {
        const users = await Promise.all(
          Array.from({ length: COUNT }, async (_, i) => {
            const sub = ok(
              await api('POST', '/api/subscribers', {
                username: `bulk${i}@isp`,
                password: 'pppoe-pw',
                service_id: planId,
                reseller_id: resellerId,
              }),
              201,
              `subscriber ${i}`,
            ).body.data;
            await db!.query(
              `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, framedipaddress, acctstarttime, acctupdatetime)
               values ($1, $2, $3, '127.0.0.1', $4, now() - interval '1 hour', now())`,
              [`bulk-sess-${i}`, `u-bulk-sess-${i}-${project}`, `bulk${i}@isp`, `100.64.8.${i + 1}`],
            );
            return { id: sub.id as number, username: `bulk${i}@isp` };
          }),
        );
        // A slow NAS (3 s) keeps the events in flight when the container dies: it is killed as soon
        // as the first Disconnect-Request arrives, while the others are still being relayed.
        nasLatency = 3_000;
        const accessors = containersOf(project, 'network-access');
        check(accessors.length === 2, `two network-access containers (${accessors.length})`);
        const acking = Promise.all(
          users.map((u) =>
            api('POST', `/api/subscribers/${u.id}/deactivate`).then((r) => ({ ...u, status: r.status })),
          ),
        );
        await waitUntil('a first Disconnect-Request', async () =>
          nas!.requests.some((r) => r.userName.startsWith('bulk')),
        );
        docker(['kill', '-s', 'KILL', accessors[0]]);
        const pendingAtKill = Number(
          (
            await db!.query(
              `select count(*) from outbox o where o.event = 'subscriber.disconnect'
                 and not exists (select 1 from processed_events p where p.event_id = o.id)`,
            )
          ).rows[0].count,
        );
        const seenAtKill = new Set(nas!.requests.filter((r) => r.userName.startsWith('bulk')).map((r) => r.userName))
          .size;
        const acked = await acking;
        const acknowledged = acked.filter((a) => a.status === 200);
        check(acknowledged.length === COUNT, `deactivations acknowledged: ${acked.map((a) => a.status).join(' ')}`);
        nasLatency = 2;
        await waitUntil(
          'every acknowledged deactivation at the NAS',
          async () => {
            const seen = new Set(nas!.requests.map((r) => r.userName));
            return acknowledged.every((a) => seen.has(a.username));
          },
          90_000,
        );
        await waitUntil(
          'every outbox row published and processed',
          async () => {
            const { rows } = await db!.query(
              `select count(*) from outbox o where o.published_at is null
                or not exists (select 1 from processed_events p where p.event_id = o.id)`,
            );
            return Number(rows[0].count) === 0;
          },
          90_000,
        );
        const perUser = acknowledged.map(
          (a) => nas!.requests.filter((r) => r.userName === a.username && r.code === 'Disconnect-Request').length,
        );
        docker(['start', accessors[0]]);
        return { pendingAtKill, seenAtKill, perUser };
      },
      (r) =>
        `at the kill: ${r.seenAtKill}/${COUNT} at the NAS, ${r.pendingAtKill} disconnect events not yet processed; after: ${COUNT}/${COUNT} at the NAS (Disconnect-Requests per user: ${[...new Set(r.perUser)].sort().join(' or ')}), every event published and processed`,
    );

    // ------------------------------------------------------------ scale: renders spread over three renderers
    await step(
      'renders spread over the three pdf-renderers',
      async () => {
        observer = new ServiceBroker({
          namespace: project,
          nodeID: `${project}-observer`,
          transporter: `nats://127.0.0.1:${natsPort}`,
          logger: false,
        });
        await observer.start();
        const renderNodes = async () => {
          const nodes = await observer!.call<
            { id: string; available: boolean; services?: { name: string }[] }[],
            { onlyAvailable: boolean; withServices: boolean }
          >('$node.list', { onlyAvailable: true, withServices: true });
          return nodes.filter((n) => n.services?.some((x) => x.name === 'pdf-renderer')).map((n) => n.id);
        };
        await waitUntil('three renderer nodes', async () => (await renderNodes()).length === 3, 90_000);
        const ids = await renderNodes();
        const counts = async () =>
          Object.fromEntries(
            await Promise.all(
              ids.map(async (id) => {
                const metrics = await observer!.call<
                  { name: string; values: { value: number; metricName?: string }[] }[],
                  Record<string, never>
                >('node-metrics.snapshot', {}, { nodeID: id });
                const m = metrics.find((x) => x.name === 'pdf_render_duration_seconds');
                const n = (m?.values ?? [])
                  .filter((v) => v.metricName === 'pdf_render_duration_seconds_count')
                  .reduce((a, v) => a + v.value, 0);
                return [id, n] as const;
              }),
            ),
          );
        const before = await counts();
        for (let round = 0; round < 4; round++) {
          const rs = await Promise.all(
            Array.from({ length: 12 }, (_, i) =>
              fetch(`${base}/api/invoices/${flow.invoiceId}/pdf?paper=${papers[i % papers.length]}`, {
                headers: { authorization: `Bearer ${token}` },
              }).then((r) => r.status),
            ),
          );
          check(
            rs.every((st) => st === 200),
            `renders: ${rs.join(' ')}`,
          );
        }
        const after = await counts();
        const per = ids.map((id) => after[id] - (before[id] ?? 0));
        check(
          per.every((n) => n > 0),
          `renders per renderer: ${per.join(', ')}`,
        );
        return per;
      },
      (per) => `48 renders: ${per.join(' + ')} per renderer`,
    );
  } catch (err) {
    console.error(`[test:containers] FAILED: ${(err as Error).stack ?? err}`);
    console.error(`[test:containers] last lines of docker-compose:\n${log.slice(-60).join('\n')}`);
    // The gateway's and billing's timeouts fill the last lines; what the renderers said is told apart.
    console.error(
      `[test:containers] last lines of the pdf-renderers:\n${log
        .filter((l) => l.includes('pdf-renderer'))
        .slice(-30)
        .join('\n')}`,
    );
    process.exitCode = 1;
  } finally {
    await observer?.stop().catch(() => undefined);
    await db?.end().catch(() => undefined);
    await nas?.stop();
    if (stack) {
      const s = stack;
      await step('stop and remove the containers (SIGTERM drain)', () => s.down(true)).catch((err) => {
        console.error(err);
        process.exitCode = 1;
      });
    }
  }
  console.log('\n[test:containers] images');
  for (const line of sizes) console.log(`  ${line}`);
  printSteps('[test:containers]', steps);
  console.log(
    `[test:containers] ${process.exitCode ? 'FAILED' : 'passed'} in ${((Date.now() - total) / 1000).toFixed(0)} s`,
  );
}

void main();
