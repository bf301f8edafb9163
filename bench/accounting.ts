/**
 * `npm run bench:accounting`: accounting ingest through a real FreeRADIUS (deploy/freeradius/run.sh,
 * rlm_sql with FreeRADIUS's stock PostgreSQL queries) into two databases on the same PostgreSQL,
 * in the same run:
 *   ours  - the billing schema with every trigger (is_online, daily usage, counters, fair use marks)
 *           and BENCH_ACCT subscribers with one open session each;
 *   stock - FreeRADIUS's own schema.sql (mods-config/sql/main/postgresql), no triggers, the same
 *           open sessions.
 * For each: one Interim-Update per session, then one Stop per session, sent by our UDP sender
 * (npm `radius`, BENCH_ACCT_WINDOW requests in flight, 3 s timeout, 2 retransmissions) and, as a
 * cross-check of the sender, one radclient run (-p window) of the same Interim-Updates again.
 * Printed: packets/s, p50/p95 reply time, lost packets, PostgreSQL CPU per packet (the CPU time of
 * FreeRADIUS's backends, read from /proc), and the ratio ours/stock. Afterwards the usage in our
 * database is checked against the octets sent (every Interim-Update reflected).
 *
 * Environment (optional): DATABASE_URL (a server to create the two databases on; unset: an
 * embedded PostgreSQL in a scratch directory), BENCH_ACCT (100000 sessions), BENCH_ACCT_WINDOW (64).
 * Needs Debian's freeradius, freeradius-postgresql and freeradius-utils; run as root or a member of
 * group freerad (the stock queries and schema live under /etc/freeradius).
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Pool } from 'pg';
import radius from 'radius';
import { intVar } from '../shared/config';
import { runMigrations, startEmbeddedPostgres } from '../shared/db/database-setup';
import { percentile } from './load';
import { scratchDataDir, type ScratchDataDir } from './scratch';

const COUNT = intVar(process.env, 'BENCH_ACCT', 100_000, 1);
const WINDOW = intVar(process.env, 'BENCH_ACCT_WINDOW', 64, 1);
const SECRET = 'bench-acct-secret';
const NAS_IP = '127.0.0.1';
const ROOT = path.join(__dirname, '..', '..');
const RUN_SH = path.join(ROOT, 'deploy/freeradius/run.sh');
const STOCK_SCHEMA = [
  '/etc/freeradius/3.0/mods-config/sql/main/postgresql/schema.sql',
  '/etc/raddb/mods-config/sql/main/postgresql/schema.sql',
].find((f) => fs.existsSync(f));
const CLK_TCK = 100;
/** What to undo on an interrupt: FreeRADIUS and the embedded PostgreSQL. */
const cleanup = new Set<() => Promise<void>>();

const username = (i: number) => `acct${i}@bench`;
const sessionId = (i: number) => `s${i.toString(16).padStart(8, '0')}`;
/** deploy/freeradius/policy.conf's acct_unique for our packets (no NAS-Identifier, no NAS-Port). */
const uniqueId = (i: number) =>
  crypto
    .createHash('md5')
    .update(`${username(i)},${sessionId(i)},${NAS_IP},,ether1,`)
    .digest('hex');

interface Target {
  label: string;
  url: string;
}

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
      `insert into services (name, price, currency, duration_days, daily_quota_gb, monthly_quota_gb)
       values ('acct', 1000, 'USD', 30, 100, 1000) returning id`,
    );
    await pool.query(
      // usage_day today: the interims are not the day's first (287 of a day's 288 five-minute
      // interims are not), as in the steady state; the first of a day also moves usage_day (indexed).
      `insert into subscribers (username, password_enc, service_id, reseller_id, expiry_date, usage_day)
       select 'acct' || g || '@bench', 'x', $1, $2, current_date + 30, (now() at time zone 'UTC')::date
         from generate_series(0, $3 - 1) g`,
      [plan.id, reseller.id, COUNT],
    );
    await insertSessions(pool);
    await pool.query('vacuum analyze');
  } finally {
    await pool.end();
  }
}

async function seedStock(url: string): Promise<void> {
  const pool = new Pool({ connectionString: url, max: 1 });
  try {
    await pool.query(fs.readFileSync(STOCK_SCHEMA!, 'utf8'));
    await pool.query(`insert into nas (nasname, shortname, secret) values ($1, 'bench', $2)`, [NAS_IP, SECRET]);
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

async function startRadius(url: string): Promise<{ proc: ChildProcess; acctPort: number; log: () => string }> {
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
  return { proc, acctPort, log: () => log };
}

async function stopRadius(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await exited;
}

/** CPU seconds so far of FreeRADIUS's backends in `db` (PostgreSQL on this host; /proc). */
async function backendCpu(url: string, db: string): Promise<Map<number, number>> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = $1 and application_name ilike 'freeradius%'`,
      [db],
    );
    const out = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        out.set(pid, (Number(fields[11]) + Number(fields[12])) / CLK_TCK);
      } catch {
        // not on this host, or gone
      }
    }
    return out;
  } finally {
    await c.end();
  }
}

const cpuDelta = (before: Map<number, number>, after: Map<number, number>) =>
  [...after].reduce((sum, [pid, t]) => sum + t - (before.get(pid) ?? 0), 0);

interface SendResult {
  seconds: number;
  rtts: number[];
  lost: number;
  retransmitted: number;
}

/** Accounting-Requests with up to WINDOW in flight on one socket per 256; per-request reply times. */
async function send(port: number, packets: Record<string, string | number>[]): Promise<SendResult> {
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
  let retransmitted = 0;
  let next = 0;
  const t0 = performance.now();
  await new Promise<void>((done) => {
    let active = 0;
    const pending = new Map<
      string,
      { buf: Buffer; sent: number; first: number; tries: number; timer: NodeJS.Timeout }
    >();
    const free: [number, number][] = [];
    for (let s = 0; s < sockets; s++) for (let id = 0; id < 256 && free.length < WINDOW; id++) free.push([s, id]);
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
      while (free.length && next < packets.length) {
        const [s, id] = free.shift()!;
        const attrs = packets[next++];
        const buf = radius.encode({
          code: 'Accounting-Request',
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
        if (!p || msg[0] !== 5) return; // Accounting-Response
        rtts.push(performance.now() - p.first);
        finish(key);
      }),
    );
    pump();
  });
  const seconds = (performance.now() - t0) / 1000;
  for (const s of socks) s.close();
  rtts.sort((a, b) => a - b);
  return { seconds, rtts, lost, retransmitted };
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
  'Framed-IP-Address': `100.64.${(i >> 8) & 255}.${i & 255}`,
});
const interim = (i: number, round: number) => ({
  ...base(i),
  'Acct-Status-Type': 'Interim-Update',
  'Acct-Session-Time': 300 * round,
  'Acct-Input-Octets': 1000 * round,
  'Acct-Output-Octets': 10_000 * round,
});
const stop = (i: number) => ({
  ...base(i),
  'Acct-Status-Type': 'Stop',
  'Acct-Session-Time': 900,
  'Acct-Input-Octets': 3000,
  'Acct-Output-Octets': 30_000,
  'Acct-Terminate-Cause': 'User-Request',
});

interface Phase {
  packetsPerSecond: number;
  p50: number;
  p95: number;
  lost: number;
  retransmitted: number;
  cpuMsPerPacket: number;
}

async function phase(
  target: Target,
  db: string,
  port: number,
  packets: Record<string, string | number>[],
): Promise<Phase> {
  const before = await backendCpu(target.url, db);
  const r = await send(port, packets);
  const after = await backendCpu(target.url, db);
  return {
    packetsPerSecond: packets.length / r.seconds,
    p50: percentile(r.rtts, 50),
    p95: percentile(r.rtts, 95),
    lost: r.lost,
    retransmitted: r.retransmitted,
    cpuMsPerPacket: (cpuDelta(before, after) * 1000) / packets.length,
  };
}

const fmt = (p: Phase) =>
  `${p.packetsPerSecond.toFixed(0)} packets/s, reply p50 ${p.p50.toFixed(1)} ms p95 ${p.p95.toFixed(1)} ms, lost ${p.lost}, retransmitted ${p.retransmitted}, PostgreSQL CPU ${p.cpuMsPerPacket.toFixed(3)} ms/packet`;

async function measure(target: Target, db: string, seed: (url: string) => Promise<void>) {
  console.log(`\n=== ${target.label} ===`);
  const t0 = performance.now();
  await seed(target.url);
  console.log(`  seeded ${COUNT} open sessions in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const { proc, acctPort, log } = await startRadius(target.url);
  try {
    const ids = Array.from({ length: COUNT }, (_, i) => i);
    const i1 = await phase(
      target,
      db,
      acctPort,
      ids.map((i) => interim(i, 1)),
    );
    console.log(`  Interim-Update: ${fmt(i1)}`);
    const rc = await radclient(
      acctPort,
      ids.map((i) => interim(i, 2)),
    );
    console.log(
      rc === undefined
        ? '  radclient not found: no cross-check'
        : `  radclient -p ${Math.min(WINDOW, 255)}, the first ${Math.min(COUNT, 1000)} Interim-Updates again (round 2): ${(Math.min(COUNT, 1000) / rc).toFixed(0)} packets/s`,
    );
    const st = await phase(target, db, acctPort, ids.map(stop));
    console.log(`  Stop: ${fmt(st)}`);
    return { interim: i1, stop: st };
  } finally {
    await stopRadius(proc);
    const errors = log()
      .split('\n')
      .filter((l) => /ERROR|No connections available|Discarding|conflicting/i.test(l));
    if (errors.length)
      console.log(`  FreeRADIUS logged ${errors.length} error line(s), e.g. ${errors.slice(-2).join(' | ')}`);
  }
}

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
    const a = await measure({ label: 'ours: billing schema with its triggers', url: oursUrl }, ours, seedOurs);
    const b = await measure(
      { label: "stock: FreeRADIUS's schema.sql, no triggers", url: withDb(serverUrl, stock) },
      stock,
      seedStock,
    );
    // Every Interim-Update and Stop reflected in usage: 33,000 octets per session today.
    const c = new Client({ connectionString: oursUrl });
    await c.connect();
    const {
      rows: [u],
    } = await c.query<{ total: string; online: number }>(
      `select (select coalesce(sum(download_bytes + upload_bytes), 0) from daily_usage)::text as total,
              (select count(*)::int from subscribers where is_online) as online`,
    );
    await c.end();
    console.log(
      `\nours: usage recorded ${u.total} octets of ${COUNT * 33_000} sent (${BigInt(u.total) === BigInt(COUNT * 33_000) ? 'every packet reflected' : 'MISMATCH'}); ${u.online} still online`,
    );
    console.log(
      `ratio ours/stock, packets/s: Interim-Update ${(a.interim.packetsPerSecond / b.interim.packetsPerSecond).toFixed(2)}, Stop ${(a.stop.packetsPerSecond / b.stop.packetsPerSecond).toFixed(2)}`,
    );
    console.log(
      `PostgreSQL CPU per packet, ours/stock: Interim-Update ${(a.interim.cpuMsPerPacket / b.interim.cpuMsPerPacket).toFixed(2)}, Stop ${(a.stop.cpuMsPerPacket / b.stop.cpuMsPerPacket).toFixed(2)}`,
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
