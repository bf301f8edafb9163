/**
 * Shares work between identical requests without serving any of them an answer older than itself.
 * A request for a key whose work is running does not join it (that work read the database before
 * the request arrived, and may miss a write the caller made just before asking); it waits, with
 * every other request that arrives meanwhile, for one run that starts after the running one ends.
 * So a key has at most one run going and one waiting, whatever the number of callers, and each
 * caller's answer was read after it arrived.
 */
export class AfterArrival<T> {
  private readonly running = new Map<string, Promise<T>>();
  private readonly waiting = new Map<string, Promise<T>>();

  run(key: string, work: () => Promise<T>): Promise<T> {
    const waiting = this.waiting.get(key);
    if (waiting) return waiting;
    const running = this.running.get(key);
    if (!running) return this.start(key, work);
    const next = running.then(
      () => this.next(key, work),
      () => this.next(key, work),
    );
    this.waiting.set(key, next);
    return next;
  }

  private next(key: string, work: () => Promise<T>): Promise<T> {
    this.waiting.delete(key);
    return this.start(key, work);
  }

  private start(key: string, work: () => Promise<T>): Promise<T> {
    const run = work().finally(() => {
      if (this.running.get(key) === run) this.running.delete(key);
    });
    this.running.set(key, run);
    return run;
  }
}
