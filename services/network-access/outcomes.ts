/**
 * `coa_outcomes` rows, written in batches: a bulk job's thousands of outcomes cost a handful of
 * statements. An event's outcome and its `processed_events` row go in the same statement, so an
 * event is marked done exactly when its outcome is on record; an outcome lost in a crash leaves
 * its event unprocessed, and the relay sends it again.
 */
import { sql } from 'drizzle-orm';
import { db } from '../../shared/db/client';
import type { Outcome } from './coa/outcome';
import type { SessionResult } from './router-actions';

export interface OutcomeRecord {
  event_id: number | null;
  /** `verify`: a re-check of an acknowledged disconnect (verify.ts). */
  source: 'event' | 'request' | 'verify';
  action: 'disconnect' | 'rate_limit';
  subscriber_id: number | null;
  username: string;
  reason: string | null;
  outcome: Outcome;
  sessions: SessionResult[];
}

export async function writeOutcomes(records: OutcomeRecord[]): Promise<void> {
  if (records.length === 0) return;
  await writeRecordSet(JSON.stringify(records));
}

/**
 * The outcome statement on nothing, so that the backend that runs it has read the two tables' and
 * their indexes' catalog entries before a job: the first job's first writes took 260 to 430 ms
 * against a few ms warm (bench:coa under load), holding a connection the job's lookups wanted.
 */
export async function warmOutcomeWrites(): Promise<void> {
  await writeRecordSet('[]');
}

async function writeRecordSet(json: string): Promise<void> {
  await db().execute(sql`
    with r as (
      select * from jsonb_to_recordset(${sql.param(json)}::jsonb)
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
export class OutcomeRecorder {
  private queue: { record: OutcomeRecord; done: (err?: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly onError: (err: unknown) => void,
    private readonly delayMs = 20,
    private readonly maxBatch = 500,
  ) {}

  /** Resolves once the record is written; rejects when the write failed. */
  record(record: OutcomeRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ record, done: (err) => (err ? reject(err) : resolve()) });
      if (this.queue.length >= this.maxBatch) void this.flush();
      else this.timer ??= setTimeout(() => void this.flush(), this.delayMs);
    });
  }

  /** Writes what is queued (one statement per batch, in order). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue.splice(0, this.queue.length);
    if (batch.length === 0) return this.writing;
    this.writing = this.writing.then(async () => {
      try {
        await writeOutcomes(batch.map((b) => b.record));
        for (const b of batch) b.done();
      } catch (err) {
        this.onError(err);
        for (const b of batch) b.done(err);
      }
    });
    return this.writing;
  }
}
