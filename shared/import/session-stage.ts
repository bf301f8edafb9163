/**
 * A bulk load's sessions staged by range of unique id before they go into radacct (docs/import.md,
 * "radacct's unique index during a large load"). `radacct_acctuniqueid` cannot be dropped for a load
 * (FreeRADIUS's inserts and updates find their row by it while the import runs, and the import's own
 * second run relies on it), and chunks read in the source's order insert into it at random: at
 * millions of sessions it is several times `shared_buffers`, so nearly every insert reads a page
 * back and writes another out. Staged first, each range goes in with one statement sorted by unique
 * id, so the index's pages are visited in order, each about once per range.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Pool } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { copyText, STAGED_COLUMNS } from './session-copy';
import type { ImportSession } from './sessions';

/** Sessions a range holds, about: one transaction's insert, sorted in its backend's memory. */
const PER_RANGE = 500_000;
const MAX_RANGES = 64;

/** Ranges for a load of about `sessions` sessions. */
export const rangeCount = (sessions: number) => Math.min(MAX_RANGES, Math.max(2, Math.ceil(sessions / PER_RANGE)));

/** Range k's staging table: unlogged (a crash empties it; the next run reads the source again). */
export const stageTable = (k: number) => `import_radacct_stage_${k}`;

/**
 * The ranges' lower bounds after the first (ranges - 1 of them), cut from a sample of unique ids (the
 * first chunk) in equal parts. JavaScript's order of code units, not the database's collation: an id
 * they order differently lands in a neighbour's range, which costs locality, not correctness (an id is
 * in one range whatever its order).
 */
export function rangeBounds(sample: string[], ranges: number): string[] {
  const sorted = [...sample].sort();
  return Array.from({ length: ranges - 1 }, (_, k) => sorted[Math.floor(((k + 1) * sorted.length) / ranges)]);
}

/** The range of `uid`: how many bounds are at or below it. */
export function rangeOf(bounds: string[], uid: string): number {
  let lo = 0;
  let hi = bounds.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (bounds[mid] <= uid) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Drops every range table, this load's and those a stopped one left. */
async function dropStageTables(pool: Pool): Promise<void> {
  const { rows } = await pool.query<{ name: string }>(
    `select relname as name from pg_class
      where relkind = 'r' and relnamespace = 'public'::regnamespace and relname like 'import\\_radacct\\_stage\\_%'`,
  );
  if (rows.length) await pool.query(`drop table if exists ${rows.map((r) => `"${r.name}"`).join(', ')}`);
}

export class SessionStage {
  private bounds: string[] | undefined;
  /** Sessions staged in each range. */
  readonly staged: number[];

  private constructor(
    private readonly pool: Pool,
    readonly ranges: number,
  ) {
    this.staged = new Array<number>(ranges).fill(0);
  }

  /** Empty range tables for a load, after dropping any a stopped load left. */
  static async create(pool: Pool, ranges: number): Promise<SessionStage> {
    await dropStageTables(pool);
    await pool.query(
      Array.from(
        { length: ranges },
        (_, k) => `create unlogged table ${stageTable(k)} (${STAGED_COLUMNS}) with (autovacuum_enabled = false);`,
      ).join('\n'),
    );
    return new SessionStage(pool, ranges);
  }

  /** A chunk's sessions copied into their ranges' tables, on a connection of its own. */
  async add(take: ImportSession[]): Promise<void> {
    const bounds = (this.bounds ??= rangeBounds(
      take.map((s) => s.uniqueId),
      this.ranges,
    ));
    const parts = Array.from({ length: this.ranges }, () => [] as ImportSession[]);
    for (const s of take) parts[rangeOf(bounds, s.uniqueId)].push(s);
    const client = await this.pool.connect();
    try {
      for (let k = 0; k < this.ranges; k++) {
        if (!parts[k].length) continue;
        await pipeline(Readable.from([copyText(parts[k])]), client.query(copyFrom(`copy ${stageTable(k)} from stdin`)));
        this.staged[k] += parts[k].length;
      }
    } catch (err) {
      client.release(err as Error);
      throw err;
    }
    client.release();
  }

  /** Drops the range tables (after the load, or its failure). */
  drop(): Promise<void> {
    return dropStageTables(this.pool);
  }
}
