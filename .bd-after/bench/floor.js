"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
/**
 * `npm run bench:floor`: what this machine can do for GET /api/invoices/:id without our stack, so
 * that bench:billing's read figure can be judged. The same autocannon load (BENCH_CONNECTIONS, random
 * ids) hits, in turn, a bare `http.createServer` that runs
 *   select1  `select 1`,
 *   row      `select * from invoices where id = $1`,
 *   detail   this project's detail statement (invoiceJson: the invoice, items, payments as JSON),
 * and then the app itself (gateway and billing, as bench:billing runs it). For each it prints
 * req/s and the CPU per request of the server process, of PostgreSQL (its processes in /proc, when
 * the database runs on this machine) and of the load generator.
 *
 * Run it after bench:billing, against the same DATABASE_URL (it needs the seeded invoices).
 * Environment: DATABASE_URL (required), BENCH_CONNECTIONS 50, BENCH_DURATION 10 (seconds per window),
 * BENCH_ROUNDS 3 (every server is measured once per round, rounds in alternating order).
 */
const node_child_process_1 = require("node:child_process");
const node_fs_1 = __importDefault(require("node:fs"));
const node_http_1 = __importDefault(require("node:http"));
const pg_1 = require("pg");
const config_1 = require("../shared/config");
const client_1 = require("../shared/db/client");
const app_1 = require("../runtime/app");
const queries_1 = require("../services/billing/queries");
const load_1 = require("./load");
const CONNECTIONS = (0, config_1.intVar)(process.env, 'BENCH_CONNECTIONS', 50, 1);
const DURATION = (0, config_1.intVar)(process.env, 'BENCH_DURATION', 10, 1);
const ROUNDS = (0, config_1.intVar)(process.env, 'BENCH_ROUNDS', 3, 1);
const VARIANTS = ['select1', 'row', 'detail', 'app'];
/** Child mode: one server variant; reports its URL, answers 'cpu' with its CPU time in µs. */
async function serve(variant) {
    let baseUrl;
    if (variant === 'app') {
        baseUrl = (await (0, app_1.startApp)((0, config_1.loadConfig)(process.env))).baseUrl;
    }
    else {
        (0, config_1.setConfig)((0, config_1.loadConfig)(process.env));
        (0, client_1.initDatabase)(process.env.DATABASE_URL);
        const pool = (0, client_1.pgPool)();
        const handlers = {
            select1: async () => JSON.stringify((await pool.query({ name: 'floor_select1', text: 'select 1 as one' })).rows),
            row: async (id) => JSON.stringify((await pool.query({ name: 'floor_row', text: 'select * from invoices where id = $1', values: [id] })).rows),
            detail: async (id) => `{"success":true,"data":${(await (0, queries_1.invoiceJson)(id)).json}}`,
        };
        const handle = handlers[variant];
        const server = node_http_1.default.createServer((req, res) => {
            handle(Number(req.url.split('/').pop())).then((text) => {
                res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
                res.end(text);
            }, () => {
                res.statusCode = 500;
                res.end();
            });
        });
        await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
        baseUrl = `http://127.0.0.1:${server.address().port}`;
    }
    process.send?.({ baseUrl });
    process.on('message', (m) => {
        if (m === 'cpu') {
            const { user, system } = process.cpuUsage();
            process.send?.({ cpu: user + system });
        }
    });
}
function ask(child, message) {
    return new Promise((resolve) => {
        child.once('message', (m) => resolve(m));
        child.send(message);
    });
}
const clockTicks = (() => {
    try {
        return Number((0, node_child_process_1.execSync)('getconf CLK_TCK').toString().trim()) || 100;
    }
    catch {
        return 100;
    }
})();
/** CPU µs used so far by each process named postgres on this machine, or undefined without /proc. */
function postgresCpu() {
    if (!node_fs_1.default.existsSync('/proc/self/stat'))
        return undefined;
    const cpu = new Map();
    for (const pid of node_fs_1.default.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
        try {
            const stat = node_fs_1.default.readFileSync(`/proc/${pid}/stat`, 'utf8');
            if (!stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).startsWith('postgres'))
                continue;
            const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
            cpu.set(Number(pid), ((Number(fields[11]) + Number(fields[12])) * 1e6) / clockTicks);
        }
        catch {
            // the process ended while we looked
        }
    }
    return cpu;
}
/**
 * PostgreSQL CPU between two readings. Per process: an idle server's pool closes its backends
 * while another server is measured, and a sum over all processes would lose their past CPU.
 */
function postgresCpuBetween(before, after) {
    if (!before || !after)
        return undefined;
    let us = 0;
    for (const [pid, total] of after)
        us += total - (before.get(pid) ?? 0);
    return us;
}
async function startServer(variant) {
    const child = (0, node_child_process_1.fork)(__filename, ['serve', variant], { env: (0, load_1.benchEnv)(), stdio: 'inherit' });
    const { baseUrl } = await new Promise((resolve, reject) => {
        child.once('message', (m) => resolve(m));
        child.once('exit', (code) => reject(new Error(`${variant} server exited with code ${code}`)));
    });
    return { variant, child, baseUrl };
}
/** One measured window of load on one server: its rate and a line of CPU per request. */
async function measure(served, ids, token, duration) {
    const run = (seconds) => (0, load_1.autocannon)({
        url: served.baseUrl,
        connections: CONNECTIONS,
        duration: seconds,
        headers: { authorization: `Bearer ${token}` },
        requests: [{ setupRequest: (req) => ({ ...req, method: 'GET', path: `/api/invoices/${ids.min + Math.floor(Math.random() * (ids.max - ids.min + 1))}` }) }],
    });
    const server0 = (await ask(served.child, 'cpu')).cpu;
    const pg0 = postgresCpu();
    const self0 = process.cpuUsage();
    const result = await run(duration);
    const self = process.cpuUsage(self0);
    const server = (await ask(served.child, 'cpu')).cpu - server0;
    const pg1 = postgresCpu();
    const n = Math.max(1, result.requests.total);
    const per = (us) => (us === undefined ? 'n/a' : `${(us / n).toFixed(0)} µs`);
    const rate = result.requests.total / duration;
    return {
        rate,
        line: `${served.variant.padEnd(8)} ${rate.toFixed(0).padStart(6)} req/s   CPU per request: server ${per(server)}, ` +
            `PostgreSQL ${per(postgresCpuBetween(pg0, pg1))}, load generator ${per(self.user + self.system)}   non-2xx ${result.non2xx}`,
    };
}
const median = (xs) => (0, load_1.percentile)([...xs].sort((a, b) => a - b), 50);
async function main() {
    if (!process.env.DATABASE_URL)
        throw new Error('set DATABASE_URL to the database bench:billing seeded');
    const pool = new pg_1.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
    const { rows: [ids] } = await pool.query('select min(id)::int as min, max(id)::int as max from invoices');
    const token = await (0, load_1.benchAdminToken)(pool, (0, config_1.loadConfig)((0, load_1.benchEnv)()).jwtSecret);
    await pool.end();
    if (ids.min === null)
        throw new Error('no invoices: run npm run bench:billing against this DATABASE_URL first');
    console.log(`GET /api/invoices/:id, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION} s per server, random ids ${ids.min}-${ids.max}`);
    const servers = await Promise.all(VARIANTS.map(startServer));
    try {
        for (const served of servers)
            await measure(served, ids, token, 3); // warm-up: JIT and prepared statements
        // Rounds alternate their order, so a busier minute on this shared machine falls on every
        // server alike; the share to judge is the median of the rounds' own app/detail ratios.
        const windows = new Map(VARIANTS.map((v) => [v, []]));
        const shares = [];
        for (let round = 0; round < ROUNDS; round++) {
            const order = round % 2 === 0 ? servers : [...servers].reverse();
            const rates = new Map();
            for (const served of order) {
                const w = await measure(served, ids, token, DURATION);
                windows.get(served.variant).push(w);
                rates.set(served.variant, w.rate);
            }
            shares.push((100 * rates.get('app')) / Math.max(1e-9, rates.get('detail')));
        }
        for (const variant of VARIANTS) {
            // The window with the median rate stands for its server.
            const ws = windows.get(variant);
            const mid = median(ws.map((w) => w.rate));
            console.log(ws.find((w) => w.rate === mid).line);
        }
        const share = median(shares);
        console.log(`app / detail per round: ${shares.map((x) => `${x.toFixed(0)}%`).join(', ')}`);
        console.log(`app / detail (framework-free, same statement), median of rounds: ${share.toFixed(0)}%   target >= 85%: ${share >= 85 ? 'met' : 'NOT met'}`);
    }
    finally {
        for (const served of servers)
            served.child.kill('SIGKILL');
    }
}
(0, load_1.runBench)(main, ([variant]) => serve(variant));
//# sourceMappingURL=floor.js.map