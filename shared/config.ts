import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
/**
 * Configuration comes from the environment only (README lists every variable). It is read once at
 * start by `loadConfig` and then shared through `config()`.
 */
export interface Config {
  port: number;
  dataDir: string;
  databaseUrl: string | undefined;
  /** DATABASE_READ_URL: reports, exports and the ledger list read here (shared/db/client.ts readDb()). */
  databaseReadUrl?: string;
  embeddedPgPort: number | undefined;
  transporter: string | undefined;
  services: string[] | undefined;
  jwtSecret: string;
  jwtTtlSeconds: number;
  encryptionKey: Buffer | undefined;
  adminUsername: string;
  adminPassword: string | undefined;
  logLevel: string;
  publicBaseUrl: string;
  rateLimitPerMin: number;
  /** How long a gateway keeps a manager's row between `manager.changed` events (services/gateway/identities.ts). */
  identityCacheMs: number;
  publicRateLimitPerMin: number;
  trustProxy: boolean;
  /** Time a client has to send a request's headers, and the whole request with its body (docs/security.md). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Bearer token of /metrics on the public port; unset: /metrics is served on OPS_PORT only (docs/security.md). */
  metricsToken: string | undefined;
  /** Requests per minute per API key, on top of the per-address limit (docs/security.md). */
  apiKeyRateLimitPerMin: number;
  /** Failed sign-ins allowed per username and per address within LOGIN_LOCK_SECONDS (docs/security.md). */
  loginFailuresPerUsername: number;
  loginFailuresPerAddress: number;
  loginLockSeconds: number;
  /** Lifetime of a subscriber's self-care token (docs/self-care.md). */
  selfCareTokenTtlSeconds: number;
}

export class ConfigError extends Error {}

/** An integer variable at least `min`, or `fallback` when unset; anything else is a ConfigError. */
export function intVar(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

/** ENCRYPTION_KEY is 32 bytes, given as 64 hex characters or base64. */
export function parseEncryptionKey(raw: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new ConfigError('ENCRYPTION_KEY must be 32 bytes (64 hex characters or base64)');
  return key;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const jwtSecret = env.JWT_SECRET ?? '';
  if (!jwtSecret) {
    throw new ConfigError(
      'JWT_SECRET is not set. Set it to a long random string, e.g. JWT_SECRET=$(openssl rand -hex 32) npm start',
    );
  }
  const port = intVar(env, 'PORT', 3000);
  return {
    port,
    dataDir: env.DATA_DIR || './data',
    databaseUrl: env.DATABASE_URL || undefined,
    databaseReadUrl: env.DATABASE_READ_URL || undefined,
    embeddedPgPort: env.EMBEDDED_PG_PORT ? intVar(env, 'EMBEDDED_PG_PORT', 0) : undefined,
    transporter: env.TRANSPORTER || undefined,
    services: env.SERVICES
      ? env.SERVICES.split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : undefined,
    jwtSecret,
    jwtTtlSeconds: intVar(env, 'JWT_TTL_SECONDS', 12 * 3600),
    encryptionKey: env.ENCRYPTION_KEY ? parseEncryptionKey(env.ENCRYPTION_KEY) : undefined,
    adminUsername: env.ADMIN_USERNAME || 'admin',
    adminPassword: env.ADMIN_PASSWORD || undefined,
    logLevel: env.LOG_LEVEL || 'info',
    publicBaseUrl: (env.PUBLIC_BASE_URL || `http://localhost:${port}`).replace(/\/+$/, ''),
    rateLimitPerMin: intVar(env, 'RATE_LIMIT_PER_MIN', 300),
    identityCacheMs: intVar(env, 'IDENTITY_CACHE_MS', 1000),
    publicRateLimitPerMin: intVar(env, 'PUBLIC_RATE_LIMIT_PER_MIN', 30),
    trustProxy: env.TRUST_PROXY === 'true' || env.TRUST_PROXY === '1',
    headersTimeoutMs: intVar(env, 'HEADERS_TIMEOUT_MS', 10_000, 1),
    requestTimeoutMs: intVar(env, 'REQUEST_TIMEOUT_MS', 30_000, 1),
    metricsToken: env.METRICS_TOKEN || undefined,
    apiKeyRateLimitPerMin: intVar(env, 'API_KEY_RATE_LIMIT_PER_MIN', 300, 1),
    loginFailuresPerUsername: intVar(env, 'LOGIN_FAILURES_PER_USERNAME', 5, 1),
    loginFailuresPerAddress: intVar(env, 'LOGIN_FAILURES_PER_ADDRESS', 20, 1),
    loginLockSeconds: intVar(env, 'LOGIN_LOCK_SECONDS', 900, 1),
    selfCareTokenTtlSeconds: intVar(env, 'SELF_CARE_TOKEN_TTL_SECONDS', 1800, 60),
  };
}

let current: Config | undefined;

export function setConfig(cfg: Config): Config {
  current = cfg;
  return cfg;
}

export function config(): Config {
  if (!current) throw new Error('configuration not loaded: call setConfig(loadConfig()) at start');
  return current;
}

/** ENCRYPTION_KEY, or in the embedded default a key generated once into DATA_DIR. */
export function resolveEncryptionKey(cfg: Config, embedded: boolean): Buffer {
  if (cfg.encryptionKey) return cfg.encryptionKey;
  if (!embedded) throw new ConfigError('ENCRYPTION_KEY is required when DATABASE_URL is set (32 bytes, hex or base64)');
  const file = path.resolve(cfg.dataDir, 'encryption.key');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(cfg.dataDir, { recursive: true });
    fs.writeFileSync(file, crypto.randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  }
  return parseEncryptionKey(fs.readFileSync(file, 'utf8').trim());
}
