/**
 * The process's Prometheus metrics (prom-client), one registry per process. Every unit records
 * into it; the gateway's /metrics sums the registries of every process on the bus
 * (runtime/metrics-service.ts, docs/distributed.md), so one scrape sees the whole installation.
 */
import client from 'prom-client';
import { sql } from 'drizzle-orm';
import type { Db } from './db/client';

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

// ------------------------------------------------------------------ pdf-renderer

const pdfRenders = new client.Histogram({
  name: 'pdf_render_duration_seconds',
  help: 'Time from a render request to its PDF (queue wait included), by outcome',
  labelNames: ['outcome'] as const,
  buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
  registers: [registry],
});

/** Renders waiting for a page and pages rendering, read when scraped. */
const pdfQueue = new client.Gauge({
  name: 'pdf_render_queue_depth',
  help: 'Renders waiting for a free page in this pdf-renderer',
  registers: [registry],
});
const pdfActive = new client.Gauge({
  name: 'pdf_renders_in_progress',
  help: 'Renders running on a page in this pdf-renderer',
  registers: [registry],
});

export type RenderOutcome = 'ok' | 'busy' | 'timeout' | 'error';

export function observeRender(outcome: RenderOutcome, seconds: number): void {
  pdfRenders.observe({ outcome }, seconds);
}

export function setPdfQueue(queued: number, active: number): void {
  pdfQueue.set(queued);
  pdfActive.set(active);
}

// ------------------------------------------------------------------ network-access (CoA)

const coaRequests = new client.Counter({
  name: 'coa_requests_total',
  help: 'CoA / Disconnect-Request exchanges with access servers, by kind and outcome',
  labelNames: ['kind', 'outcome'] as const,
  registers: [registry],
});

const coaLatency = new client.Histogram({
  name: 'coa_request_duration_seconds',
  help: 'Time from sending a CoA / Disconnect-Request to its answer (retransmits included), by kind and outcome',
  labelNames: ['kind', 'outcome'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5],
  registers: [registry],
});

/** `coa` is a CoA-Request (code 43), `disconnect` a Disconnect-Request (40), `api` the MikroTik kick. */
export type CoaKind = 'coa' | 'disconnect' | 'api';
/** ack / nak (the NAS answered), timeout (no answer after retransmits), no_session, error. */
export type CoaOutcome = 'ack' | 'nak' | 'timeout' | 'no_session' | 'error';

export function observeCoa(kind: CoaKind, outcome: CoaOutcome, seconds: number): void {
  coaRequests.inc({ kind, outcome });
  coaLatency.observe({ kind, outcome }, seconds);
}

// ------------------------------------------------------------------ database-wide gauges

/**
 * Outbox lag and bulk job progress are facts of the database, not of a process: one process
 * (the gateway) reads them at scrape time, so summing processes never counts them twice.
 */
export function registerDatabaseGauges(database: () => Db): void {
  if (registry.getSingleMetric('outbox_pending_events')) return;
  // One query for all five gauges of a scrape, shared by whichever gauge is collected first.
  let reading: Promise<Record<string, number>> | undefined;
  const read = (): Promise<Record<string, number>> => {
    reading ??= database()
      .execute(
        sql`
        select (select count(*) from outbox where published_at is null)::int as pending,
               coalesce((select extract(epoch from now() - min(created_at)) from outbox where published_at is null), 0)::float8 as lag,
               count(*)::int as running,
               coalesce(sum(total - processed), 0)::int as remaining,
               coalesce(sum(processed), 0)::int as processed
          from bulk_jobs where status = 'running'`,
      )
      .then((r) => r.rows[0] as Record<string, number>)
      .finally(() => setTimeout(() => (reading = undefined), 0));
    return reading;
  };
  const gauge = (name: string, help: string, column: string) =>
    new client.Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        try {
          this.set(Number((await read())[column]));
        } catch {
          // Database unreachable: keep the last value rather than failing the whole scrape.
        }
      },
    });
  gauge('outbox_pending_events', 'Outbox events not yet published', 'pending');
  gauge('outbox_lag_seconds', 'Age of the oldest unpublished outbox event (0 when none)', 'lag');
  gauge('bulk_jobs_running', 'Bulk jobs still running', 'running');
  gauge('bulk_job_items_remaining', 'Subscribers that running bulk jobs have yet to process', 'remaining');
  gauge('bulk_job_items_processed', 'Subscribers that running bulk jobs have processed so far', 'processed');
}
