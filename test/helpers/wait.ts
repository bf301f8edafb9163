/**
 * Waiting on an event instead of sleeping: a fixed sleep is too short on a loaded machine and
 * too long everywhere else, and a test that waits on the wrong thing still passes after it.
 */

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/**
 * Polls `probe` until it returns a truthy value and returns that value. A probe that throws counts
 * as not yet (a server still starting refuses connections); the last error is in the timeout message.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  timeoutMs = 30_000,
  intervalMs = 25,
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as Truthy<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const cause = lastError ? ` (last error: ${(lastError as Error).message ?? lastError})` : '';
      throw new Error(`${what} did not happen within ${timeoutMs} ms${cause}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * For a test on a fake clock (jest.useFakeTimers, setImmediate left real): lets real I/O run, the
 * clock standing still, until `probe` holds. Counted in turns of the event loop, since the clock
 * that would measure a timeout is the fake one.
 */
export async function settle(what: string, probe: () => boolean, maxTurns = 200_000): Promise<void> {
  for (let i = 0; i < maxTurns; i++) {
    if (probe()) return;
    await new Promise<void>((r) => setImmediate(r));
  }
  throw new Error(`${what} did not happen within ${maxTurns} turns of the event loop`);
}
