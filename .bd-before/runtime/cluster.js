"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.parseProcesses = parseProcesses;
exports.freePort = freePort;
exports.startCluster = startCluster;
/**
 * The distributed mode on one machine (`npm run start:cluster`, docs/distributed.md): every unit in
 * its own `node dist/server.js` process, one shared PostgreSQL (DATABASE_URL, or one embedded
 * server started here for all of them), joined by NATS when TRANSPORTER is set and by Moleculer's
 * TCP transporter (a static node list on loopback) otherwise.
 *
 * `SERVICES` lists the processes: each comma-separated entry is one process, `+` puts several
 * units in one process, and a repeated entry is a replica:
 * `SERVICES=gateway,billing+subscribers,pdf-renderer,pdf-renderer`. Default: the six units.
 */
const node_child_process_1 = require("node:child_process");
const moleculer_1 = require("moleculer");
const node_crypto_1 = __importDefault(require("node:crypto"));
const node_fs_1 = __importDefault(require("node:fs"));
const node_net_1 = __importDefault(require("node:net"));
const node_path_1 = __importDefault(require("node:path"));
const config_1 = require("../shared/config");
const database_setup_1 = require("../shared/db/database-setup");
const paths_1 = require("../shared/paths");
const moleculer_config_1 = require("../moleculer.config");
const app_1 = require("./app");
const units_1 = require("./units");
function parseProcesses(services) {
    const entries = (services || units_1.UNIT_NAMES.join(',')).split(',').map((s) => s.trim()).filter(Boolean);
    for (const entry of entries) {
        const unknown = entry.split('+').filter((u) => !units_1.UNIT_NAMES.includes(u));
        if (unknown.length)
            throw new Error(`unknown service(s) in SERVICES: ${unknown.join(', ')} (known: ${units_1.UNIT_NAMES.join(', ')})`);
    }
    if (!entries.some((e) => e.split('+').includes('gateway')))
        throw new Error('SERVICES must include gateway: the cluster is reached through it');
    return entries;
}
/**
 * A port free now, for a process started next to listen on. Taken below the kernel's range for
 * outgoing connections (Linux: /proc/sys/net/ipv4/ip_local_port_range), where only another
 * listener can take it before the process binds it: a port the kernel hands out for port 0 is one
 * that any outgoing connection made meanwhile may get (EADDRINUSE in a busy test run).
 */
async function freePort() {
    const ephemeralStart = ephemeralPortStart();
    if (ephemeralStart !== undefined && ephemeralStart > 20_000) {
        for (let attempt = 0; attempt < 50; attempt++) {
            const port = 10_000 + Math.floor(Math.random() * (ephemeralStart - 10_000));
            // Picks made at once (a cluster's node list) must not meet on one port before either binds it.
            if (handedOut.has(port))
                continue;
            handedOut.add(port);
            if (await canListen(port))
                return port;
        }
    }
    return listenAndClose(0);
}
const handedOut = new Set();
function ephemeralPortStart() {
    try {
        const start = Number(node_fs_1.default.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
        return Number.isInteger(start) ? start : undefined;
    }
    catch {
        return undefined;
    }
}
const canListen = (port) => listenAndClose(port).then(() => true, () => false);
function listenAndClose(port) {
    return new Promise((resolve, reject) => {
        const srv = node_net_1.default.createServer();
        srv.once('error', reject);
        srv.listen(port, '127.0.0.1', () => {
            const bound = srv.address().port;
            srv.close(() => resolve(bound));
        });
    });
}
/**
 * Moleculer's TCP transporter learns its peers from a static list (`tcp://host:port/nodeID,...`):
 * every process gets the whole list and finds its own port in it by its NODE_ID. A few spare
 * entries leave room for replicas added later.
 */
async function tcpNodes(namespace, count) {
    const nodeIDs = Array.from({ length: count }, (_, i) => `${namespace}-node-${i + 1}`);
    const ports = await Promise.all(nodeIDs.map(() => freePort()));
    return { nodeIDs, url: nodeIDs.map((id, i) => `tcp://127.0.0.1:${ports[i]}/${id}`).join(',') };
}
const SPARE_TCP_NODES = 4;
/** A node is in the registry with its services once all of them have started (Moleculer sends INFO then). */
async function waitForNode(observer, nodeID, timeoutMs, exitedEarly) {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
        const early = exitedEarly();
        if (early)
            throw new Error(early);
        const node = observer.registry.nodes.get(nodeID);
        if (node?.available && (node.services?.length ?? 0) > 0)
            return;
        await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`node ${nodeID} did not join within ${timeoutMs} ms`);
}
async function waitForHealth(baseUrl, timeoutMs, exitedEarly) {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
        const early = exitedEarly();
        if (early)
            throw new Error(early);
        const ok = await fetch(`${baseUrl}/health`).then((r) => r.status === 200, () => false);
        if (ok)
            return;
        await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`the gateway did not answer /health with 200 within ${timeoutMs} ms`);
}
async function startCluster(options = {}) {
    const env = { ...(options.env ?? process.env) };
    const cfg = (0, config_1.loadConfig)(env);
    const entries = parseProcesses(env.SERVICES);
    const output = options.output ?? ((units, line) => process.stdout.write(`[${units}] ${line}\n`));
    const namespace = env.NAMESPACE || (cfg.transporter ? 'isp-billing' : `cluster-${node_crypto_1.default.randomBytes(3).toString('hex')}`);
    let embedded;
    let databaseUrl = cfg.databaseUrl;
    if (!databaseUrl) {
        embedded = await (0, database_setup_1.startEmbeddedPostgres)({ dataDir: cfg.dataDir, port: cfg.embeddedPgPort });
        databaseUrl = embedded.url;
    }
    const encryptionKey = (0, app_1.resolveEncryptionKey)(cfg, !!embedded).toString('hex');
    if (options.migrate !== false)
        await (0, database_setup_1.runMigrations)(databaseUrl);
    const tcp = cfg.transporter ? undefined : await tcpNodes(namespace, entries.length + SPARE_TCP_NODES + 1);
    const transporter = cfg.transporter ?? tcp.url;
    const observer = new moleculer_1.ServiceBroker((0, moleculer_config_1.brokerOptions)({ ...cfg, transporter }, { namespace, nodeID: tcp ? tcp.nodeIDs[tcp.nodeIDs.length - 1] : `${namespace}-observer-${process.pid}`, logger: false }));
    await observer.start();
    let nextNode = 0;
    let nextGatewayPort = cfg.port;
    const processes = [];
    const entry = node_path_1.default.join((0, paths_1.repoRoot)(), 'dist', 'server.js');
    const launch = (units, port) => {
        const index = nextNode++;
        const nodeID = tcp ? tcp.nodeIDs[index] : `${namespace}-${units}-${index + 1}-${node_crypto_1.default.randomBytes(2).toString('hex')}`;
        if (!nodeID)
            throw new Error(`no TCP node slot left for ${units}: set TRANSPORTER (NATS) for larger clusters`);
        const child = (0, node_child_process_1.spawn)(process.execPath, [entry], {
            env: {
                ...env,
                SERVICES: units.split('+').join(','),
                DATABASE_URL: databaseUrl,
                ENCRYPTION_KEY: encryptionKey,
                TRANSPORTER: transporter,
                NAMESPACE: namespace,
                NODE_ID: nodeID,
                PORT: String(port),
            },
            stdio: ['ignore', 'pipe', 'pipe'],
        });
        for (const stream of [child.stdout, child.stderr]) {
            let rest = '';
            stream.on('data', (chunk) => {
                const lines = (rest + chunk.toString()).split('\n');
                rest = lines.pop() ?? '';
                for (const line of lines)
                    output(units, line);
            });
        }
        const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
        const proc = { units, nodeID, child, exited };
        processes.push(proc);
        return proc;
    };
    let gatewayPort = 0;
    for (const units of entries) {
        const isGateway = units.split('+').includes('gateway');
        // PORT=0 (tests): a fixed free port is chosen here, because the cluster must know where to call.
        const port = isGateway ? (nextGatewayPort === 0 ? await freePort() : nextGatewayPort++) : 0;
        if (isGateway && !gatewayPort)
            gatewayPort = port;
        launch(units, port);
    }
    const stop = async (graceMs = 30_000) => {
        await Promise.all(processes.map(async (p) => {
            if (p.child.exitCode !== null || p.child.signalCode !== null)
                return;
            p.child.kill('SIGTERM');
            const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
            await p.exited;
            clearTimeout(timer);
        }));
        await observer.stop();
        if (embedded)
            await embedded.stop();
    };
    const exitedEarly = () => {
        const dead = processes.find((p) => p.child.exitCode !== null);
        return dead ? `${dead.units} exited with code ${dead.child.exitCode} during start` : undefined;
    };
    const baseUrl = `http://127.0.0.1:${gatewayPort}`;
    try {
        const timeoutMs = options.readyTimeoutMs ?? 90_000;
        await Promise.all(processes.map((p) => waitForNode(observer, p.nodeID, timeoutMs, exitedEarly)));
        await waitForHealth(baseUrl, timeoutMs, exitedEarly);
    }
    catch (err) {
        await stop(5_000);
        throw err;
    }
    return {
        baseUrl,
        databaseUrl,
        transporter,
        namespace,
        processes,
        observer,
        waitForNode: (nodeID, timeoutMs = 90_000) => waitForNode(observer, nodeID, timeoutMs, () => undefined),
        async add(units) {
            parseProcesses(`gateway,${units}`);
            return launch(units, 0);
        },
        stop,
    };
}
//# sourceMappingURL=cluster.js.map