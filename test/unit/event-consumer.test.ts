/**
 * The consumer's pace: arrived events are looked up one lookup at a time, once the work lined up
 * for the wire (in ms at the NASes' pace) is within the lead a lookup needs, never held longer than
 * MAX_HOLD_MS, and a copy of a held event is dropped. Lookups, actions and the backlog are the
 * test's own; timers and performance.now are faked.
 */
import {
  EventConsumer,
  LOOKUPS_AT_ONCE,
  MAX_HOLD_MS,
  MAX_LEAD_MS,
  MIN_LEAD_MS,
  type EventLookup,
} from '../../services/network-access/event-consumer';
import type { ActionResult, RouterActions } from '../../services/network-access/router-actions';

const turns = async (n = 10) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

function harness() {
  /**
   * `backlog`: ms of work lined up; `fail`: the next lookup throws; `processed`: ids the database
   * already has as processed; `lookupMs`: how long a lookup takes (`delays`: the next ones, first).
   */
  const state = { backlog: 0, fail: false, processed: new Set<number>(), lookupMs: 0, delays: [] as number[] };
  /** Event ids of each lookup, in order. */
  const looked: number[][] = [];
  /** User names acted on, and how to finish each action. */
  const acted: string[] = [];
  const finish: (() => void)[] = [];
  const errors: unknown[] = [];
  const lookup: EventLookup = {
    processedAmong: async (ids) => {
      looked.push(ids);
      const ms = state.delays.shift() ?? state.lookupMs;
      if (ms) await new Promise((r) => setTimeout(r, ms));
      if (state.fail) {
        state.fail = false;
        throw new Error('connection lost');
      }
      return new Set(ids.filter((id) => state.processed.has(id)));
    },
    liveSessions: async (owners) =>
      new Map(
        owners.map((o) => [
          o.username,
          [{ username: o.username, acctSessionId: 's', framedIp: null, nasIp: '127.0.0.1', nas: null }],
        ]),
      ),
  };
  const actions = {
    disconnect: (username: string) =>
      new Promise<ActionResult>((resolve) => {
        acted.push(username);
        finish.push(() => resolve({ outcome: 'disconnected', sessions: [] }));
      }),
  } as unknown as RouterActions;
  const consumer = new EventConsumer({
    actions,
    recorder: { record: async () => undefined, flush: async () => undefined },
    onError: (err) => errors.push(err),
    backlogMs: () => state.backlog,
    lookup,
  });
  const send = (id: number) => consumer.disconnect({ event_id: id, subscriber_id: id, username: `u${id}` });
  return { state, looked, acted, finish, errors, consumer, send };
}

beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }));
afterEach(() => jest.useRealTimers());

it('events arriving while the work lined up is beyond the lead are held, and looked up together once an action ends within it', async () => {
  const h = harness();
  h.send(1);
  await turns();
  expect(h.looked).toEqual([[1]]);
  h.state.backlog = MAX_LEAD_MS;
  h.send(2);
  h.send(3);
  await turns();
  expect(h.looked).toEqual([[1]]);
  expect(h.acted).toEqual(['u1']);
  // The NAS took a waiting request: the action that held its place ends.
  h.state.backlog = MIN_LEAD_MS - 1;
  h.finish[0]();
  await turns();
  expect(h.looked).toEqual([[1], [2, 3]]);
  expect(h.acted).toEqual(['u1', 'u2', 'u3']);
  expect(h.errors).toEqual([]);
});

it('a held event is looked up after MAX_HOLD_MS whatever the backlog', async () => {
  const h = harness();
  h.state.backlog = MAX_LEAD_MS * 10;
  h.send(1);
  await turns();
  await jest.advanceTimersByTimeAsync(MAX_HOLD_MS - 1);
  await turns();
  expect(h.looked).toEqual([]);
  await jest.advanceTimersByTimeAsync(1);
  await turns();
  expect(h.looked).toEqual([[1]]);
  expect(h.acted).toEqual(['u1']);
});

it('a copy of an event that arrives while it is held or acted on is dropped', async () => {
  const h = harness();
  h.state.backlog = MAX_LEAD_MS;
  h.send(1);
  h.send(1);
  await jest.advanceTimersByTimeAsync(MAX_HOLD_MS);
  await turns();
  h.send(1);
  await turns();
  expect(h.looked).toEqual([[1]]);
  expect(h.acted).toEqual(['u1']);
});

it('a lookup takes at most one batch (500), in order of arrival', async () => {
  const h = harness();
  for (let id = 1; id <= 1200; id++) h.send(id);
  await turns(40);
  expect(h.looked.map((ids) => ids.length)).toEqual([500, 500, 200]);
  expect(h.looked.flat()).toEqual(Array.from({ length: 1200 }, (_, i) => i + 1));
});

it('an event is taken again after a failed lookup (its redelivery), and after one that found it processed elsewhere', async () => {
  const h = harness();
  h.state.fail = true;
  h.send(1);
  await turns();
  expect(h.errors).toHaveLength(1);
  expect(h.acted).toEqual([]);
  h.send(1);
  await turns();
  expect(h.looked).toEqual([[1], [1]]);
  expect(h.acted).toEqual(['u1']);
  h.state.processed.add(2);
  h.send(2);
  await turns();
  h.state.processed.clear();
  h.send(2);
  await turns();
  expect(h.looked).toEqual([[1], [1], [2], [2]]);
  expect(h.acted).toEqual(['u1', 'u2']);
});

it('behind a backlog that never drains, held events flow a batch (500) a second', async () => {
  const h = harness();
  h.state.backlog = MAX_LEAD_MS * 100;
  for (let id = 1; id <= 1200; id++) h.send(id);
  await turns();
  expect(h.looked).toEqual([]);
  for (const expected of [[500], [500, 500], [500, 500, 200]]) {
    await jest.advanceTimersByTimeAsync(MAX_HOLD_MS);
    await turns(40);
    expect(h.looked.map((ids) => ids.length)).toEqual(expected);
  }
});

it('after stop() nothing held is looked up', async () => {
  const h = harness();
  h.state.backlog = MAX_LEAD_MS;
  h.send(1);
  await turns();
  h.consumer.stop();
  await jest.advanceTimersByTimeAsync(MAX_HOLD_MS * 2);
  await turns();
  expect(h.looked).toEqual([]);
  expect(jest.getTimerCount()).toBe(0);
});

it('at most LOOKUPS_AT_ONCE lookups at once; a batch looked up sooner starts after the one before it', async () => {
  expect(LOOKUPS_AT_ONCE).toBe(2);
  const h = harness();
  // The first lookup is slow, the second fast: the second batch's actions still start second.
  h.state.delays = [80, 10, 10];
  h.send(1);
  await turns();
  h.send(2);
  await turns();
  h.send(3);
  await turns();
  expect(h.looked).toEqual([[1], [2]]);
  await jest.advanceTimersByTimeAsync(10);
  await turns();
  expect(h.acted).toEqual([]);
  await jest.advanceTimersByTimeAsync(70);
  await turns();
  expect(h.acted).toEqual(['u1', 'u2']);
  expect(h.looked).toEqual([[1], [2], [3]]);
  await jest.advanceTimersByTimeAsync(10);
  await turns();
  expect(h.acted).toEqual(['u1', 'u2', 'u3']);
  expect(h.errors).toEqual([]);
});

it('the lead follows the time a lookup takes, between MIN_LEAD_MS and MAX_LEAD_MS', async () => {
  const h = harness();
  for (let id = 1; id <= 5; id++) {
    h.send(id);
    await turns();
  }
  expect(h.consumer.leadMs()).toBe(MIN_LEAD_MS);
  // Slow lookups (a busy database): the next batch is looked up further ahead of the wire.
  h.state.lookupMs = 200;
  for (let id = 6; id <= 9; id++) {
    h.send(id);
    await turns();
    await jest.advanceTimersByTimeAsync(200);
    await turns();
  }
  const lead = h.consumer.leadMs();
  expect(lead).toBeGreaterThan(2 * MIN_LEAD_MS);
  expect(lead).toBeLessThanOrEqual(MAX_LEAD_MS);
  // Work lined up within that lead no longer holds an event; beyond it, it does.
  h.state.lookupMs = 0;
  h.state.backlog = lead - 1;
  h.send(10);
  await turns();
  expect(h.looked.at(-1)).toEqual([10]);
  h.state.backlog = lead + 1;
  h.send(11);
  await turns();
  expect(h.looked.at(-1)).toEqual([10]);
  h.consumer.stop();
});
