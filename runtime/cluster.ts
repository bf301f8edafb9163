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
import { spawn, type ChildProcess } from 'node:child_process';
import { ServiceBroker } from 'moleculer';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { loadConfig, resolveEncryptionKey } from '../shared/config';
import { runMigrations, startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../shared/db/database-setup';
import { repoRoot } from '../shared/paths';
import { brokerOptions } from '../moleculer.config';
import { UNIT_NAMES } from './units';
import { scheduleEmbeddedBaseBackups, walArchiveDir } from './embedded-pitr';
import { backupBeforeUpgrade } from './upgrade-backup';

export interface ClusterProcess {
  /** Units this process runs, e.g. `billing+subscribers`. */
  units: string;
  nodeID: string;
  child: ChildProcess;
  /** Resolves with the exit code (or the signal's name) when the process ends. */
  exited: Promise<number | string>;
}

export interface Cluster {
  baseUrl: string;
  databaseUrl: string;
  transporter: string;
  namespace: string;
  processes: ClusterProcess[];
  /** A broker with no services of its own on the same bus: to wait for nodes and call actions. */
  observer: ServiceBroker;
  /** Resolves when the node has joined the bus with its services started. */
  waitForNode(nodeID: string, timeoutMs?: number): Promise<void>;
  /**
   * Starts one more process (a replica, or a unit brought back), joined to the same cluster;
   * `entry` runs another build's server.js (a rolling upgrade, bench/upgrade.ts).
   */
  add(units: string, entry?: string): Promise<ClusterProcess>;
  /** SIGTERM to every process, SIGKILL after `graceMs`, then the embedded database. */
  stop(graceMs?: number): Promise<void>;
}

export interface ClusterOptions {
  env?: NodeJS.ProcessEnv;
  /** Where a child's output goes; default: this process's stdout, each line prefixed with its units. */
  output?: (units: string, line: string) => void;
  /** How long to wait for the gateway's /health (default 90 s). */
  readyTimeoutMs?: number;
  /** Apply migrations before the children start (default true; tests start from a migrated copy). */
  migrate?: boolean;
}

export function parseProcesses(services: string | undefined): string[] {
  const entries = (services || UNIT_NAMES.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const unknown = entry.split('+').filter((u) => !UNIT_NAMES.includes(u));
    if (unknown.length)
      throw new Error(`unknown service(s) in SERVICES: ${unknown.join(', ')} (known: ${UNIT_NAMES.join(', ')})`);
  }
  if (!entries.some(runsGateway)) throw new Error('SERVICES must include gateway: the cluster is reached through it');
  return entries;
}

/**
 * A port free now, for a process started next to listen on. Taken below the kernel's range for
 * outgoing connections (Linux: /proc/sys/net/ipv4/ip_local_port_range), where only another
 * listener can take it before the process binds it: a port the kernel hands out for port 0 is one
 * that any outgoing connection made meanwhile may get (EADDRINUSE in a busy test run).
 */
export async function freePort(): Promise<number> {
  const ephemeralStart = ephemeralPortStart();
  if (ephemeralStart !== undefined && ephemeralStart > 20_000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = 10_000 + Math.floor(Math.random() * (ephemeralStart - 10_000));
      // Picks made at once (a cluster's node list) must not meet on one port before either binds it.
      if (handedOut.has(port)) continue;
      handedOut.add(port);
      if (await canListen(port)) return port;
    }
  }
  return listenAndClose(0);
}

const handedOut = new Set<number>();

function ephemeralPortStart(): number | undefined {
  try {
    const start = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) ? start : undefined;
  } catch {
    return undefined;
  }
}

const canListen = (port: number) =>
  listenAndClose(port).then(
    () => true,
    () => false,
  );

function listenAndClose(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => {
      const bound = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(bound));
    });
  });
}

/**
 * Moleculer's TCP transporter learns its peers from a static list (`tcp://host:port/nodeID,...`):
 * every process gets the whole list and finds its own port in it by its NODE_ID. A few spare
 * entries leave room for replicas added later.
 */
async function tcpNodes(namespace: string, count: number): Promise<{ nodeIDs: string[]; url: string }> {
  const nodeIDs = Array.from({ length: count }, (_, i) => `${namespace}-node-${i + 1}`);
  const ports = await Promise.all(nodeIDs.map(() => freePort()));
  return { nodeIDs, url: nodeIDs.map((id, i) => `tcp://127.0.0.1:${ports[i]}/${id}`).join(',') };
}

const SPARE_TCP_NODES = 4;

/**
 * Polls `probe` every 200 ms until it holds; fails with `what` after `timeoutMs`, or at once with
 * `exitedEarly`'s message when a process died meanwhile.
 */
async function pollUntil(
  what: string,
  probe: () => Promise<boolean> | boolean,
  timeoutMs: number,
  exitedEarly: () => string | undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const early = exitedEarly();
    if (early) throw new Error(early);
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} within ${timeoutMs} ms`);
}

/** A node is in the registry with its services once all of them have started (Moleculer sends INFO then). */
function waitForNode(
  observer: ServiceBroker,
  nodeID: string,
  timeoutMs: number,
  exitedEarly: () => string | undefined,
): Promise<void> {
  return pollUntil(
    `node ${nodeID} did not join`,
    () => {
      const node = observer.registry.nodes.get(nodeID) as { available: boolean; services?: unknown[] } | undefined;
      return !!node?.available && (node.services?.length ?? 0) > 0;
    },
    timeoutMs,
    exitedEarly,
  );
}

function waitForHealth(baseUrl: string, timeoutMs: number, exitedEarly: () => string | undefined): Promise<void> {
  return pollUntil(
    'the gateway did not answer /health with 200',
    () =>
      fetch(`${baseUrl}/health`).then(
        (r) => r.status === 200,
        () => false,
      ),
    timeoutMs,
    exitedEarly,
  );
}

/**
 * Every gateway knows every process's node, so its routes hold their actions. The observer learns
 * a node on its own: a gateway that learns it later (the TCP transporter's gossip under load)
 * answered 404 for a route of a unit already up.
 */
async function waitForGatewayPeers(
  observer: ServiceBroker,
  gateways: string[],
  nodeIDs: string[],
  timeoutMs: number,
  exitedEarly: () => string | undefined,
): Promise<void> {
  for (const gateway of gateways) {
    await pollUntil(
      `gateway ${gateway} did not learn every node`,
      async () => {
        const known = await observer
          .call<{ id: string }[], { onlyAvailable: boolean }>(
            '$node.list',
            { onlyAvailable: true },
            { nodeID: gateway },
          )
          .catch(() => []);
        return nodeIDs.every((id) => id === gateway || known.some((n) => n.id === id));
      },
      timeoutMs,
      exitedEarly,
    );
  }
}

/** Whether a process's units (`gateway+billing`) include the gateway. */
function runsGateway(units: string): boolean {
  return units.split('+').includes('gateway');
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const env = { ...(options.env ?? process.env) };
  const cfg = loadConfig(env);
  const entries = parseProcesses(env.SERVICES);
  const output = options.output ?? ((units, line) => process.stdout.write(`[${units}] ${line}\n`));
  const namespace =
    env.NAMESPACE || (cfg.transporter ? 'isp-billing' : `cluster-${crypto.randomBytes(3).toString('hex')}`);

  let embedded: EmbeddedPostgresHandle | undefined;
  let databaseUrl = cfg.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres({
      dataDir: cfg.dataDir,
      port: cfg.embeddedPgPort,
      walArchive: walArchiveDir(env),
    });
    databaseUrl = embedded.url;
  }
  const key = resolveEncryptionKey(cfg, !!embedded);
  const encryptionKey = key.toString('hex');
  if (options.migrate !== false) {
    if (embedded)
      await backupBeforeUpgrade({ dataDir: cfg.dataDir, encryptionKey: key }, databaseUrl, env, (msg) =>
        output('cluster', msg),
      );
    await runMigrations(databaseUrl);
  }

  const tcp = cfg.transporter ? undefined : await tcpNodes(namespace, entries.length + SPARE_TCP_NODES + 1);
  const transporter = cfg.transporter ?? tcp!.url;
  const observer = new ServiceBroker(
    brokerOptions(
      { ...cfg, transporter },
      {
        namespace,
        nodeID: tcp ? tcp.nodeIDs[tcp.nodeIDs.length - 1] : `${namespace}-observer-${process.pid}`,
        logger: false,
      },
    ),
  );
  await observer.start();
  let nextNode = 0;
  let nextGatewayPort = cfg.port;
  const processes: ClusterProcess[] = [];
  const entry = path.join(repoRoot(), 'dist', 'server.js');
  // The gateway is ready once it knows the routes of every unit this cluster runs (readiness.ts).
  const expectedUnits = env.EXPECTED_UNITS || [...new Set(entries.flatMap((e) => e.split('+')))].join(',');

  const launch = (units: string, port: number, script = entry): ClusterProcess => {
    const index = nextNode++;
    const nodeID = tcp
      ? tcp.nodeIDs[index]
      : `${namespace}-${units}-${index + 1}-${crypto.randomBytes(2).toString('hex')}`;
    if (!nodeID) throw new Error(`no TCP node slot left for ${units}: set TRANSPORTER (NATS) for larger clusters`);
    const child = spawn(process.execPath, [script], {
      env: {
        ...env,
        SERVICES: units.split('+').join(','),
        DATABASE_URL: databaseUrl,
        ENCRYPTION_KEY: encryptionKey,
        TRANSPORTER: transporter,
        NAMESPACE: namespace,
        NODE_ID: nodeID,
        PORT: String(port),
        EXPECTED_UNITS: expectedUnits,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [child.stdout!, child.stderr!]) {
      let rest = '';
      stream.on('data', (chunk: Buffer) => {
        const lines = (rest + chunk.toString()).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) output(units, line);
      });
    }
    const exited = new Promise<number | string>((resolve) =>
      child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
    );
    const proc = { units, nodeID, child, exited };
    processes.push(proc);
    return proc;
  };

  let gatewayPort = 0;
  for (const units of entries) {
    const isGateway = runsGateway(units);
    // PORT=0 (tests): a fixed free port is chosen here, because the cluster must know where to call.
    const port = isGateway ? (nextGatewayPort === 0 ? await freePort() : nextGatewayPort++) : 0;
    if (isGateway && !gatewayPort) gatewayPort = port;
    launch(units, port);
  }

  // The cluster owns the embedded server, so it takes its base backups, as `npm start` does.
  const backupLine = (level: 'info' | 'error') => (msg: string, extra?: unknown) =>
    output('cluster', JSON.stringify({ ts: Date.now(), level, mod: 'base-backup', msg, extra }));
  const stopBaseBackups = embedded
    ? scheduleEmbeddedBaseBackups(embedded, { dataDir: cfg.dataDir, encryptionKey: key }, env, {
        info: backupLine('info'),
        error: backupLine('error'),
      })
    : undefined;

  const stop = async (graceMs = 30_000): Promise<void> => {
    // A base backup in progress (half a minute at a few GB) and the processes stop side by side,
    // so an orchestrator's grace period is not spent waiting on the copy first.
    await Promise.all([
      stopBaseBackups?.(),
      ...processes.map(async (p) => {
        if (p.child.exitCode !== null || p.child.signalCode !== null) return;
        p.child.kill('SIGTERM');
        const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
        await p.exited;
        clearTimeout(timer);
      }),
    ]);
    await observer.stop();
    if (embedded) await embedded.stop();
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
    const gateways = processes.filter((p) => runsGateway(p.units)).map((p) => p.nodeID);
    await waitForGatewayPeers(
      observer,
      gateways,
      processes.map((p) => p.nodeID),
      timeoutMs,
      exitedEarly,
    );
  } catch (err) {
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
    async add(units: string, script?: string) {
      parseProcesses(`gateway,${units}`);
      return launch(units, 0, script);
    },
    stop,
  };
}
