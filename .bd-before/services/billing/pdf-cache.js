"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.BoundedPdfStore = exports.PgPdfStore = void 0;
exports.pdfCacheOptionsFromEnv = pdfCacheOptionsFromEnv;
const config_1 = require("../../shared/config");
function pdfCacheOptionsFromEnv(env = process.env) {
    return { maxBytes: (0, config_1.intVar)(env, 'PDF_CACHE_MAX_MB', 512, 0) * 1024 * 1024 };
}
/** A hit refreshes `used_at` at most this often, so most hits write nothing. */
const TOUCH_AFTER = '10 minutes';
class PgPdfStore {
    pool;
    constructor(pool) {
        this.pool = pool;
    }
    async get(key) {
        const { rows: [row] } = await this.pool().query({
            name: 'pdf_cache_get',
            text: `with touched as (update pdf_cache set used_at = now() where key = $1 and used_at < now() - interval '${TOUCH_AFTER}')
        select pdf from pdf_cache where key = $1`,
            values: [key],
        });
        return row?.pdf;
    }
    async put(e) {
        await this.pool().query({
            name: 'pdf_cache_put',
            text: `with stored as (insert into pdf_cache (key, invoice_id, paper, pdf, size) values ($1, $2, $3, $4, $5)
          on conflict (key) do nothing)
        delete from pdf_cache where invoice_id = $2 and paper = $3 and key <> $1`,
            values: [e.key, e.invoiceId, e.paper, e.pdf, e.pdf.length],
        });
    }
    async evict(maxBytes) {
        const res = await this.pool().query(`delete from pdf_cache where key in (
        select key from (select key, sum(size) over (order by used_at desc, key) as upto from pdf_cache) ranked where upto > $1)`, [maxBytes]);
        return res.rowCount ?? 0;
    }
}
exports.PgPdfStore = PgPdfStore;
/** Least often the store is trimmed: eviction reads every entry's size, so it runs after puts, at most this often. */
const EVICT_EVERY_MS = 5_000;
/**
 * A store kept under `maxBytes`: trimmed after puts (throttled), least recently used first. The
 * bound can be exceeded by the renders of one throttle window until the next put.
 */
class BoundedPdfStore {
    inner;
    maxBytes;
    onError;
    lastEviction = 0;
    constructor(inner, maxBytes, onError) {
        this.inner = inner;
        this.maxBytes = maxBytes;
        this.onError = onError;
    }
    get(key) {
        return this.inner.get(key);
    }
    async put(entry) {
        await this.inner.put(entry);
        if (Date.now() - this.lastEviction < EVICT_EVERY_MS)
            return;
        this.lastEviction = Date.now();
        void this.inner.evict(this.maxBytes).catch(this.onError);
    }
    evict(maxBytes) {
        return this.inner.evict(maxBytes);
    }
}
exports.BoundedPdfStore = BoundedPdfStore;
//# sourceMappingURL=pdf-cache.js.map