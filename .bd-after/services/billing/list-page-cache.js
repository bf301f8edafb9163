"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.listPageKey = listPageKey;
exports.listPageEntriesFromEnv = listPageEntriesFromEnv;
/**
 * Pages of GET /api/invoices kept between requests (docs/billing.md, "Pages kept between
 * requests"): a search, a reseller's tree, a date range, or any of them together, as long as no
 * status or subscriber filter is set. Which invoices such a list holds, and in what order, changes
 * only when invoice_list_generation does (migrations 0010, 0012); payments and status changes do
 * not move it. An entry holds the page's ids, in list order, its total and the generation they were
 * read at; invoice-list.ts serves it only after reading that generation unchanged in the statement
 * that reads the rows, so it is never stale and its rows are always current. A broad search costs
 * about 30 ms of PostgreSQL per page at a million invoices and a deep page of a tree merges
 * thousands of index entries; a kept page is 50 rows read by id.
 *
 * Per process, in a shared/lru.ts map: least recently used entries go first past the bound.
 */
const config_1 = require("../../shared/config");
function listPageKey(k) {
    return JSON.stringify([k.search ?? null, k.resellers ?? null, k.from ?? null, k.to ?? null, k.order, k.limit, k.offset]);
}
/** INVOICE_PAGE_CACHE_ENTRIES: pages kept per billing process; 0 keeps none. */
function listPageEntriesFromEnv(env = process.env) {
    return (0, config_1.intVar)(env, 'INVOICE_PAGE_CACHE_ENTRIES', 10_000, 0);
}
//# sourceMappingURL=list-page-cache.js.map