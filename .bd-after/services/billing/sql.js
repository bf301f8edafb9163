"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.namedRows = namedRows;
exports.preparedRows = preparedRows;
const node_crypto_1 = __importDefault(require("node:crypto"));
const pg_core_1 = require("drizzle-orm/pg-core");
const client_1 = require("../../shared/db/client");
/** Turns Drizzle `sql` into text and parameters. */
const dialect = new pg_core_1.PgDialect();
const names = new Map();
/**
 * Runs a read as a named (prepared) statement: the hot reads are parsed and planned once per
 * connection instead of per request (about 3x the throughput of unnamed queries here). The name is
 * derived from the SQL text, so each filter combination of the list is its own statement.
 */
/** A fixed statement by name: nothing is built per call (the single-invoice read, pre-write checks). */
async function namedRows(name, text, values) {
    const res = await (0, client_1.pgPool)().query({ name, text, values });
    return res.rows;
}
async function preparedRows(query) {
    const { sql: text, params } = dialect.sqlToQuery(query);
    let name = names.get(text);
    if (!name) {
        name = `billing_${node_crypto_1.default.createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
        names.set(text, name);
    }
    const res = await (0, client_1.pgPool)().query({ name, text, values: params });
    return res.rows;
}
//# sourceMappingURL=sql.js.map