/**
 * Races made to happen: a request sent while another transaction holds the row it needs, and
 * that transaction's own change committed while the request waits. A handler that decided on a
 * read taken before its lock acts on a stale row here, every time.
 */
import type { Tx } from '../../shared/db/client';
import type { TestApp } from './app';

/** Backends of the test's database waiting for a lock. */
async function waitingOnLock(t: TestApp): Promise<number> {
  const res = await t.pool.query(
    `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
  );
  return res.rows[0].n as number;
}

/**
 * Sends `request` while another transaction holds a row (`lock`) and reports whether the request
 * waited for it or finished meanwhile; once it waits (or finishes), that transaction makes `change`
 * and commits.
 */
export async function whileHeld<R>(
  t: TestApp,
  lock: (tx: Tx) => Promise<unknown>,
  request: () => Promise<R>,
  change: (tx: Tx) => Promise<unknown> = async () => undefined,
): Promise<{ outcome: 'waited' | 'finished'; result: R }> {
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
  let outcome: 'waited' | 'finished' | undefined;
  // Settled either way: a failed request ends the wait, and `await pending` below rethrows it.
  const finished = () => (outcome ??= 'finished');
  void pending.then(finished, finished);
  try {
    while (!outcome) {
      if ((await waitingOnLock(t)) > 0) outcome ??= 'waited';
      else await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    release();
    await writer;
  }
  return { outcome, result: await pending };
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
  const { outcome, result } = await whileHeld(t, lock, request, change);
  expect(outcome).toBe('waited');
  return result;
}
