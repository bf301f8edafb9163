/**
 * Outbox events turned into router actions, idempotently by event id: an event already in
 * `processed_events`, or held or being worked on here, is skipped. Events arriving together (a bulk
 * job's batch) are looked up together: one query for their processed state and one for their
 * sessions, side by side; and only as far ahead of the wire as a lookup takes (MIN_LEAD_MS).
 */
import { DISCONNECT_EVENT } from '../../shared/access/outbox';
import { RATE_LIMIT_EVENT, type RateLimitEvent as RateLimitPayload } from '../../shared/fup-rate';
import type { OutcomeRecorder } from './outcomes';
import type { RouterActions } from './router-actions';
import { liveSessions, processedAmong, type LiveSession, type SessionOwner } from './sessions';

export { DISCONNECT_EVENT, RATE_LIMIT_EVENT };
export const CONSUMED_EVENTS = [DISCONNECT_EVENT, RATE_LIMIT_EVENT];

/** The relay adds `event_id` (the outbox row id) to the row's payload. */
export interface DisconnectEvent {
  event_id: number;
  subscriber_id: number;
  username: string;
  reason?: string;
}

/** The FUP engine's event (shared/fup-rate.ts); `rate_limit` null means no limit applies. */
export interface RateLimitEvent extends RateLimitPayload {
  event_id: number;
}

/** Actions started in one go: see process(). */
const START_SLICE = 64;
/**
 * The next batch is looked up once the work lined up behind the NASes that answer would reach the
 * wire within this lead (ms at their pace, the CoA client's `queuedMs`): LEAD_LOOKUPS times what a
 * lookup takes (measured, a moving average), never under MIN_LEAD_MS nor over MAX_LEAD_MS. A lead
 * in requests (64, before) ran the queue dry during every lookup of a busy first job (issue 41:
 * 30 of 64 in flight on average, bench:coa), and events looked up far ahead of the wire wait as
 * async chains that cost the CPU the replies need (5,000 of them, before the pacing).
 */
export const MIN_LEAD_MS = 100;
export const MAX_LEAD_MS = 1000;
const LEAD_LOOKUPS = 3;
/**
 * Lookups under way at once: a busy database's round trip would otherwise cap the pace at one
 * batch per lookup. Their actions start in the order the batches arrived.
 */
export const LOOKUPS_AT_ONCE = 2;
/** A batch's lookup time before one was measured. */
const FIRST_LOOKUP_MS = 50;
/**
 * Fairness between NASes: events for a NAS that answers fast wait at most this long behind a queue
 * of a slow one (their NAS is known only once looked up). Not a pace: behind a NAS that keeps up,
 * the lead above takes the next batch well before.
 */
export const MAX_HOLD_MS = 1000;

type Job = { action: 'disconnect'; event: DisconnectEvent } | { action: 'rate_limit'; event: RateLimitEvent };

/** What the consumer learns about a batch of events before acting on them. */
export interface EventLookup {
  processedAmong(eventIds: number[]): Promise<Set<number>>;
  liveSessions(owners: SessionOwner[]): Promise<Map<string, LiveSession[]>>;
}

export interface EventConsumerOptions {
  actions: RouterActions;
  recorder: Pick<OutcomeRecorder, 'record' | 'flush'>;
  onError: (err: unknown) => void;
  /** How long, in ms, the actions waiting for a place on the wire take to get one (the CoA client's `queuedMs`). */
  backlogMs: () => number;
  lookup?: EventLookup;
  maxBatch?: number;
}

export class EventConsumer {
  /** Arrived events not yet looked up, in order. */
  private batch: Job[] = [];
  /** When the oldest event in `batch` arrived, or the last batch was taken if later (performance.now()). */
  private heldSince = 0;
  private holdTimer: NodeJS.Timeout | undefined;
  /** Batches taken from `batch` and not yet all started (lookups, then the start in slices). */
  private looking = 0;
  /** Settles when the batch taken last has started its actions (or failed): the next one starts after it. */
  private started: Promise<void> = Promise.resolve();
  private scheduled = false;
  /** Event ids held in `batch` or being worked on: a copy arriving meanwhile is dropped. */
  private readonly working = new Set<number>();
  /** Events whose router action is under way (not yet waiting for their outcome to be written). */
  private acting = 0;
  private stopped = false;
  private readonly actions: RouterActions;
  private readonly recorder: Pick<OutcomeRecorder, 'record' | 'flush'>;
  private readonly onError: (err: unknown) => void;
  private readonly backlogMs: () => number;
  /** Moving average of a batch's lookup time, in ms. */
  private lookupMs = FIRST_LOOKUP_MS;
  private readonly lookup: EventLookup;
  private readonly maxBatch: number;

  constructor(o: EventConsumerOptions) {
    this.actions = o.actions;
    this.recorder = o.recorder;
    this.onError = o.onError;
    this.backlogMs = o.backlogMs;
    this.lookup = o.lookup ?? { processedAmong, liveSessions };
    this.maxBatch = o.maxBatch ?? 500;
  }

  disconnect(event: DisconnectEvent): void {
    this.push({ action: 'disconnect', event });
  }

  rateLimit(event: RateLimitEvent): void {
    this.push({ action: 'rate_limit', event });
  }

  /**
   * Shutting down: results from here on are not recorded (a closing CoA client reports errors,
   * not what the routers did), so those events stay unprocessed and are sent again.
   */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.holdTimer);
  }

  private push(job: Job): void {
    if (!Number.isSafeInteger(job.event.event_id) || !job.event.username) {
      this.onError(new Error(`malformed ${job.action} event: ${JSON.stringify(job.event)}`));
      return;
    }
    if (this.stopped || this.working.has(job.event.event_id)) return;
    this.working.add(job.event.event_id);
    if (this.batch.length === 0) this.heldSince = performance.now();
    this.batch.push(job);
    this.pump();
  }

  /**
   * Runs the lookups once, as many at once as a job's first batches will, on nothing: the pool's
   * connections they take are opened, and their backends have read the tables' catalog entries,
   * before a job's first events (the first job after a start waited 1 s for them, bench:coa).
   */
  async warm(): Promise<void> {
    await Promise.all(
      Array.from({ length: LOOKUPS_AT_ONCE }, () =>
        Promise.all([this.lookup.processedAmong([0]), this.lookup.liveSessions([{ username: '' }])]),
      ),
    );
  }

  /** The lead the lookups keep ahead of the wire: see MIN_LEAD_MS. */
  leadMs(): number {
    return Math.min(MAX_LEAD_MS, Math.max(MIN_LEAD_MS, LEAD_LOOKUPS * this.lookupMs));
  }

  /**
   * Looks up the next batch of arrived events, up to LOOKUPS_AT_ONCE at a time, once the work lined
   * up is within the lead (leadMs), or the oldest has waited MAX_HOLD_MS.
   */
  private pump(): void {
    if (this.batch.length === 0 || this.stopped || this.scheduled) return;
    const held = performance.now() - this.heldSince;
    if ((this.looking >= LOOKUPS_AT_ONCE || this.backlogMs() >= this.leadMs()) && held < MAX_HOLD_MS) {
      if (!this.holdTimer) {
        this.holdTimer = setTimeout(() => {
          this.holdTimer = undefined;
          this.pump();
        }, MAX_HOLD_MS - held);
        this.holdTimer.unref();
      }
      return;
    }
    if (this.batch.length >= this.maxBatch) this.take();
    else {
      this.scheduled = true;
      // Whatever arrives in the same turn of the event loop is looked up in one go.
      setImmediate(() => {
        this.scheduled = false;
        this.take();
      });
    }
  }

  private take(): void {
    const jobs = this.batch.splice(0, this.maxBatch);
    if (jobs.length === 0 || this.stopped) return;
    this.heldSince = performance.now();
    this.looking++;
    const turn = this.started;
    let done!: () => void;
    this.started = new Promise((resolve) => (done = resolve));
    this.track(
      this.process(jobs, turn).finally(() => {
        done();
        this.looking--;
        this.pump();
      }),
    );
  }

  private track(p: Promise<unknown>): void {
    p.catch(this.onError);
  }

  /** Looks `jobs` up, then, once the batch before has started (`turn`), starts their actions. */
  private async process(jobs: Job[], turn: Promise<void>): Promise<void> {
    try {
      // Both at once: an event already processed elsewhere (a redelivery) is rare, and its sessions
      // looked up for nothing cost less than a second round trip before every batch's first request.
      const t0 = performance.now();
      const [done, sessions] = await Promise.all([
        this.lookup.processedAmong(jobs.map((j) => j.event.event_id)),
        this.lookup.liveSessions(
          jobs.map((j) => ({ username: j.event.username, subscriberId: j.event.subscriber_id })),
        ),
      ]);
      this.lookupMs += (performance.now() - t0 - this.lookupMs) / 4;
      await turn;
      const todo = jobs.filter((j) => !done.has(j.event.event_id));
      for (const j of jobs) if (done.has(j.event.event_id)) this.working.delete(j.event.event_id);
      for (let i = 0; i < todo.length; i++) {
        // A batch's 500 actions started in slices, the event loop reading what arrived in between:
        // replies to the requests already out, each of which frees a place among those in flight
        // (starting 500 at once held the loop for up to 15 ms during a bulk job, bench:coa).
        if (i > 0 && i % START_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
        if (this.stopped) {
          for (const j of todo.slice(i)) this.working.delete(j.event.event_id);
          return;
        }
        this.track(this.run(todo[i], sessions.get(todo[i].event.username) ?? []));
      }
    } catch (err) {
      // Not looked up, so not acted on: the relay sends these events again later.
      for (const j of jobs) this.working.delete(j.event.event_id);
      throw err;
    }
  }

  private async run(job: Job, sessions: LiveSession[]): Promise<void> {
    const e = job.event;
    this.acting++;
    let acting = true;
    try {
      // A CoA can set a rate but not lift one: with no limit to apply, the session is disconnected
      // and reconnects with the attributes FreeRADIUS now gives it.
      const result =
        job.action === 'rate_limit' && job.event.rate_limit
          ? await this.actions.changeRate(e.username, sessions, job.event.rate_limit)
          : await this.actions.disconnect(e.username, sessions);
      this.acting--;
      acting = false;
      // This action's place on the wire went to a waiting one: room, perhaps, for the next batch.
      this.pump();
      if (this.stopped) return;
      const recorded = this.recorder.record({
        event_id: e.event_id,
        source: 'event',
        action: job.action,
        subscriber_id: e.subscriber_id ?? null,
        username: e.username,
        reason:
          job.action === 'disconnect'
            ? (job.event.reason ?? null)
            : `fup_level ${job.event.fup_level}: ${job.event.rate_limit ?? 'no limit (disconnected)'}`,
        outcome: result.outcome,
        sessions: result.sessions,
      });
      // The last action of a burst: its outcomes are written now rather than after the recorder's delay.
      if (this.acting === 0) void this.recorder.flush();
      await recorded;
    } finally {
      if (acting) {
        this.acting--;
        this.pump();
      }
      this.working.delete(e.event_id);
    }
  }
}
