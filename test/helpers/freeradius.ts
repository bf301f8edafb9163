/**
 * A real FreeRADIUS for interop tests: Debian's freeradius + freeradius-postgresql on the shipped
 * configuration (deploy/freeradius, started by its run.sh with -X on the test app's database and on
 * free UDP ports), connected as a role holding only deploy/freeradius/grants.sql's rights, and
 * driven with radclient. The NAS (secret) must exist before the start: FreeRADIUS reads its clients
 * from the nas table once.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import type { TestApp } from './app';

const RUN_SH = path.join(__dirname, '../../deploy/freeradius/run.sh');
const GRANTS = path.join(__dirname, '../../deploy/freeradius/grants.sql');

export function requireTool(name: string): void {
  // The daemon is in /usr/sbin, outside a normal user's PATH on Debian (run.sh looks there too).
  const env = { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin` };
  if (spawnSync('sh', ['-c', `command -v ${name}`], { env }).status !== 0) {
    throw new Error(
      `${name} is not installed: FreeRADIUS interop tests need Debian's freeradius, freeradius-postgresql and freeradius-utils (.ci/run installs them)`,
    );
  }
}

async function freeUdpPort(): Promise<number> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

export interface RadiusAnswer {
  code: string;
  /** The last value of each attribute. */
  attrs: Record<string, string>;
  /** Every attribute in the order received, a tagged one as `Name:tag`. */
  pairs: [string, string][];
}

export interface Radius {
  authPort: number;
  acctPort: number;
  /** Everything FreeRADIUS printed so far (its -X trace). */
  log(): string;
  /** One request through radclient; attribute values are quoted as radclient's input expects. */
  request(kind: 'auth' | 'acct', attrs: Record<string, string | number>): Promise<RadiusAnswer>;
  /** PAP Access-Request from the NAS 127.0.0.1. */
  login(username: string, password: string, mac?: string): Promise<RadiusAnswer>;
  /** Accounting-Request from the NAS 127.0.0.1, port ether1. */
  acct(
    username: string,
    session: string,
    status: string,
    extra?: Record<string, string | number>,
  ): Promise<RadiusAnswer>;
  /** Stops FreeRADIUS and drops its database role. */
  stop(): Promise<void>;
}

/**
 * Starts FreeRADIUS through deploy/freeradius/run.sh against `t`'s database; resolves once it serves.
 */
export interface RadiusOptions {
  /** Added to run.sh's environment (e.g. a TZ far from UTC). */
  env?: Record<string, string>;
  /** The database role's own `timezone` setting (ALTER ROLE ... SET timezone). */
  roleTimeZone?: string;
}

export async function startFreeradius(t: TestApp, secret: string, opts: RadiusOptions = {}): Promise<Radius> {
  requireTool('freeradius');
  requireTool('radclient');
  const role = `radius_${crypto.randomBytes(4).toString('hex')}`;
  const rolePassword = crypto.randomBytes(12).toString('hex');
  // FreeRADIUS connects as a role with only deploy/freeradius/grants.sql's rights, as documented.
  await t.pool.query(`create role "${role}" login password '${rolePassword}'`);
  const grants = fs.readFileSync(GRANTS, 'utf8');
  await t.pool.query(grants.replace(/ TO freeradius;/g, ` TO "${role}";`));
  if (opts.roleTimeZone) await t.pool.query(`alter role "${role}" set timezone = '${opts.roleTimeZone}'`);
  const url = new URL(t.databaseUrl);
  url.username = role;
  url.password = rolePassword;

  const authPort = await freeUdpPort();
  const acctPort = await freeUdpPort();
  let log = '';
  const proc: ChildProcess = spawn(RUN_SH, ['-X'], {
    env: {
      ...process.env,
      DATABASE_URL: url.toString(),
      RADIUS_AUTH_PORT: String(authPort),
      RADIUS_ACCT_PORT: String(acctPort),
      RADIUS_LISTEN_ADDR: '127.0.0.1',
      RADIUS_REJECT_DELAY: '0',
      ...opts.env,
    },
  });
  proc.stdout!.on('data', (d: Buffer) => {
    log += d.toString();
  });
  proc.stderr!.on('data', (d: Buffer) => {
    log += d.toString();
  });

  const dropRole = async () => {
    await t.pool.query(`drop owned by "${role}"`);
    await t.pool.query(`drop role "${role}"`);
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const check = setInterval(() => {
        if (log.includes('Ready to process requests')) {
          clearInterval(check);
          resolve();
        }
      }, 50);
      proc.on('exit', (code) => {
        clearInterval(check);
        reject(new Error(`freeradius exited (${code}):\n${log.slice(-4000)}`));
      });
    });
  } catch (err) {
    await dropRole();
    throw err;
  }
  proc.removeAllListeners('exit');

  const request = async (kind: 'auth' | 'acct', attrs: Record<string, string | number>): Promise<RadiusAnswer> => {
    const input = Object.entries(attrs)
      .map(([k, v]) => `${k} = ${typeof v === 'number' ? v : JSON.stringify(v)}`)
      .join(', ');
    const port = kind === 'auth' ? authPort : acctPort;
    const child = spawn('radclient', ['-x', '-r', '2', '-t', '3', `127.0.0.1:${port}`, kind, secret]);
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stdin.end(`${input}\n`);
    await new Promise((resolve) => child.on('close', resolve));
    const lines = out.split('\n');
    const received = lines.findIndex((l) => l.startsWith('Received '));
    if (received < 0)
      throw new Error(`no answer from FreeRADIUS:\n${out}\n--- server log tail ---\n${log.slice(-3000)}`);
    const code = /^Received (\S+)/.exec(lines[received])![1];
    const parsed: Record<string, string> = {};
    const pairs: [string, string][] = [];
    for (const line of lines.slice(received + 1)) {
      const m = /^\s+([\w-]+(?::\d+)?) = "?(.*?)"?$/.exec(line);
      // FreeRADIUS 3.2.5+ (Debian trixie; not bookworm's 3.2.1) signs every Access-Accept with a
      // Message-Authenticator (the BlastRADIUS fix): the packet's checksum, not a reply of the policy.
      if (m && m[1] !== 'Message-Authenticator') {
        parsed[m[1]] = m[2];
        pairs.push([m[1], m[2]]);
      }
    }
    return { code, attrs: parsed, pairs };
  };

  return {
    authPort,
    acctPort,
    log: () => log,
    request,
    login: (username, password, mac = 'AA:BB:CC:00:00:01') =>
      request('auth', {
        'User-Name': username,
        'User-Password': password,
        'Calling-Station-Id': mac,
        'NAS-IP-Address': '127.0.0.1',
      }),
    acct: (username, session, status, extra = {}) =>
      request('acct', {
        'User-Name': username,
        'Acct-Session-Id': session,
        'Acct-Status-Type': status,
        'NAS-IP-Address': '127.0.0.1',
        'NAS-Port-Id': 'ether1',
        'Calling-Station-Id': 'AA:BB:CC:00:00:01',
        ...extra,
      }),
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((resolve) => proc.on('exit', resolve));
        proc.kill('SIGTERM');
        await exited;
      }
      await dropRole();
    },
  };
}
