/**
 * `npm run start:containers`: the whole stack in containers on this host (docs/containers.md).
 * Builds the images (deploy/images.sh: a debootstrap base, then deploy/Dockerfile's targets, each
 * skipped or cached when its inputs did not change), then runs deploy/docker-compose.yml in the
 * foreground: PostgreSQL, NATS, FreeRADIUS and the six units, each unit in its own container,
 * every container on the host's network. The gateway listens on PORT, with the environment of
 * `npm start` (JWT_SECRET, ADMIN_USERNAME, ADMIN_PASSWORD, ...). SIGTERM or Ctrl-C stops and
 * removes the containers (the database volume stays; CONTAINERS_REMOVE_DATA=1 drops it too).
 *
 * Its own ports, so it runs beside a PostgreSQL and a NATS already on the host: PG_PORT (55432),
 * NATS_PORT (54222), RADIUS_AUTH_PORT / RADIUS_ACCT_PORT (1812 / 1813). PDF_RENDERERS (2) and
 * NETWORK_ACCESS_REPLICAS (1) are the numbers of those containers; COMPOSE_PROJECT_NAME (isp-billing) names the containers;
 * CONTAINERS_BUILD=0 skips the build.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ConfigError, intVar, loadConfig, resolveEncryptionKey } from '../shared/config';
import { repoRoot } from '../shared/paths';

export interface StackOptions {
  env: NodeJS.ProcessEnv;
  /** Lines of docker-compose's output. */
  output?: (line: string) => void;
}

/** docker-compose 1.29 (Debian's `docker-compose`) or the compose v2 plugin (`docker compose`). */
export function composeCommand(): string[] {
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0) return ['docker', 'compose'];
  if (spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0) return ['docker-compose'];
  throw new ConfigError('docker compose is not installed (Debian: apt-get install docker-compose)');
}

/** The environment docker-compose substitutes into deploy/docker-compose.yml, with this script's defaults. */
export function stackEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const cfg = loadConfig(env);
  const port = intVar(env, 'PORT', 3000);
  return {
    ...env,
    PORT: String(port),
    PG_PORT: String(intVar(env, 'PG_PORT', 55432, 1)),
    NATS_PORT: String(intVar(env, 'NATS_PORT', 54222, 1)),
    RADIUS_AUTH_PORT: String(intVar(env, 'RADIUS_AUTH_PORT', 1812, 1)),
    RADIUS_ACCT_PORT: String(intVar(env, 'RADIUS_ACCT_PORT', 1813, 1)),
    // One key for the installation: given, or generated once into DATA_DIR like the embedded mode's.
    ENCRYPTION_KEY: resolveEncryptionKey(cfg, true).toString('hex'),
    PUBLIC_BASE_URL: env.PUBLIC_BASE_URL || `http://localhost:${port}`,
    COMPOSE_PROJECT_NAME: env.COMPOSE_PROJECT_NAME || 'isp-billing',
  };
}

export function composeArgs(): string[] {
  const deploy = path.join(repoRoot(), 'deploy');
  return ['-f', path.join(deploy, 'docker-compose.yml'), '-f', path.join(deploy, 'docker-compose.local.yml')];
}

/** deploy/images.sh, in the foreground; rejects when a build fails. */
export function buildImages(env: NodeJS.ProcessEnv, output?: (line: string) => void): Promise<void> {
  return run(path.join(repoRoot(), 'deploy', 'images.sh'), [], env, output);
}

/** A command's exit as a promise; its output line by line to `output`, or inherited. */
export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, output?: (line: string) => void) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: output ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    if (output) pipeLines(child, output);
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}`)),
    );
  });
}

export function pipeLines(child: ChildProcess, output: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream?.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) output(line);
    });
  }
}

export interface Stack {
  env: NodeJS.ProcessEnv;
  baseUrl: string;
  /** docker-compose with this stack's project and files, e.g. `compose(['ps'])`. */
  compose(args: string[], output?: (line: string) => void): Promise<void>;
  /** The `up` process (foreground); resolves when it ends. */
  up: Promise<void>;
  /** Stops and removes the containers (and the database volume when `removeData`). */
  down(removeData?: boolean): Promise<void>;
}

/** `docker-compose up` in the background of this process: returns at once; wait for /health yourself. */
export function startStack(options: StackOptions): Stack {
  const env = stackEnv(options.env);
  const [bin, ...pre] = composeCommand();
  const files = composeArgs();
  const compose = (args: string[], output?: (line: string) => void) =>
    run(bin, [...pre, ...files, ...args], env, output ?? options.output);
  const scale = [
    ['pdf-renderer', intVar(env, 'PDF_RENDERERS', 2, 1)],
    ['network-access', intVar(env, 'NETWORK_ACCESS_REPLICAS', 1, 1)],
  ].flatMap(([unit, n]) => ['--scale', `${unit}=${n}`]);
  const child = spawn(bin, [...pre, ...files, 'up', '--no-build', ...scale], {
    env,
    stdio: options.output ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'],
  });
  if (options.output) pipeLines(child, options.output);
  const up = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let downing: Promise<void> | undefined;
  return {
    env,
    baseUrl: `http://127.0.0.1:${env.PORT}`,
    compose,
    up,
    down(removeData = false) {
      downing ??= compose(['down', '--timeout', '45', ...(removeData ? ['--volumes'] : [])]).then(() => up);
      return downing;
    },
  };
}

/** Polls the gateway's /health until 200. */
export async function waitForHealth(baseUrl: string, timeoutMs: number, up?: Promise<void>): Promise<void> {
  let ended = false;
  void up?.then(() => (ended = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (ended) throw new Error('docker-compose up ended before the gateway was ready');
    const ok = await fetch(`${baseUrl}/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the gateway did not answer /health with 200 within ${timeoutMs / 1000} s`);
}

async function main(): Promise<void> {
  const env = { ...process.env };
  stackEnv(env); // configuration errors before the build
  if (env.CONTAINERS_BUILD !== '0') await buildImages(env);
  const stack = startStack({ env });
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log(`[containers] ${signal} received: stopping and removing the containers`);
    stack.down(env.CONTAINERS_REMOVE_DATA === '1').then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const started = Date.now();
  waitForHealth(stack.baseUrl, 300_000, stack.up).then(
    () =>
      console.log(
        `[containers] ready in ${((Date.now() - started) / 1000).toFixed(1)} s: API on ${stack.baseUrl} (GET /health 200)`,
      ),
    (err) => console.error(`[containers] ${(err as Error).message}`),
  );
  await stack.up;
  if (!stopping) {
    console.log('[containers] docker-compose up ended; removing the containers');
    await stack.down();
    process.exit(1);
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err instanceof ConfigError ? `configuration error: ${err.message}` : err);
    process.exit(err instanceof ConfigError ? 2 : 1);
  });
}
