"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.EventConsumer = exports.CONSUMED_EVENTS = exports.RATE_LIMIT_EVENT = exports.DISCONNECT_EVENT = void 0;
/**
 * Outbox events turned into router actions, idempotently by event id: an event already in
 * `processed_events`, or being worked on here, is skipped. Events arriving together (a bulk job's
 * batch) are looked up together: one query for their processed state and one for their sessions.
 */
const fup_rate_1 = require("../../shared/fup-rate");
Object.defineProperty(exports, "RATE_LIMIT_EVENT", { enumerable: true, get: function () { return fup_rate_1.RATE_LIMIT_EVENT; } });
const sessions_1 = require("./sessions");
/** Written by the subscribers unit (services/subscribers/outbox.ts), which this unit may not import. */
exports.DISCONNECT_EVENT = 'subscriber.disconnect';
exports.CONSUMED_EVENTS = [exports.DISCONNECT_EVENT, fup_rate_1.RATE_LIMIT_EVENT];
class EventConsumer {
    actions;
    recorder;
    onError;
    maxBatch;
    batch = [];
    scheduled = false;
    working = new Set();
    stopped = false;
    constructor(actions, recorder, onError, maxBatch = 500) {
        this.actions = actions;
        this.recorder = recorder;
        this.onError = onError;
        this.maxBatch = maxBatch;
    }
    disconnect(event) {
        this.push({ action: 'disconnect', event });
    }
    rateLimit(event) {
        this.push({ action: 'rate_limit', event });
    }
    /**
     * Shutting down: results from here on are not recorded (a closing CoA client reports errors,
     * not what the routers did), so those events stay unprocessed and are sent again.
     */
    stop() {
        this.stopped = true;
    }
    push(job) {
        if (!Number.isSafeInteger(job.event.event_id) || !job.event.username) {
            this.onError(new Error(`malformed ${job.action} event: ${JSON.stringify(job.event)}`));
            return;
        }
        if (this.stopped)
            return;
        this.batch.push(job);
        if (this.batch.length >= this.maxBatch)
            this.track(this.process(this.batch.splice(0)));
        else if (!this.scheduled) {
            this.scheduled = true;
            // Whatever arrives in the same turn of the event loop is looked up in one go.
            setImmediate(() => {
                this.scheduled = false;
                if (this.batch.length)
                    this.track(this.process(this.batch.splice(0)));
            });
        }
    }
    track(p) {
        p.catch(this.onError);
    }
    async process(jobs) {
        const fresh = jobs.filter((j) => {
            if (this.working.has(j.event.event_id))
                return false;
            this.working.add(j.event.event_id);
            return true;
        });
        if (fresh.length === 0)
            return;
        try {
            const done = await (0, sessions_1.processedAmong)(fresh.map((j) => j.event.event_id));
            const todo = fresh.filter((j) => !done.has(j.event.event_id));
            for (const j of fresh)
                if (done.has(j.event.event_id))
                    this.working.delete(j.event.event_id);
            const sessions = await (0, sessions_1.liveSessions)(todo.map((j) => ({ username: j.event.username, subscriberId: j.event.subscriber_id })));
            for (const job of todo)
                this.track(this.run(job, sessions.get(job.event.username) ?? []));
        }
        catch (err) {
            // Not looked up, so not acted on: the relay sends these events again later.
            for (const j of fresh)
                this.working.delete(j.event.event_id);
            throw err;
        }
    }
    async run(job, sessions) {
        const e = job.event;
        try {
            // A CoA can set a rate but not lift one: with no limit to apply, the session is disconnected
            // and reconnects with the attributes FreeRADIUS now gives it.
            const result = job.action === 'rate_limit' && job.event.rate_limit
                ? await this.actions.changeRate(e.username, sessions, job.event.rate_limit)
                : await this.actions.disconnect(e.username, sessions);
            if (this.stopped)
                return;
            await this.recorder.record({
                event_id: e.event_id,
                source: 'event',
                action: job.action,
                subscriber_id: e.subscriber_id ?? null,
                username: e.username,
                reason: job.action === 'disconnect' ? job.event.reason ?? null : `fup_level ${job.event.fup_level}: ${job.event.rate_limit ?? 'no limit (disconnected)'}`,
                outcome: result.outcome,
                sessions: result.sessions,
            });
        }
        finally {
            this.working.delete(e.event_id);
        }
    }
}
exports.EventConsumer = EventConsumer;
//# sourceMappingURL=event-consumer.js.map