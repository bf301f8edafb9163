/**
 * Races made to happen: a request sent while another transaction holds the row it needs, and
 * that transaction's own change committed while the request waits. A handler that decided on a
 * read taken before its lock acts on a stale row here, every time.
 */
import type { Tx } from '../../shared/db/client';
import type { TestApp } from './app';

/** Backends of the test's database waiting for a lock. */
export async function waitingOnLock(t: TestApp): Promise<number> {
  const res = await t.pool.query(
    `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
  );
  return res.rows[0].n as number;
}

/**
 * Sends `request` while another transaction holds a row (`lock`); once the request waits for it,
 * that transaction makes `change` and commits first. Fails if the request never waited.
 */
export async function behindAWriter<R>(
  t: TestApp,
  lock: (tx: Tx) => Promise<unknown>,
  change: (tx: Tx) => Promise<unknown>,
  request: () => Promise<R>,
): Promise<R> {
  let release!: () => void;
  let held!: () => void;
  const isHeld = new Promise<void>((r) => (held = r));
  const writer = t.db.transaction(async (tx) => {
    await lock(tx as unknown as Tx);
    held();
    await new Promise<void>((r) => (release = r));
    await change(tx as unknown as Tx);
  });
  await isHeld;
  const pending = request();
  let settled = false;
  void pending.then(
    () => (settled = true),
    () => (settled = true),
  );
  try {
    while (!settled && (await waitingOnLock(t)) === 0) await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false);
  } finally {
    release();
    await writer;
  }
  return pending;
}
