// One PostgreSQL per test run: DATABASE_URL's server when set (CI: the machine's own), else an
// embedded one in a temporary folder. Migrations are applied once to a template database that
// every test file copies (CREATE DATABASE ... TEMPLATE), so files never see each other's rows.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { runMigrations, startEmbeddedPostgres } from '../../shared/db/bootstrap.mjs';

export default async function globalSetup() {
  const runId = `t_${Date.now().toString(36)}_${crypto.randomBytes(3).toString('hex')}`;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-test-pg-'));
    fs.chmodSync(dataDir, 0o755);
    const server = await startEmbeddedPostgres({ dataDir, database: 'postgres' });
    globalThis.__embeddedPg = { server, dataDir };
    adminUrl = server.adminUrl;
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(`PostgreSQL at ${redact(adminUrl)} is unreachable: ${err.message}`, { cause: err });
  }
  const template = `${runId}_template`;
  await admin.query(`create database "${template}"`);
  await admin.end();
  await runMigrations(withDatabase(adminUrl, template));
  process.env.TEST_PG_ADMIN_URL = adminUrl;
  process.env.TEST_PG_TEMPLATE = template;
  process.env.TEST_RUN_ID = runId;
}

export function withDatabase(url, database) {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

function redact(url) {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}
