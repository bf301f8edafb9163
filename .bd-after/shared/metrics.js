"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.registry = void 0;
exports.observeRender = observeRender;
exports.setPdfQueue = setPdfQueue;
exports.observeCoa = observeCoa;
exports.registerDatabaseGauges = registerDatabaseGauges;
/**
 * The process's Prometheus metrics (prom-client), one registry per process. Every unit records
 * into it; the gateway's /metrics sums the registries of every process on the bus
 * (runtime/metrics-service.ts, docs/distributed.md), so one scrape sees the whole installation.
 */
const prom_client_1 = __importDefault(require("prom-client"));
const drizzle_orm_1 = require("drizzle-orm");
exports.registry = new prom_client_1.default.Registry();
prom_client_1.default.collectDefaultMetrics({ register: exports.registry });
const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// ------------------------------------------------------------------ pdf-renderer
const pdfRenders = new prom_client_1.default.Histogram({
    name: 'pdf_render_duration_seconds',
    help: 'Time from a render request to its PDF (queue wait included), by outcome',
    labelNames: ['outcome'],
    buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
    registers: [exports.registry],
});
/** Renders waiting for a page and pages rendering, read when scraped. */
const pdfQueue = new prom_client_1.default.Gauge({
    name: 'pdf_render_queue_depth',
    help: 'Renders waiting for a free page in this pdf-renderer',
    registers: [exports.registry],
});
const pdfActive = new prom_client_1.default.Gauge({
    name: 'pdf_renders_in_progress',
    help: 'Renders running on a page in this pdf-renderer',
    registers: [exports.registry],
});
function observeRender(outcome, seconds) {
    pdfRenders.observe({ outcome }, seconds);
}
function setPdfQueue(queued, active) {
    pdfQueue.set(queued);
    pdfActive.set(active);
}
// ------------------------------------------------------------------ network-access (CoA)
const coaRequests = new prom_client_1.default.Counter({
    name: 'coa_requests_total',
    help: 'CoA / Disconnect-Request exchanges with access servers, by kind and outcome',
    labelNames: ['kind', 'outcome'],
    registers: [exports.registry],
});
const coaLatency = new prom_client_1.default.Histogram({
    name: 'coa_request_duration_seconds',
    help: 'Time from sending a CoA / Disconnect-Request to its answer (retransmits included), by kind and outcome',
    labelNames: ['kind', 'outcome'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5],
    registers: [exports.registry],
});
function observeCoa(kind, outcome, seconds) {
    coaRequests.inc({ kind, outcome });
    coaLatency.observe({ kind, outcome }, seconds);
}
// ------------------------------------------------------------------ database-wide gauges
/**
 * Outbox lag and bulk job progress are facts of the database, not of a process: one process
 * (the gateway) reads them at scrape time, so summing processes never counts them twice.
 */
function registerDatabaseGauges(database) {
    if (exports.registry.getSingleMetric('outbox_pending_events'))
        return;
    // One query for all five gauges of a scrape, shared by whichever gauge is collected first.
    let reading;
    const read = () => {
        reading ??= database()
            .execute((0, drizzle_orm_1.sql) `
        select (select count(*) from outbox where published_at is null)::int as pending,
               coalesce((select extract(epoch from now() - min(created_at)) from outbox where published_at is null), 0)::float8 as lag,
               count(*)::int as running,
               coalesce(sum(total - processed), 0)::int as remaining,
               coalesce(sum(processed), 0)::int as processed
          from bulk_jobs where status = 'running'`)
            .then((r) => r.rows[0])
            .finally(() => setTimeout(() => (reading = undefined), 0));
        return reading;
    };
    const gauge = (name, help, column) => new prom_client_1.default.Gauge({
        name,
        help,
        registers: [exports.registry],
        async collect() {
            try {
                this.set(Number((await read())[column]));
            }
            catch {
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
//# sourceMappingURL=metrics.js.map