/**
 * Outbox events turned into router actions, idempotently by event id: an event already in
 * `processed_events`, or being worked on here, is skipped. Events arriving together (a bulk job's
 * batch) are looked up together: one query for their processed state and one for their sessions,
 * side by side.
 */
import { DISCONNECT_EVENT } from '../../shared/access/outbox';
import { RATE_LIMIT_EVENT, type RateLimitEvent as RateLimitPayload } from '../../shared/fup-rate';
import type { OutcomeRecorder } from './outcomes';
import type { RouterActions } from './router-actions';
import { liveSessions, processedAmong, type LiveSession } from './sessions';

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

type Job = { action: 'disconnect'; event: DisconnectEvent } | { action: 'rate_limit'; event: RateLimitEvent };

export class EventConsumer {
  private batch: Job[] = [];
  private scheduled = false;
  private readonly working = new Set<number>();
  /** Events whose router action is under way (not yet waiting for their outcome to be written). */
  private acting = 0;
  private stopped = false;

  constructor(
    private readonly actions: RouterActions,
    private readonly recorder: OutcomeRecorder,
    private readonly onError: (err: unknown) => void,
    private readonly maxBatch = 500,
  ) {}

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
  }

  private push(job: Job): void {
    if (!Number.isSafeInteger(job.event.event_id) || !job.event.username) {
      this.onError(new Error(`malformed ${job.action} event: ${JSON.stringify(job.event)}`));
      return;
    }
    if (this.stopped) return;
    this.batch.push(job);
    if (this.batch.length >= this.maxBatch) this.track(this.process(this.batch.splice(0)));
    else if (!this.scheduled) {
      this.scheduled = true;
      // Whatever arrives in the same turn of the event loop is looked up in one go.
      setImmediate(() => {
        this.scheduled = false;
        if (this.batch.length) this.track(this.process(this.batch.splice(0)));
      });
    }
  }

  private track(p: Promise<unknown>): void {
    p.catch(this.onError);
  }

  private async process(jobs: Job[]): Promise<void> {
    const fresh = jobs.filter((j) => {
      if (this.working.has(j.event.event_id)) return false;
      this.working.add(j.event.event_id);
      return true;
    });
    if (fresh.length === 0) return;
    try {
      // Both at once: an event already processed elsewhere (a redelivery) is rare, and its sessions
      // looked up for nothing cost less than a second round trip before every batch's first request.
      const [done, sessions] = await Promise.all([
        processedAmong(fresh.map((j) => j.event.event_id)),
        liveSessions(fresh.map((j) => ({ username: j.event.username, subscriberId: j.event.subscriber_id }))),
      ]);
      const todo = fresh.filter((j) => !done.has(j.event.event_id));
      for (const j of fresh) if (done.has(j.event.event_id)) this.working.delete(j.event.event_id);
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
      for (const j of fresh) this.working.delete(j.event.event_id);
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
      if (acting) this.acting--;
      this.working.delete(e.event_id);
    }
  }
}
