"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.OutcomeRecorder = void 0;
exports.writeOutcomes = writeOutcomes;
/**
 * `coa_outcomes` rows, written in batches: a bulk job's thousands of outcomes cost a handful of
 * statements. An event's outcome and its `processed_events` row go in the same statement, so an
 * event is marked done exactly when its outcome is on record; an outcome lost in a crash leaves
 * its event unprocessed, and the relay sends it again.
 */
const drizzle_orm_1 = require("drizzle-orm");
const client_1 = require("../../shared/db/client");
async function writeOutcomes(records) {
    if (records.length === 0)
        return;
    await (0, client_1.db)().execute((0, drizzle_orm_1.sql) `
    with r as (
      select * from jsonb_to_recordset(${drizzle_orm_1.sql.param(JSON.stringify(records))}::jsonb)
        as r(event_id bigint, source text, action text, subscriber_id int, username text, reason text, outcome text, sessions jsonb)
    ), saved as (
      insert into coa_outcomes (event_id, source, action, subscriber_id, username, reason, outcome, sessions)
      select event_id, source, action, subscriber_id, username, reason, outcome, sessions from r
      on conflict (event_id) where event_id is not null do nothing
    )
    insert into processed_events (event_id) select event_id from r where event_id is not null
    on conflict (event_id) do nothing`);
}
/** Collects records and writes them every `delayMs`, or at once when `maxBatch` are waiting. */
class OutcomeRecorder {
    onError;
    delayMs;
    maxBatch;
    queue = [];
    timer;
    writing = Promise.resolve();
    constructor(onError, delayMs = 20, maxBatch = 500) {
        this.onError = onError;
        this.delayMs = delayMs;
        this.maxBatch = maxBatch;
    }
    /** Resolves once the record is written; rejects when the write failed. */
    record(record) {
        return new Promise((resolve, reject) => {
            this.queue.push({ record, done: (err) => (err ? reject(err) : resolve()) });
            if (this.queue.length >= this.maxBatch)
                void this.flush();
            else
                this.timer ??= setTimeout(() => void this.flush(), this.delayMs);
        });
    }
    /** Writes what is queued (one statement per batch, in order). */
    flush() {
        if (this.timer)
            clearTimeout(this.timer);
        this.timer = undefined;
        const batch = this.queue.splice(0, this.queue.length);
        if (batch.length === 0)
            return this.writing;
        this.writing = this.writing.then(async () => {
            try {
                await writeOutcomes(batch.map((b) => b.record));
                for (const b of batch)
                    b.done();
            }
            catch (err) {
                this.onError(err);
                for (const b of batch)
                    b.done(err);
            }
        });
        return this.writing;
    }
}
exports.OutcomeRecorder = OutcomeRecorder;
//# sourceMappingURL=outcomes.js.map