/**
 * `npm run bench:accounting`: accounting ingest through a real FreeRADIUS (deploy/freeradius/run.sh,
 * rlm_sql with FreeRADIUS's stock PostgreSQL queries) into two databases on the same PostgreSQL,
 * in the same run:
 *   ours  - the billing schema with every trigger (is_online, daily usage, counters, fair use marks)
 *           and BENCH_ACCT subscribers with one open session each;
 *   stock - FreeRADIUS's own schema.sql (mods-config/sql/main/postgresql), no triggers, the same
 *           open sessions.
 * For each: one Access-Request per subscriber (PAP; ours: every row the subscribers service writes,
 * the plan's and its fair-use tiers' groups, the blocked group, a bound MAC; stock: the password, the
 * plan group and its replies), then one Interim-Update per session, then one Stop per session, sent
 * by our UDP sender
 * (npm `radius`, BENCH_ACCT_WINDOW requests in flight, 3 s timeout, 2 retransmissions) and, as a
 * cross-check of the sender, one radclient run (-p window) of the same Interim-Updates again.
 * In ours the usage rollup runs beside FreeRADIUS as the network-access unit runs it (every
 * BENCH_ACCT_ROLLUP_SECONDS, default the app's USAGE_ROLLUP_SECONDS of 5, on a connection of its own),
 * and once more when a phase's last packet is answered: its CPU is printed apart and in an all-in ratio.
 * Printed: packets/s, p50/p95 reply time, lost packets, PostgreSQL CPU per packet (the CPU time of
 * FreeRADIUS's backends, read from /proc), and the ratio ours/stock. Afterwards the usage in our
 * database is checked against the octets sent (every Interim-Update reflected).
 *
 * Environment (optional): DATABASE_URL (a server to create the two databases on; unset: an
 * embedded PostgreSQL in a scratch directory), BENCH_ACCT (100000 sessions), BENCH_ACCT_WINDOW (64),
 * BENCH_ACCT_ROLLUP_SECONDS (5), BENCH_ACCT_SLICES (4: each phase goes to the two sides in that many
 * parts of the sessions, alternating which side goes first, so the host's changing load is shared).
 * Needs Debian's freeradius, freeradius-postgresql and freeradius-utils; run as root or a member of
 * group freerad (the stock queries and schema live under /etc/freeradius).
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Client, Pool } from 'pg';
import radius from 'radius';
import { syncAccessRows, ntHash } from '../shared/access/radius-rows';
import { rollupUsage } from '../shared/access/usage-rollup';
import { intVar } from '../shared/config';
import { closeDatabase, db, initDatabase, pgPool, type Db } from '../shared/db/client';
import * as schema from '../shared/db/schema';
import { runMigrations, startEmbeddedPostgres } from '../shared/db/database-setup';
import { writePlanGroupReply } from '../shared/radius';
import { percentile } from './load';
import { backendCpu, cpuDelta } from './pg-cpu';
import { scratchDataDir, type ScratchDataDir } from './scratch';

const COUNT = intVar(process.env, 'BENCH_ACCT', 100_000, 1);
const WINDOW = intVar(process.env, 'BENCH_ACCT_WINDOW', 64, 1);
const ROLLUP_SECONDS = intVar(process.env, 'BENCH_ACCT_ROLLUP_SECONDS', 5, 1);
const ROLLUP_APP = 'bench-usage-rollup';
const SLICES = intVar(process.env, 'BENCH_ACCT_SLICES', 4, 1);
const SECRET = 'bench-acct-secret';
const NAS_IP = '127.0.0.1';
const ROOT = path.join(__dirname, '..', '..');
const RUN_SH = path.join(ROOT, 'deploy/freeradius/run.sh');
const STOCK_SCHEMA = [
  '/etc/freeradius/3.0/mods-config/sql/main/postgresql/schema.sql',
  '/etc/raddb/mods-config/sql/main/postgresql/schema.sql',
].find((f) => fs.existsSync(f));
/** What to undo on an interrupt: FreeRADIUS and the embedded PostgreSQL. */
const cleanup = new Set<() => Promise<void>>();

const username = (i: number) => `acct${i}@bench`;
const password = (i: number) => `pw-${i}`;
const mac = (i: number) =>
  ['02', '00', (i >> 24) & 255, (i >> 16) & 255, (i >> 8) & 255, i & 255]
    .map((b) => b.toString(16).toUpperCase().padStart(2, '0'))
    .join(':');
const sessionId = (i: number) => `s${i.toString(16).padStart(8, '0')}`;
/** deploy/freeradius/policy.conf's acct_unique for our packets (no NAS-Identifier, no NAS-Port). */
const uniqueId = (i: number) =>
  crypto
    .createHash('md5')
    .update(`${username(i)},${sessionId(i)},${NAS_IP},,ether1,`)
    .digest('hex');

async function q(url: string, text: string, params: unknown[] = []): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(text, params);
  } finally {
    await c.end();
  }
}

const withDb = (url: string, name: string) => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

async function seedOurs(url: string): Promise<void> {
  const pool = new Pool({ connectionString: url, max: 1 });
  try {
    await pool.query(`insert into nas (nasname, shortname, secret) values ($1, 'bench', $2)`, [NAS_IP, SECRET]);
    const {
      rows: [reseller],
    } = await pool.query<{ id: number }>(
      `insert into resellers (name, path, currency) values ('acct', '', 'USD') returning id`,
    );
    await pool.query(`update resellers set path = '/' || id || '/' where id = $1`, [reseller.id]);
    const {
      rows: [plan],
    } = await pool.query<{ id: number }>(
      `insert into services (name, price, currency, duration_days, daily_quota_gb, monthly_quota_gb, rate_limit,
                             pool_name, mac_binding, fup_tiers)
       values ('acct', 1000, 'USD', 30, 100, 1000, '10M/10M', 'bench-pool', true,
               '[{"level": 1, "threshold_gb": 50, "rate_limit": "2M/2M"}]') returning id`,
    );
    await pool.query(
      // usage_day today: the interims are not the day's first (287 of a day's 288 five-minute
      // interims are not), as in the steady state; the first of a day also moves usage_day (indexed).
      `insert into subscribers (username, password_enc, service_id, reseller_id, expiry_date, usage_day, mac_address)
       select 'acct' || g || '@bench', 'x', $1, $2, current_date + 30, (now() at time zone 'UTC')::date, m
         from unnest($3::text[]) with ordinality as t(m, o), lateral (select o - 1 as g) x`,
      [plan.id, reseller.id, Array.from({ length: COUNT }, (_, i) => mac(i))],
    );
    // The day's usage rows exist too (usage_day is today): the interims add to them.
    await pool.query(
      `insert into daily_usage (subscriber_id, date) select id, usage_day from subscribers where usage_day is not null`,
    );
    await seedAccessRows(url, plan.id);
    await insertSessions(pool);
    await pool.query('vacuum analyze');
  } finally {
    await pool.end();
  }
}

/**
 * Our FreeRADIUS rows, written by the code the subscribers and plans services use: the plan's group
 * (pool, rate) and its tier's, per subscriber the NT-Password, Calling-Station-Id and Expiration
 * radcheck rows and the plan group; the blocked group's rows are migration 0015's.
 */
async function seedAccessRows(url: string, planId: number): Promise<void> {
  initDatabase(url, 2);
  try {
    await writePlanGroupReply(db(), planId, {
      poolName: 'bench-pool',
      rateLimit: '10M/10M',
      fupTiers: [{ level: 1, threshold_gb: 50, rate_limit: '2M/2M' }],
    });
    const {
      rows: [first],
    } = await db().execute<{ id: number }>(sql`select min(id)::int as id from subscribers`);
    const today = new Date().toISOString().slice(0, 10);
    for (let from = 0; from < COUNT; from += 5000) {
      const n = Math.min(5000, COUNT - from);
      await syncAccessRows(
        db(),
        Array.from({ length: n }, (_, k) => first.id + from + k),
        today,
      );
      await insertPasswords(pgPool(), from, n);
    }
  } finally {
    await closeDatabase();
  }
}

/** NT-Password radcheck rows of users from..from+n-1, as the subscribers service writes them. */
async function insertPasswords(pool: Pool, from: number, n: number): Promise<void> {
  const ids = Array.from({ length: n }, (_, k) => from + k);
  const hashes = await Promise.all(ids.map((i) => ntHash(password(i))));
  await pool.query(
    `insert into radcheck (username, attribute, op, value)
     select u, 'NT-Password', ':=', h from unnest($1::text[], $2::text[]) as t(u, h)`,
    [ids.map(username), hashes],
  );
}

async function seedStock(url: string): Promise<void> {
  const pool = new Pool({ connectionString: url, max: 1 });
  try {
    await pool.query(fs.readFileSync(STOCK_SCHEMA!, 'utf8'));
    await pool.query(`insert into nas (nasname, shortname, secret) values ($1, 'bench', $2)`, [NAS_IP, SECRET]);
    // The same users as a stock deployment keeps them: the password, and a group for the plan.
    for (let from = 0; from < COUNT; from += 5000) await insertPasswords(pool, from, Math.min(5000, COUNT - from));
    await pool.query(
      `insert into radusergroup (username, groupname, priority) select 'acct' || g || '@bench', 'plan', 1
         from generate_series(0, $1 - 1) g`,
      [COUNT],
    );
    await pool.query(
      `insert into radgroupreply (groupname, attribute, op, value)
       values ('plan', 'Framed-Pool', '=', 'bench-pool'), ('plan', 'Mikrotik-Rate-Limit', '=', '10M/10M')`,
    );
    await insertSessions(pool);
    await pool.query('vacuum analyze');
  } finally {
    await pool.end();
  }
}

/** The open sessions, as FreeRADIUS's Start would have written them (same acctuniqueid). */
async function insertSessions(pool: Pool): Promise<void> {
  for (let from = 0; from < COUNT; from += 10_000) {
    const ids = Array.from({ length: Math.min(10_000, COUNT - from) }, (_, k) => from + k);
    await pool.query(
      `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, nasportid, acctstarttime, acctupdatetime,
                            acctinputoctets, acctoutputoctets, framedipaddress)
       select s, u, n, $4::inet, 'ether1', now() - interval '10 minutes', now() - interval '5 minutes', 0, 0,
              inet '100.64.0.0' + i
         from unnest($1::text[], $2::text[], $3::text[], $5::int[]) as t(s, u, n, i)`,
      [ids.map(sessionId), ids.map(uniqueId), ids.map(username), NAS_IP, ids],
    );
  }
}

async function freeUdpPort(): Promise<number> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function startRadius(
  url: string,
): Promise<{ proc: ChildProcess; acctPort: number; authPort: number; log: () => string }> {
  const acctPort = await freeUdpPort();
  const authPort = await freeUdpPort();
  let log = '';
  const proc = spawn(RUN_SH, [], {
    env: {
      ...process.env,
      DATABASE_URL: url,
      RADIUS_AUTH_PORT: String(authPort),
      RADIUS_ACCT_PORT: String(acctPort),
      RADIUS_LISTEN_ADDR: '127.0.0.1',
    },
  });
  proc.stdout!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
  proc.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
  const stop = () => stopRadius(proc);
  cleanup.add(stop);
  proc.once('exit', () => cleanup.delete(stop));
  await new Promise<void>((resolve, reject) => {
    const deadline = Date.now() + 30_000;
    const check = setInterval(() => {
      if (log.includes('Ready to process requests')) {
        clearInterval(check);
        resolve();
      } else if (proc.exitCode !== null || Date.now() > deadline) {
        clearInterval(check);
        reject(new Error(`freeradius did not start:\n${log.slice(-3000)}`));
      }
    }, 50);
  });
  return { proc, acctPort, authPort, log: () => log };
}

async function stopRadius(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await exited;
}

/** CPU seconds so far of FreeRADIUS's backends in `db` (PostgreSQL on this host; /proc). */
const radiusBackendCpu = (url: string, db: string) =>
  backendCpu(url, `datname = $1 and application_name ilike 'freeradius%'`, [db]);

interface SendResult {
  /** Access-Rejects (Access-Requests only; every one should be accepted). */
  rejected: number;
  seconds: number;
  rtts: number[];
  lost: number;
  retransmitted: number;
}

type Kind = 'Accounting-Request' | 'Access-Request';
/** Reply codes that answer each kind: Accounting-Response; Access-Accept, Access-Reject. */
const ANSWERS: Record<Kind, number[]> = { 'Accounting-Request': [5], 'Access-Request': [2, 3] };

/** Requests with up to WINDOW in flight on one socket per 256; per-request reply times. */

async function send(port: number, kind: Kind, packets: Record<string, string | number>[]): Promise<SendResult> {
  const sockets = Math.ceil(WINDOW / 256);
  const socks = await Promise.all(
    Array.from({ length: sockets }, async () => {
      const s = dgram.createSocket('udp4');
      await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
      return s;
    }),
  );
  const rtts: number[] = [];
  let lost = 0;
  let rejected = 0;
  let retransmitted = 0;
  let next = 0;
  const t0 = performance.now();
  await new Promise<void>((done) => {
    let active = 0;
    const pending = new Map<
      string,
      { buf: Buffer; sent: number; first: number; tries: number; timer: NodeJS.Timeout }
    >();
    // Every identifier of every socket, used in turn while at most WINDOW are in flight: an identifier
    // reused at once met FreeRADIUS still finishing the request it had just answered ("Received
    // conflicting packet ... Giving up on old request" in its log).
    const free: [number, number][] = [];
    for (let s = 0; s < sockets; s++) for (let id = 0; id < 256; id++) free.push([s, id]);
    const finish = (key: string) => {
      const p = pending.get(key)!;
      clearTimeout(p.timer);
      pending.delete(key);
      const [s, id] = key.split(':').map(Number);
      free.push([s, id]);
      active--;
      pump();
    };
    const arm = (key: string) => {
      const p = pending.get(key)!;
      p.timer = setTimeout(() => {
        if (p.tries >= 3) {
          lost++;
          finish(key);
          return;
        }
        p.tries++;
        retransmitted++;
        socks[Number(key.split(':')[0])].send(p.buf, port, '127.0.0.1');
        arm(key);
      }, 3000);
    };
    const pump = () => {
      while (active < WINDOW && next < packets.length) {
        const [s, id] = free.shift()!;
        const attrs = packets[next++];
        const buf = radius.encode({
          code: kind,
          identifier: id,
          secret: SECRET,
          attributes: Object.entries(attrs),
        });
        const key = `${s}:${id}`;
        const now = performance.now();
        pending.set(key, { buf, sent: now, first: now, tries: 1, timer: undefined as unknown as NodeJS.Timeout });
        active++;
        socks[s].send(buf, port, '127.0.0.1');
        arm(key);
      }
      if (active === 0 && next >= packets.length) done();
    };
    socks.forEach((sock, s) =>
      sock.on('message', (msg) => {
        const key = `${s}:${msg[1]}`;
        const p = pending.get(key);
        if (!p || !ANSWERS[kind].includes(msg[0])) return;
        if (msg[0] === 3) rejected++;
        rtts.push(performance.now() - p.first);
        finish(key);
      }),
    );
    pump();
  });
  const seconds = (performance.now() - t0) / 1000;
  for (const s of socks) s.close();
  rtts.sort((a, b) => a - b);
  return { seconds, rtts, lost, rejected, retransmitted };
}

/** radclient -f with -p WINDOW over the same packets; wall seconds. */
async function radclient(port: number, all: Record<string, string | number>[]): Promise<number | undefined> {
  // A cross-check of the sender, not the measure: radclient's -f -p mode slows to a crawl on tens of
  // thousands of packets, so it gets the first 1,000, and 60 s at most.
  const packets = all.slice(0, 1000);
  const bin = ['/usr/bin/radclient', '/usr/local/bin/radclient'].find((f) => fs.existsSync(f));
  if (!bin) return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-acct-'));
  const file = path.join(dir, 'packets');
  fs.writeFileSync(
    file,
    packets
      .map((p) =>
        Object.entries(p)
          .map(([k, v]) => `${k} = ${typeof v === 'number' ? v : JSON.stringify(v)}`)
          .join('\n'),
      )
      .join('\n\n'),
  );
  const t0 = performance.now();
  await new Promise<void>((resolve) =>
    execFile(
      bin,
      [
        '-q',
        '-s',
        '-r',
        '3',
        '-t',
        '3',
        '-p',
        String(Math.min(WINDOW, 255)),
        '-f',
        file,
        `127.0.0.1:${port}`,
        'acct',
        SECRET,
      ],
      { maxBuffer: 1 << 26, timeout: 60_000 },
      () => resolve(),
    ),
  );
  const seconds = (performance.now() - t0) / 1000;
  fs.rmSync(dir, { recursive: true, force: true });
  return seconds;
}

const base = (i: number) => ({
  'User-Name': username(i),
  'Acct-Session-Id': sessionId(i),
  'NAS-IP-Address': NAS_IP,
  'NAS-Port-Id': 'ether1',
  // The address the session was seeded with (inet '100.64.0.0' + i): past 65,535 sessions the
  // second octet moves too, else every interim of those sessions changed an indexed column.
  'Framed-IP-Address': `100.${64 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`,
});
const interim = (i: number, round: number) => ({
  ...base(i),
  'Acct-Status-Type': 'Interim-Update',
  'Acct-Session-Time': 300 * round,
  'Acct-Input-Octets': 1000 * round,
  'Acct-Output-Octets': 10_000 * round,
});
/** A PPPoE login as a MikroTik sends it: PAP, the client's MAC (bound in ours). */
const access = (i: number) => ({
  'User-Name': username(i),
  'User-Password': password(i),
  'NAS-IP-Address': NAS_IP,
  'NAS-Port-Id': 'ether1',
  'Calling-Station-Id': mac(i),
});
const stop = (i: number) => ({
  ...base(i),
  'Acct-Status-Type': 'Stop',
  'Acct-Session-Time': 900,
  'Acct-Input-Octets': 3000,
  'Acct-Output-Octets': 30_000,
  'Acct-Terminate-Cause': 'User-Request',
});

/**
 * The app's usage rollup on a timer, as the network-access unit runs it, on one connection named
 * ROLLUP_APP so its backend's CPU is read apart from FreeRADIUS's.
 */
class RollupLoop {
  private readonly pool: Pool;
  private readonly db: Db;
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  runs = 0;
  errors: string[] = [];

  constructor(private readonly url: string) {
    this.pool = new Pool({ connectionString: url, max: 1, application_name: ROLLUP_APP });
    this.db = drizzle(this.pool, { schema });
  }

  private tick(): Promise<unknown> {
    this.running = rollupUsage(this.db)
      .then(() => void this.runs++)
      .catch((err: Error) => void this.errors.push(err.message))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  start(): void {
    this.timer = setInterval(() => {
      if (!this.running) void this.tick();
    }, ROLLUP_SECONDS * 1000);
  }

  /** Stops the timer and applies what is left: the phase's packets are then all counted. */
  async drain(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    await this.tick();
  }

  cpu(): Promise<Map<number, number>> {
    return backendCpu(this.url, 'application_name = $1', [ROLLUP_APP]);
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

/** One slice of a phase sent to one side. */
interface Slice {
  packets: number;
  seconds: number;
  rtts: number[];
  lost: number;
  rejected: number;
  retransmitted: number;
  /** CPU seconds of FreeRADIUS's backends. */
  cpu: number;
  /** Ours: CPU seconds of the usage rollup for this slice's packets (its timer runs and the drain). */
  rollupCpu: number;
  rollupRuns: number;
}

/** A database with its FreeRADIUS, and (ours) the usage rollup beside it. */
interface Side {
  label: string;
  url: string;
  db: string;
  radius: Awaited<ReturnType<typeof startRadius>>;
  rollup?: RollupLoop;
}

async function sendSlice(side: Side, kind: Kind, packets: Record<string, string | number>[]): Promise<Slice> {
  const { rollup } = side;
  // The rollup's connection is open before the first reading, so its whole CPU is in the delta.
  await rollup?.drain();
  const before = await radiusBackendCpu(side.url, side.db);
  const rollupBefore = await rollup?.cpu();
  const runsBefore = rollup?.runs ?? 0;
  rollup?.start();
  const port = kind === 'Access-Request' ? side.radius.authPort : side.radius.acctPort;
  const r = await send(port, kind, packets);
  const after = await radiusBackendCpu(side.url, side.db);
  await rollup?.drain();
  const rollupAfter = await rollup?.cpu();
  return {
    packets: packets.length,
    seconds: r.seconds,
    rtts: r.rtts,
    lost: r.lost,
    rejected: r.rejected,
    retransmitted: r.retransmitted,
    cpu: cpuDelta(before, after),
    rollupCpu: rollupBefore && rollupAfter ? cpuDelta(rollupBefore, rollupAfter) : 0,
    rollupRuns: (rollup?.runs ?? 0) - runsBefore,
  };
}

interface Phase {
  packetsPerSecond: number;
  p50: number;
  p95: number;
  lost: number;
  rejected: number;
  retransmitted: number;
  cpuMsPerPacket: number;
  rollupMsPerPacket: number;
  rollupRuns: number;
}

function total(slices: Slice[]): Phase {
  const sum = (f: (s: Slice) => number) => slices.reduce((n, s) => n + f(s), 0);
  const packets = sum((s) => s.packets);
  const rtts = slices.flatMap((s) => s.rtts).sort((x, y) => x - y);
  return {
    packetsPerSecond: packets / sum((s) => s.seconds),
    p50: percentile(rtts, 50),
    p95: percentile(rtts, 95),
    lost: sum((s) => s.lost),
    rejected: sum((s) => s.rejected),
    retransmitted: sum((s) => s.retransmitted),
    cpuMsPerPacket: (sum((s) => s.cpu) * 1000) / packets,
    rollupMsPerPacket: (sum((s) => s.rollupCpu) * 1000) / packets,
    rollupRuns: sum((s) => s.rollupRuns),
  };
}

const fmt = (p: Phase) =>
  `${p.packetsPerSecond.toFixed(0)} packets/s, reply p50 ${p.p50.toFixed(1)} ms p95 ${p.p95.toFixed(1)} ms, lost ${p.lost}, ${p.rejected ? `REJECTED ${p.rejected}, ` : ''}retransmitted ${p.retransmitted}, PostgreSQL CPU ${p.cpuMsPerPacket.toFixed(3)} ms/packet` +
  (p.rollupRuns ? ` + usage rollup ${p.rollupMsPerPacket.toFixed(3)} ms/packet (${p.rollupRuns} runs)` : '');

/**
 * A phase in SLICES parts of the sessions: each part goes to both sides back to back, ours first
 * in even parts and stock first in odd ones, so a change in the host's load (it is shared) falls on
 * both sides alike. Prints each side's totals and each part's ratio of packets/s.
 */
async function alternate(
  name: string,
  [ours, stock]: [Side, Side],
  kind: Kind,
  packet: (i: number) => Record<string, string | number>,
): Promise<[Phase, Phase]> {
  const slices: [Slice[], Slice[]] = [[], []];
  const size = Math.ceil(COUNT / SLICES);
  for (let k = 0; k < SLICES; k++) {
    const ids = Array.from({ length: Math.min(size, COUNT - k * size) }, (_, j) => k * size + j);
    if (ids.length === 0) break;
    const packets = ids.map(packet);
    const order = k % 2 === 0 ? [0, 1] : [1, 0];
    for (const side of order) slices[side].push(await sendSlice(side === 0 ? ours : stock, kind, packets));
  }
  const phases: [Phase, Phase] = [total(slices[0]), total(slices[1])];
  console.log(`\n${name}`);
  console.log(`  ours:  ${fmt(phases[0])}`);
  console.log(`  stock: ${fmt(phases[1])}`);
  const parts = slices[0].map((a, k) =>
    (a.packets / a.seconds / (slices[1][k].packets / slices[1][k].seconds)).toFixed(2),
  );
  console.log(`  ours/stock packets/s by part (alternating order): ${parts.join(', ')}`);
  return phases;
}

async function startSide(label: string, url: string, db: string, withRollup: boolean): Promise<Side> {
  return { label, url, db, radius: await startRadius(url), rollup: withRollup ? new RollupLoop(url) : undefined };
}

async function stopSide(side: Side): Promise<void> {
  await side.rollup?.close();
  await stopRadius(side.radius.proc);
  const errors = side.radius
    .log()
    .split('\n')
    .filter((l) => /ERROR|No connections available|Discarding|conflicting/i.test(l));
  if (errors.length)
    console.log(
      `${side.label}: FreeRADIUS logged ${errors.length} error line(s), e.g. ${errors.slice(-2).join(' | ')}`,
    );
  if (side.rollup?.errors.length)
    console.log(
      `${side.label}: usage rollup FAILED ${side.rollup.errors.length} time(s), e.g. ${side.rollup.errors.at(-1)}`,
    );
}

async function crossCheck(side: Side): Promise<void> {
  const ids = Array.from({ length: COUNT }, (_, i) => i);
  const rc = await radclient(
    side.radius.acctPort,
    ids.map((i) => interim(i, 2)),
  );
  console.log(
    rc === undefined
      ? `  ${side.label}: radclient not found, no cross-check`
      : `  ${side.label}: radclient -p ${Math.min(WINDOW, 255)}, the first ${Math.min(COUNT, 1000)} Interim-Updates again (round 2): ${(Math.min(COUNT, 1000) / rc).toFixed(0)} packets/s`,
  );
}

const LABELS = { auth: 'Access-Request', interim: 'Interim-Update', stop: 'Stop' } as const;

async function main(): Promise<void> {
  if (!STOCK_SCHEMA)
    throw new Error(
      'FreeRADIUS postgresql schema.sql not found or unreadable: install freeradius-postgresql, run as root',
    );
  let serverUrl = process.env.DATABASE_URL;
  let embedded: { stop(): Promise<void> } | undefined;
  let dataDir: ScratchDataDir | undefined;
  const stamp = Date.now().toString(36);
  const ours = `bench_acct_ours_${stamp}`;
  const stock = `bench_acct_stock_${stamp}`;
  try {
    if (!serverUrl) {
      dataDir = scratchDataDir('acct');
      const handle = await startEmbeddedPostgres({ dataDir: dataDir.dir, log: () => undefined });
      embedded = handle;
      cleanup.add(() => handle.stop());
      serverUrl = handle.url;
    }
    await q(serverUrl, `create database "${ours}"`);
    await q(serverUrl, `create database "${stock}"`);
    const oursUrl = withDb(serverUrl, ours);
    await runMigrations(oursUrl);
    console.log(
      `${COUNT} sessions, ${WINDOW} requests in flight, ${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)}`,
    );
    const stockUrl = withDb(serverUrl, stock);
    for (const [label, url, seed] of [
      ['ours', oursUrl, seedOurs],
      ['stock', stockUrl, seedStock],
    ] as const) {
      const t0 = performance.now();
      await seed(url);
      console.log(`${label}: seeded ${COUNT} open sessions in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
    const sides: [Side, Side] = [
      await startSide('ours (billing schema, its triggers, the usage rollup)', oursUrl, ours, true),
      await startSide("stock (FreeRADIUS's schema.sql, no triggers)", stockUrl, stock, false),
    ];
    const a = { auth: {}, interim: {}, stop: {} } as Record<keyof typeof LABELS, Phase>;
    const b = { auth: {}, interim: {}, stop: {} } as Record<keyof typeof LABELS, Phase>;
    try {
      [a.auth, b.auth] = await alternate(LABELS.auth, sides, 'Access-Request', access);
      [a.interim, b.interim] = await alternate(LABELS.interim, sides, 'Accounting-Request', (i) => interim(i, 1));
      for (const side of sides) await crossCheck(side);
      [a.stop, b.stop] = await alternate(LABELS.stop, sides, 'Accounting-Request', stop);
    } finally {
      for (const side of sides) await stopSide(side);
    }
    // Every Interim-Update and Stop reflected in usage: 33,000 octets per session today.
    const c = new Client({ connectionString: oursUrl });
    await c.connect();
    // Which row updates avoided writing the indexes (HOT): what the fillfactors and the absence of
    // indexes on the columns an interim changes are for.
    const { rows: hot } = await c.query<{ relname: string; pct: string; n: string }>(
      `select relname, n_tup_upd::text as n, round(100.0 * n_tup_hot_upd / greatest(n_tup_upd, 1))::text as pct
         from pg_stat_user_tables where relname in ('radacct', 'subscribers', 'daily_usage') order by relname`,
    );
    const {
      rows: [u],
    } = await c.query<{ total: string; online: number }>(
      `select (select coalesce(sum(download_bytes + upload_bytes), 0) from daily_usage)::text as total,
              (select count(*)::int from subscribers where is_online) as online`,
    );
    await c.end();
    console.log(`\nours: HOT updates ${hot.map((h) => `${h.relname} ${h.pct}% of ${h.n}`).join(', ')}`);
    console.log(
      `ours: usage recorded ${u.total} octets of ${COUNT * 33_000} sent (${BigInt(u.total) === BigInt(COUNT * 33_000) ? 'every packet reflected' : 'MISMATCH'}); ${u.online} still online`,
    );
    const ratio = (f: (p: Phase) => number) =>
      (['auth', 'interim', 'stop'] as const).map((k) => `${LABELS[k]} ${(f(a[k]) / f(b[k])).toFixed(2)}`).join(', ');
    console.log(`ratio ours/stock, packets/s: ${ratio((p) => p.packetsPerSecond)}`);
    console.log(`PostgreSQL CPU per packet, ours/stock: ${ratio((p) => p.cpuMsPerPacket)}`);
    console.log(
      `PostgreSQL CPU per packet with the usage rollup, ours/stock: ${ratio((p) => p.cpuMsPerPacket + p.rollupMsPerPacket)}`,
    );
  } finally {
    if (serverUrl && process.env.BENCH_KEEP !== '1') {
      for (const name of [ours, stock])
        await q(serverUrl, `drop database if exists "${name}" with (force)`).catch(() => undefined);
    }
    await embedded?.stop();
    dataDir?.dispose();
  }
}

// Ctrl-C: the finally blocks above drop the databases and stop the embedded PostgreSQL.
let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    cleanup.forEach((f) => void f());
    setTimeout(() => process.exit(130), 5000);
  });

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
