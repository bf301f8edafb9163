"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.autocannon = void 0;
exports.benchEnv = benchEnv;
exports.runBench = runBench;
exports.benchAdminToken = benchAdminToken;
exports.serveApp = serveApp;
exports.forkApp = forkApp;
exports.serverCpu = serverCpu;
exports.scratchStore = scratchStore;
exports.percentile = percentile;
/**
 * What the HTTP benchmarks share: the typed autocannon entry point, the server's environment, and
 * the app run in a child process (so the load generator does not share the server's event loop).
 */
const node_child_process_1 = require("node:child_process");
const node_fs_1 = __importDefault(require("node:fs"));
const node_os_1 = __importDefault(require("node:os"));
const node_path_1 = __importDefault(require("node:path"));
const pg_1 = require("pg");
const jwt_1 = require("../shared/auth/jwt");
const config_1 = require("../shared/config");
const app_1 = require("../runtime/app");
// eslint-disable-next-line @typescript-eslint/no-require-imports -- autocannon has no type declarations; the shape used is typed above.
exports.autocannon = require('autocannon');
/** The app as the benches run it: listening on a free loopback port, rate limits out of the way. */
function benchEnv() {
    return {
        ...process.env,
        JWT_SECRET: process.env.JWT_SECRET || 'bench-jwt-secret-not-for-production',
        ENCRYPTION_KEY: process.env.ENCRYPTION_KEY || 'b'.repeat(64),
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
        RATE_LIMIT_PER_MIN: '1000000000',
        SERVICES: process.env.BENCH_SERVICES || 'gateway,billing',
    };
}
/**
 * A bench script is both the driver and, forked with `serve` as its first argument, the server it
 * measures: runs the one the arguments ask for. A server that fails exits; a driver sets the code.
 */
function runBench(main, serve) {
    const fail = (exit) => (err) => {
        console.error(err);
        if (exit)
            process.exit(1);
        process.exitCode = 1;
    };
    if (process.argv[2] === 'serve')
        serve(process.argv.slice(3)).catch(fail(true));
    else
        main().catch(fail(false));
}
/**
 * A token of manager 1, an admin, created in the bench database if missing: the gateway checks
 * every token against its manager's row.
 */
async function benchAdminToken(db, secret) {
    await db.query(`insert into managers (id, username, password_hash, role) values (1, 'bench-admin', '!', 'admin') on conflict (id) do nothing`);
    await db.query(`select setval(pg_get_serial_sequence('managers', 'id'), greatest(1, (select max(id) from managers)))`);
    return (0, jwt_1.signToken)({ managerId: 1, role: 'admin', resellerId: null, permissions: [] }, secret, 3600).token;
}
/** Child side: run the app, report where it listens, answer 'cpu' with its CPU time (µs), stop on 'stop'. */
async function serveApp() {
    const app = await (0, app_1.startApp)((0, config_1.loadConfig)(process.env));
    process.send?.({ baseUrl: app.baseUrl, databaseUrl: app.databaseUrl });
    process.on('message', (m) => {
        if (m === 'stop')
            void app.stop().then(() => process.exit(0));
        if (m === 'cpu') {
            const { user, system } = process.cpuUsage();
            process.send?.({ cpu: user + system });
        }
    });
}
/**
 * Driver side: forks `script` with `serve` (see runBench) and waits until the app listens.
 * BENCH_SERVER_ARGS are node flags for that process only (a CPU profile of the server: node refuses
 * `--cpu-prof` in NODE_OPTIONS, and the driver's own profile would be mixed in).
 */
function forkApp(script, env = benchEnv()) {
    const execArgv = process.env.BENCH_SERVER_ARGS?.split(' ').filter(Boolean);
    const child = (0, node_child_process_1.fork)(script, ['serve'], { env, stdio: 'inherit', execArgv });
    return new Promise((resolve, reject) => {
        child.once('message', (m) => resolve({ child, ...m }));
        child.once('exit', (code) => reject(new Error(`server exited with code ${code}`)));
    });
}
/**
 * The server process's CPU time so far in µs. CPU per request is printed beside the rates because
 * it moves far less than req/s on a host whose steal and neighbours vary from run to run.
 */
function serverCpu(server) {
    return new Promise((resolve) => {
        server.child.once('message', (m) => resolve(m.cpu));
        server.child.send('cpu');
    });
}
/**
 * Where a bench keeps its data: a fresh database beside DATABASE_URL's (dropped afterwards unless
 * BENCH_KEEP=1), or, without DATABASE_URL, an embedded PostgreSQL in a temporary DATA_DIR.
 */
async function scratchStore(prefix) {
    const adminUrl = process.env.DATABASE_URL;
    if (!adminUrl) {
        const dataDir = node_fs_1.default.mkdtempSync(node_path_1.default.join(node_os_1.default.tmpdir(), `bench-${prefix}-`));
        return { env: { DATABASE_URL: '', DATA_DIR: dataDir }, dispose: async () => node_fs_1.default.rmSync(dataDir, { recursive: true, force: true }) };
    }
    const name = `bench_${prefix}_${Date.now().toString(36)}`;
    const admin = async (statement) => {
        const client = new pg_1.Client({ connectionString: adminUrl });
        await client.connect();
        try {
            await client.query(statement);
        }
        finally {
            await client.end();
        }
    };
    await admin(`create database "${name}"`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    return {
        env: { DATABASE_URL: url.toString() },
        dispose: async () => {
            if (process.env.BENCH_KEEP !== '1')
                await admin(`drop database if exists "${name}" with (force)`);
        },
    };
}
/** The p-th percentile of an ascending list (nearest rank); 0 for an empty one. */
function percentile(sorted, p) {
    if (sorted.length === 0)
        return 0;
    return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
//# sourceMappingURL=load.js.map