"use strict";
var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    var desc = Object.getOwnPropertyDescriptor(m, k);
    if (!desc || ("get" in desc ? !m.__esModule : desc.writable || desc.configurable)) {
      desc = { enumerable: true, get: function() { return m[k]; } };
    }
    Object.defineProperty(o, k2, desc);
}) : (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    o[k2] = m[k];
}));
var __setModuleDefault = (this && this.__setModuleDefault) || (Object.create ? (function(o, v) {
    Object.defineProperty(o, "default", { enumerable: true, value: v });
}) : function(o, v) {
    o["default"] = v;
});
var __importStar = (this && this.__importStar) || (function () {
    var ownKeys = function(o) {
        ownKeys = Object.getOwnPropertyNames || function (o) {
            var ar = [];
            for (var k in o) if (Object.prototype.hasOwnProperty.call(o, k)) ar[ar.length] = k;
            return ar;
        };
        return ownKeys(o);
    };
    return function (mod) {
        if (mod && mod.__esModule) return mod;
        var result = {};
        if (mod != null) for (var k = ownKeys(mod), i = 0; i < k.length; i++) if (k[i] !== "default") __createBinding(result, mod, k[i]);
        __setModuleDefault(result, mod);
        return result;
    };
})();
Object.defineProperty(exports, "__esModule", { value: true });
exports.initDatabase = initDatabase;
exports.db = db;
exports.isPoolDb = isPoolDb;
exports.pgPool = pgPool;
exports.genericPlanPool = genericPlanPool;
exports.closeDatabase = closeDatabase;
const node_postgres_1 = require("drizzle-orm/node-postgres");
const pg_1 = require("pg");
const schema = __importStar(require("./schema"));
// DATE columns stay 'YYYY-MM-DD' strings: no time-zone shift through JS Date.
pg_1.types.setTypeParser(pg_1.types.builtins.DATE, (v) => v);
// bigint (int8) columns hold minor units and byte counts, always below 2^53.
pg_1.types.setTypeParser(pg_1.types.builtins.INT8, (v) => Number(v));
/**
 * One pool per process, since services reach it through db() rather than through their broker. A
 * second app in the same process (replicas of a test cluster) shares it when it names the same
 * database; a different database is refused instead of silently reading the first one.
 */
let pool;
let genericPool;
let database;
let poolUrl;
let poolMax = 0;
let users = 0;
function initDatabase(url, max = Number(process.env.PG_POOL_SIZE || 20)) {
    if (database) {
        if (url !== poolUrl)
            throw new Error('this process already uses another database: start one app per database, one per process');
        users++;
        return database;
    }
    pool = new pg_1.Pool({ connectionString: url, max });
    // An idle client that loses its server must not crash the process.
    pool.on('error', () => undefined);
    database = (0, node_postgres_1.drizzle)(pool, { schema });
    poolUrl = url;
    poolMax = max;
    users = 1;
    return database;
}
function db() {
    if (!database)
        throw new Error('database not initialised: call initDatabase() at start');
    return database;
}
/** Whether `d` is the process's database (no transaction): reads may then use pgPool() directly. */
function isPoolDb(d) {
    return d === database;
}
function pgPool() {
    if (!pool)
        throw new Error('database not initialised: call initDatabase() at start');
    return pool;
}
/**
 * A second pool on the same database whose sessions plan a prepared statement once, generically
 * (`plan_cache_mode = force_generic_plan`): for statements whose best plan does not depend on their
 * values. By default PostgreSQL plans a prepared statement again on every execution while its generic
 * plan looks costlier than the plans made for the values, which a LIMIT or OFFSET given as a
 * parameter always makes it look: an invoice list page spent 0.25 ms of its 0.85 ms planning.
 * Opened on first use, with the main pool's size.
 */
function genericPlanPool() {
    if (!poolUrl)
        throw new Error('database not initialised: call initDatabase() at start');
    if (!genericPool) {
        genericPool = new pg_1.Pool({ connectionString: poolUrl, max: poolMax, options: '-c plan_cache_mode=force_generic_plan' });
        genericPool.on('error', () => undefined);
    }
    return genericPool;
}
/** Releases this app's share of the pools; the last one closes them. */
async function closeDatabase() {
    if (users > 1) {
        users--;
        return;
    }
    const pools = [pool, genericPool];
    pool = undefined;
    genericPool = undefined;
    database = undefined;
    poolUrl = undefined;
    users = 0;
    await Promise.all(pools.map((p) => p?.end()));
}
//# sourceMappingURL=client.js.map