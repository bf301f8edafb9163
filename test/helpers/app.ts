/**
 * Starts the real application for a test file: its own database copied from the migrated
 * template, every service (or the listed ones) in a broker, the gateway on a free port.
 */
import crypto from 'node:crypto';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { Client, Pool } from 'pg';
import type { BrokerOptions } from 'moleculer';
import type { Role } from '../../shared/auth/claims';
import { signToken } from '../../shared/auth/jwt';
import { loadConfig } from '../../shared/config';
import * as schema from '../../shared/db/schema';
import { startApp, type App } from '../../runtime/app';

export const TEST_JWT_SECRET = 'test-secret-for-jwt-signing-only';
export const TEST_ENCRYPTION_KEY = 'a'.repeat(64);
/** /metrics on the public port answers only with this bearer (docs/security.md). */
export const TEST_METRICS_TOKEN = 'test-metrics-token';

export interface TestApp {
  app: App;
  baseUrl: string;
  databaseUrl: string;
  /** Direct database access for assertions on rows. */
  db: NodePgDatabase<typeof schema>;
  pool: Pool;
  close(): Promise<void>;
}

function adminUrl(): string {
  const url = process.env.TEST_PG_ADMIN_URL;
  if (!url) throw new Error('TEST_PG_ADMIN_URL is not set: run the tests through jest (global setup)');
  return url;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** A fresh database for this test file, copied from the run's migrated template. */
export async function createTestDatabase(): Promise<string> {
  const name = `${process.env.TEST_RUN_ID}_${crypto.randomBytes(4).toString('hex')}`;
  const client = new Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`create database "${name}" template "${process.env.TEST_PG_TEMPLATE}"`);
        break;
      } catch (err) {
        // Two files copying the template at the same instant: PostgreSQL asks the second to wait.
        if (attempt >= 20 || !/being accessed by other users/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await client.end();
  }
  return withDatabase(adminUrl(), name);
}

export function testEnv(databaseUrl: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    JWT_SECRET: TEST_JWT_SECRET,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    DATABASE_URL: databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'error',
    RATE_LIMIT_PER_MIN: '1000000',
    PUBLIC_RATE_LIMIT_PER_MIN: '1000000',
    PUBLIC_BASE_URL: 'http://billing.test',
    METRICS_TOKEN: TEST_METRICS_TOKEN,
    ...extra,
  };
}

export async function startTestApp(
  options: { env?: Record<string, string>; databaseUrl?: string; broker?: Partial<BrokerOptions> } = {},
): Promise<TestApp> {
  const databaseUrl = options.databaseUrl ?? (await createTestDatabase());
  const app = await startApp(loadConfig(testEnv(databaseUrl, options.env)), {
    migrate: false,
    broker: { logger: process.env.TEST_LOG ? true : false, ...options.broker },
  });
  const pool = new Pool({ connectionString: databaseUrl, max: 4 });
  if (app.baseUrl) appPools.set(app.baseUrl, pool);
  return {
    app,
    baseUrl: app.baseUrl ?? '',
    databaseUrl,
    db: drizzle(pool, { schema }),
    pool,
    async close() {
      if (app.baseUrl) appPools.delete(app.baseUrl);
      await pool.end();
      await app.stop();
    },
  };
}

/** The manager a test token stands for; the gateway checks every token against its row. */
interface TokenManager {
  id: number;
  role: Role;
  resellerId: number | null;
  permissions: string[];
}

const appPools = new Map<string, Pool>();
const tokenManagers = new Map<string, TokenManager>();
const ensured = new WeakMap<Pool, Map<number, Promise<void>>>();

/** Same claims, same manager: ids in a range that serial ids of API-created managers never reach. */
function managerIdFor(role: Role, resellerId: number | null, permissions: string[]): number {
  const digest = crypto
    .createHash('sha256')
    .update(JSON.stringify([role, resellerId, [...permissions].sort()]))
    .digest();
  return 1_000_000 + (digest.readUInt32BE(0) % 1_000_000_000);
}

/**
 * A signed JWT for a manager with these claims. The manager's row is written to the app's
 * database before the first request that carries the token (`http()` / `client()`; a test that
 * calls fetch itself awaits `ensureTokenManager`), since the gateway trusts the row, not the token.
 */
export function token(
  role: Role,
  opts: { managerId?: number; resellerId?: number | null; permissions?: string[]; ttl?: number } = {},
): string {
  const resellerId = opts.resellerId ?? null;
  const permissions = opts.permissions ?? [];
  const id = opts.managerId ?? managerIdFor(role, resellerId, permissions);
  const signed = signToken({ managerId: id, role, resellerId, permissions }, TEST_JWT_SECRET, opts.ttl ?? 3600).token;
  tokenManagers.set(signed, { id, role, resellerId, permissions });
  return signed;
}

/** Writes the manager row of a `token()` token into the database behind `baseUrl`, once. */
export async function ensureTokenManager(baseUrl: string, bearer: string | undefined): Promise<void> {
  const manager = bearer ? tokenManagers.get(bearer) : undefined;
  const pool = appPools.get(baseUrl);
  if (!manager || !pool) return;
  let done = ensured.get(pool);
  if (!done) ensured.set(pool, (done = new Map()));
  let write = done.get(manager.id);
  if (!write) {
    write = pool
      .query(
        `insert into managers (id, username, password_hash, role, reseller_id, permissions)
         values ($1::int, 'test-token-' || $1::int, '!', $2, $3, $4::jsonb)
         on conflict (id) do update set role = excluded.role, reseller_id = excluded.reseller_id, permissions = excluded.permissions`,
        [manager.id, manager.role, manager.resellerId, JSON.stringify(manager.permissions)],
      )
      // A small explicit id (adminToken's 1) must not be handed out again to a manager the test creates.
      .then(async () => {
        if (manager.id >= 1_000_000) return;
        await pool.query(
          `select setval(pg_get_serial_sequence('managers', 'id'), greatest($1::int, (select last_value from managers_id_seq)))`,
          [manager.id],
        );
      });
    done.set(manager.id, write);
  }
  await write;
}

export const adminToken = () => token('admin', { managerId: 1 });

export interface HttpResult<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

/** One HTTP call to the gateway; JSON bodies are parsed, anything else is left in `text`. */
export async function http<T = any>( // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON
  baseUrl: string,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  await ensureTokenManager(baseUrl, opts.token);
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  if ((res.headers.get('content-type') ?? '').includes('application/json')) parsed = JSON.parse(text);
  return { status: res.status, body: parsed as T, headers: res.headers, text };
}

/** Bound helper: `const api = client(app.baseUrl)` then `api.get('/api/x', { token })`. */
export function client(baseUrl: string) {
  type Opts = Parameters<typeof http>[3];
  return {
    get: <T = any>(path: string, opts?: Opts) => http<T>(baseUrl, 'GET', path, opts), // eslint-disable-line @typescript-eslint/no-explicit-any -- a test reads whatever the route answers
    post: <T = any>(path: string, body?: unknown, opts?: Opts) => http<T>(baseUrl, 'POST', path, { ...opts, body }), // eslint-disable-line @typescript-eslint/no-explicit-any -- a test reads whatever the route answers
    put: <T = any>(path: string, body?: unknown, opts?: Opts) => http<T>(baseUrl, 'PUT', path, { ...opts, body }), // eslint-disable-line @typescript-eslint/no-explicit-any -- a test reads whatever the route answers
    del: <T = any>(path: string, opts?: Opts) => http<T>(baseUrl, 'DELETE', path, opts), // eslint-disable-line @typescript-eslint/no-explicit-any -- a test reads whatever the route answers
  };
}
