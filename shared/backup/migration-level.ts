/**
 * The migration level of a database (drizzle's journal: how many migrations, the last one's tag and
 * time) and this code's migrations cut at a level, so a restore recreates exactly the schema its
 * backup was taken at before loading the rows, then migrates forward with the current code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readMigrationFiles, type MigrationMeta } from 'drizzle-orm/migrator';
import type { ClientBase } from 'pg';
import { repoRoot } from '../paths';

export interface MigrationLevel {
  /** Migrations applied. */
  count: number;
  /** The journal's tag of the last one applied (e.g. `0044_payment_matching`). */
  tag: string;
  /** Its journal time (ms), what drizzle compares to decide what is pending. */
  when: number;
}

interface JournalEntry {
  idx: number;
  when: number;
  tag: string;
}

export function migrationsDir(): string {
  return path.join(repoRoot(), 'shared', 'db', 'migrations');
}

export function journal(dir = migrationsDir()): JournalEntry[] {
  const parsed = JSON.parse(fs.readFileSync(path.join(dir, 'meta', '_journal.json'), 'utf8')) as {
    entries: JournalEntry[];
  };
  return parsed.entries;
}

/** The level of the code: every migration it ships. */
export function codeLevel(): MigrationLevel {
  const entries = journal();
  const last = entries[entries.length - 1];
  return { count: entries.length, tag: last.tag, when: last.when };
}

/** The level a database was migrated to; count 0 when drizzle never ran there. */
export async function databaseLevel(client: ClientBase): Promise<MigrationLevel> {
  const exists = await client.query(`select to_regclass('drizzle.__drizzle_migrations') is not null as present`);
  if (!exists.rows[0].present) return { count: 0, tag: '', when: 0 };
  const { rows } = await client.query<{ n: number; last: string | null }>(
    `select count(*)::int as n, max(created_at)::text as last from drizzle.__drizzle_migrations`,
  );
  const when = rows[0].last === null ? 0 : Number(rows[0].last);
  const entry = journal().find((e) => e.when === when);
  return { count: rows[0].n, tag: entry?.tag ?? `unknown (${when})`, when };
}

/** Where `level` is in this code's journal; throws when it is not one of its levels (a newer release's). */
function levelIndex(entries: JournalEntry[], level: MigrationLevel): number {
  const cut = entries.findIndex((e) => e.when === level.when && e.tag === level.tag);
  if (cut < 0) {
    throw new Error(
      `the backup was made at migration ${level.tag}, which this code does not have: restore it with that release or a newer one`,
    );
  }
  return cut;
}

/**
 * This code's migrations split at `level`: those up to it and those after it. Throws when the level
 * is not one of this code's (a backup made by a newer release).
 */
export function migrationsAround(level: MigrationLevel): { upTo: MigrationMeta[]; after: MigrationMeta[] } {
  const cut = levelIndex(journal(), level);
  const all = readMigrationFiles({ migrationsFolder: migrationsDir() });
  return { upTo: all.slice(0, cut + 1), after: all.slice(cut + 1) };
}

/**
 * Applies `migrations` on the caller's connection, inside the caller's transaction, and records
 * them in drizzle's table as drizzle's migrator does (its own migrator commits a transaction of
 * its own, which a restore that must leave an empty target untouched on failure cannot use).
 */
export async function applyMigrations(client: ClientBase, migrations: MigrationMeta[]): Promise<void> {
  await client.query('create schema if not exists drizzle');
  await client.query(
    'create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)',
  );
  for (const m of migrations) {
    for (const statement of m.sql) await client.query(statement);
    await client.query('insert into drizzle.__drizzle_migrations (hash, created_at) values ($1, $2)', [
      m.hash,
      m.folderMillis,
    ]);
  }
}
