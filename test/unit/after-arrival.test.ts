import { AfterArrival } from '../../shared/after-arrival';

/** A run whose end the test decides, recording when it started. */
function runs() {
  const started: { key: string; finish: (v: string) => void; fail: (e: Error) => void }[] = [];
  const work = (key: string) => () => new Promise<string>((finish, fail) => started.push({ key, finish, fail }));
  return { started, work };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('AfterArrival', () => {
  it('runs a first request at once, and those arriving meanwhile in one run after it', async () => {
    const shared = new AfterArrival<string>();
    const { started, work } = runs();
    const first = shared.run('k', work('k'));
    const second = shared.run('k', work('k'));
    const third = shared.run('k', work('k'));
    await settle();
    expect(started).toHaveLength(1);

    started[0].finish('read before the others arrived');
    expect(await first).toBe('read before the others arrived');
    await settle();
    expect(started).toHaveLength(2);

    // Arrives while the second run is going: it is not served that run's answer.
    const fourth = shared.run('k', work('k'));
    started[1].finish('read after the second and third arrived');
    expect(await second).toBe('read after the second and third arrived');
    expect(await third).toBe('read after the second and third arrived');
    await settle();
    expect(started).toHaveLength(3);
    started[2].finish('read after the fourth arrived');
    expect(await fourth).toBe('read after the fourth arrived');
  });

  it('keeps keys apart', async () => {
    const shared = new AfterArrival<string>();
    const { started, work } = runs();
    const a = shared.run('a', work('a'));
    const b = shared.run('b', work('b'));
    await settle();
    expect(started.map((s) => s.key)).toEqual(['a', 'b']);
    started[1].finish('b');
    started[0].finish('a');
    expect([await a, await b]).toEqual(['a', 'b']);
  });

  it('starts the waiting run after a failed one, and shares a failure only with its own callers', async () => {
    const shared = new AfterArrival<string>();
    const { started, work } = runs();
    const first = shared.run('k', work('k'));
    const second = shared.run('k', work('k'));
    await settle();
    started[0].fail(new Error('lost the connection'));
    await expect(first).rejects.toThrow('lost the connection');
    await settle();
    expect(started).toHaveLength(2);
    started[1].finish('read again');
    expect(await second).toBe('read again');

    const later = shared.run('k', work('k'));
    await settle();
    expect(started).toHaveLength(3);
    started[2].finish('a new run');
    expect(await later).toBe('a new run');
  });
});
