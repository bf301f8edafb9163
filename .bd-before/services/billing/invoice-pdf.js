"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.DOCUMENT_SETTINGS = void 0;
exports.pdfSource = pdfSource;
exports.pdfCacheKey = pdfCacheKey;
exports.pdfStream = pdfStream;
exports.cachedPdf = cachedPdf;
/**
 * An invoice's PDF, rendered once (docs/documents.md, "PDF cache"). The cache key is a hash of
 * everything the page shows: the invoice row, its items and payments, the subscriber's printed
 * fields and the document settings (one SQL statement hashes them where they live), plus the
 * paper, the template's source, the setting defaults and the public-link origin and key. Any
 * change that could alter the page gives a new key, so an entry can never be stale; a miss
 * renders from one snapshot of the same rows the key was computed from.
 */
const node_crypto_1 = __importDefault(require("node:crypto"));
const node_fs_1 = __importDefault(require("node:fs"));
const node_path_1 = __importDefault(require("node:path"));
const node_stream_1 = require("node:stream");
const pg_1 = require("../../shared/billing/pg");
const client_1 = require("../../shared/db/client");
const public_links_1 = require("../../shared/public-links");
const settings_1 = require("../../shared/settings");
/** Settings a document prints (or that pick its paper). */
exports.DOCUMENT_SETTINGS = [
    'language', 'operator_name', 'operator_address', 'operator_phone', 'operator_email', 'operator_logo_url', 'how_to_pay', 'default_paper_size',
];
// Fields are joined with separators no value holds (unit and record separators), and absent parts
// are empty strings, so two different documents never concatenate to the same text.
const SOURCE = `select i.id, i.reseller_id as "resellerId", i.invoice_number as "invoiceNumber",
    i.public_token_hash as "publicTokenHash",
    coalesce((select value #>> '{}' from settings where key = 'default_paper_size'), $3) as "defaultPaper",
    md5(concat_ws(E'\\x1f', i::text,
      coalesce((select string_agg(t::text, E'\\x1e' order by t.position, t.id) from invoice_items t where t.invoice_id = i.id), ''),
      coalesce((select string_agg(p::text, E'\\x1e' order by p.id) from invoice_payments p where p.invoice_id = i.id), ''),
      coalesce((select row(s.id, s.username, s.full_name, s.phone, s.address)::text from subscribers s where s.id = i.subscriber_id), ''),
      coalesce((select string_agg(k.key || '=' || k.value::text, E'\\x1e' order by k.key) from settings k where k.key = any($2::text[])), '')
    )) as fingerprint
  from invoices i where i.id = $1`;
/** What the key needs and the routes check (scope, public token, file name), in one statement. */
async function pdfSource(id, client) {
    const query = { name: 'billing_pdf_source', text: SOURCE, values: [id, exports.DOCUMENT_SETTINGS, settings_1.SETTING_DEFS.default_paper_size.default] };
    const { rows: [row] } = await (client ?? (0, client_1.pgPool)()).query(query);
    return row;
}
/** Source files whose change alters pages: the template, its labels and the model built for it. */
function templateSources() {
    const dir = node_path_1.default.join(__dirname, 'templates');
    const ext = node_path_1.default.extname(__filename);
    const files = node_fs_1.default.readdirSync(dir).filter((f) => f.endsWith(ext)).sort().map((f) => node_path_1.default.join(dir, f));
    return [...files, node_path_1.default.join(__dirname, `documents-model${ext}`)];
}
let version;
/**
 * What else a page depends on, fixed for a process: the template's code, the settings' defaults,
 * and the public link's origin and key (a probe link changes with either).
 */
function renderVersion() {
    if (version)
        return version;
    const h = node_crypto_1.default.createHash('sha256');
    for (const file of templateSources())
        h.update(node_fs_1.default.readFileSync(file));
    h.update(JSON.stringify(exports.DOCUMENT_SETTINGS.map((k) => settings_1.SETTING_DEFS[k].default)));
    h.update((0, public_links_1.publicUrl)(0, 'cache-key-probe'));
    version = h.digest('hex');
    return version;
}
function pdfCacheKey(source, paper) {
    return node_crypto_1.default.createHash('sha256').update(`${source.fingerprint}\x1f${paper}\x1f${renderVersion()}`).digest('hex');
}
const CHUNK_BYTES = 64 * 1024;
/** Bytes as a stream of 64 KiB chunks: each is one transporter message (NATS caps them at 1 MB). */
function pdfStream(bytes) {
    const parts = [];
    for (let i = 0; i < bytes.length; i += CHUNK_BYTES)
        parts.push(bytes.subarray(i, i + CHUNK_BYTES));
    return node_stream_1.Readable.from(parts, { objectMode: false });
}
async function collect(stream) {
    const parts = [];
    for await (const part of stream)
        parts.push(Buffer.isBuffer(part) ? part : Buffer.from(part));
    return Buffer.concat(parts);
}
/**
 * The PDF of the invoice `source` describes: from the store when its key is there, else rendered
 * from rows read in one REPEATABLE READ snapshot together with the fingerprint that keys them, so
 * the stored bytes are exactly what the key says (a change committed meanwhile only yields a newer
 * key). A store that fails costs a render, never the request. Without a store: the renderer's stream.
 */
async function cachedPdf(source, paper, deps) {
    if (!deps.store)
        return deps.render(await deps.html((0, client_1.db)(), paper), paper);
    const hit = await deps.store.get(pdfCacheKey(source, paper)).catch((err) => deps.onStoreError(err));
    if (hit)
        return hit;
    const snap = await snapshotHtml(source.id, paper, deps);
    const pdf = await collect(await deps.render(snap.html, paper));
    if (snap.source) {
        await deps.store.put({ key: pdfCacheKey(snap.source, paper), invoiceId: source.id, paper, pdf }).catch((err) => deps.onStoreError(err));
    }
    return pdf;
}
async function snapshotHtml(id, paper, deps) {
    return (0, client_1.db)().transaction(async (tx) => {
        const source = await pdfSource(id, (0, pg_1.clientOf)(tx));
        return { html: await deps.html(tx, paper), source };
    }, { isolationLevel: 'repeatable read', accessMode: 'read only' });
}
//# sourceMappingURL=invoice-pdf.js.map