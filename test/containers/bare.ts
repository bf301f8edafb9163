/**
 * `npm run test:bare` (not part of jest's run; docs/operations.md): the README's set-up on a bare
 * Debian machine, in containers on the host network.
 *
 *   1. The bare image: the project's debootstrap base (deploy/images.sh --base-only) plus only what
 *      the README assumes a user has: Debian's Node.js (trixie: 20), npm and git. None of the test
 *      packages (checked): `npm test` must install them itself.
 *   2. A normal user in a fresh container clones HEAD and runs `npm test`: it must stop at once
 *      (non-zero, before the build) naming the one apt-get line to run.
 *   3. root in a fresh container clones HEAD and runs exactly `npm install`, then `npm test`, with
 *      no DATABASE_URL nor TRANSPORTER: the suite starts its own embedded PostgreSQL, MariaDB and
 *      FreeRADIUS on free ports, beside the host's servers (the host network is shared).
 *
 * The clone is of HEAD (a git bundle of the checkout's HEAD, cloned with the container's git), not
 * of the working tree: commit first. Prints the seconds of each step and jest's summary; exits
 * non-zero on any failure; removes its containers (also on SIGINT/SIGTERM).
 */
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeLines, run } from '../../scripts/containers';
import { repoRoot } from '../../shared/paths';
import { check, docker, printSteps, stepper, type Step } from './steps';

const IMAGE = 'isp-billing-bare:local';
const BASE = 'isp-billing-base:trixie';
const CLONE = 'isp-billing';
const BUNDLE = '/src/head.bundle';
const tag = `isp-billing-bare-${process.pid}-${crypto.randomBytes(2).toString('hex')}`;
const containers: string[] = [];
const steps: Step[] = [];
const step = stepper('[test:bare]', steps);

/** A command's exit code and output (stdout and stderr, in order), echoed with a prefix as it comes. */
function exec(cmd: string, args: string[], prefix: string): Promise<{ code: number; output: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const output: string[] = [];
    pipeLines(child, (line) => {
      output.push(line);
      process.stdout.write(`${prefix} ${line}\n`);
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

/** The Debian packages the suite drives and the line a non-root user is told to run (scripts/test-packages.mjs). */
function testPackages(): { packages: string[]; command: string } {
  const js =
    "import('./scripts/test-packages.mjs').then((m) => console.log(JSON.stringify({ packages: m.TEST_PACKAGES, command: m.installCommand(m.TEST_PACKAGES) })))";
  return JSON.parse(execFileSync('node', ['-e', js], { cwd: repoRoot(), encoding: 'utf8' })) as {
    packages: string[];
    command: string;
  };
}

/** The host's extra CAs (a TLS-intercepting proxy's), trusted in the image as deploy/images.sh does. */
function hostCas(dir: string): void {
  const from = '/usr/local/share/ca-certificates';
  fs.mkdirSync(path.join(dir, 'ca-certificates'));
  if (!fs.existsSync(from)) return;
  for (const f of fs.readdirSync(from).filter((n) => n.endsWith('.crt')))
    fs.copyFileSync(path.join(from, f), path.join(dir, 'ca-certificates', f));
}

// Debian + Node.js + npm + git and a normal user: the README's reader, nothing of the suite's.
const DOCKERFILE = `ARG BASE
FROM \${BASE}
ARG DEBIAN_FRONTEND=noninteractive
ENV LANG=C.UTF-8 NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
COPY ca-certificates/ /usr/local/share/ca-certificates/
RUN apt-get update \\
 && apt-get install -y --no-install-recommends ca-certificates nodejs npm git \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \\
 && useradd --create-home --shell /bin/bash user
`;

async function bareImage(packages: string[]): Promise<string> {
  await run(path.join(repoRoot(), 'deploy', 'images.sh'), ['--base-only'], process.env, (line) =>
    process.stdout.write(`[base] ${line}\n`),
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'isp-billing-bare-'));
  try {
    fs.writeFileSync(path.join(dir, 'Dockerfile'), DOCKERFILE);
    hostCas(dir);
    await run('docker', ['build', '-q', '--network', 'host', '--build-arg', `BASE=${BASE}`, '-t', IMAGE, dir], {
      ...process.env,
      DOCKER_BUILDKIT: '0',
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const versions = docker(['run', '--rm', IMAGE, 'sh', '-c', 'echo node $(node -v), npm $(npm -v), $(git --version)']);
  const major = Number(/node v(\d+)/.exec(versions)?.[1]);
  check(major >= 20, `Node.js 20 or later in the bare image (${versions})`);
  const query = `for p in ${packages.join(' ')}; do dpkg-query -W -f='\${Status}\\n' $p 2>/dev/null | grep -q 'install ok installed' && echo $p; done; true`;
  const present = docker(['run', '--rm', IMAGE, 'sh', '-c', query]);
  check(present === '', `none of the test packages in the bare image (found: ${present})`);
  return versions;
}

/** A fresh container of the bare image on the host network, HEAD's bundle mounted read-only. */
function freshContainer(bundleDir: string, role: string): string {
  const name = `${tag}-${role}`;
  docker([
    'run',
    '-d',
    '--name',
    name,
    '--network',
    'host',
    '-v',
    `${bundleDir}:${path.dirname(BUNDLE)}:ro`,
    IMAGE,
    'sleep',
    'infinity',
  ]);
  containers.push(name);
  return name;
}

// The bundle holds HEAD alone: git's hints about the default branch and a detached HEAD are noise here.
const QUIET_GIT = ['-c', 'init.defaultBranch=main', '-c', 'advice.detachedHead=false'];

/** `git clone` of HEAD by `user` into its home; returns the clone's directory. */
async function cloneIn(container: string, user: string): Promise<string> {
  const home = user === 'root' ? '/root' : `/home/${user}`;
  const r = await exec(
    'docker',
    ['exec', '-u', user, '-w', home, container, 'git', ...QUIET_GIT, 'clone', '--quiet', BUNDLE, CLONE],
    `[${user}]`,
  );
  check(r.code === 0, `git clone as ${user} (exit ${r.code})`);
  return `${home}/${CLONE}`;
}

function npm(container: string, user: string, dir: string, args: string[]) {
  return exec('docker', ['exec', '-u', user, '-w', dir, container, 'npm', ...args], `[${user}]`);
}

function jestSummary(output: string[]): { suites: string; tests: string; failed: number; passed: number } {
  const last = (prefix: string) => output.filter((l) => l.startsWith(prefix)).pop() ?? '';
  const tests = last('Tests:');
  const count = (what: string) => Number(new RegExp(`(\\d+) ${what}`).exec(tests)?.[1] ?? 0);
  return { suites: last('Test Suites:'), tests, failed: count('failed'), passed: count('passed') };
}

/** Containers a killed earlier run left (its process is gone: CI's timeout kills npm, not this script). */
function removeLeftovers(): number {
  const names = docker(['ps', '-a', '--filter', 'name=^isp-billing-bare-', '--format', '{{.Names}}'])
    .split('\n')
    .filter(Boolean);
  const stale = names.filter((n) => {
    const pid = Number(/^isp-billing-bare-(\d+)-/.exec(n)?.[1]);
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });
  for (const n of stale) docker(['rm', '-f', n]);
  return stale.length;
}

function removeContainers(): void {
  for (const name of containers.splice(0)) {
    try {
      docker(['rm', '-f', name]);
    } catch {
      // Already gone.
    }
  }
}

async function main(): Promise<void> {
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot(), encoding: 'utf8' }).trim();
  const { packages, command } = testPackages();
  const leftovers = removeLeftovers();
  if (leftovers > 0) process.stdout.write(`[test:bare] removed ${leftovers} container(s) of a killed earlier run\n`);
  const bundleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'isp-billing-bundle-'));
  fs.chmodSync(bundleDir, 0o755);
  try {
    await step(
      'bundle of HEAD',
      async () => {
        execFileSync('git', ['bundle', 'create', '--quiet', path.join(bundleDir, path.basename(BUNDLE)), 'HEAD'], {
          cwd: repoRoot(),
          stdio: 'inherit',
        });
        fs.chmodSync(path.join(bundleDir, path.basename(BUNDLE)), 0o644);
      },
      () => `HEAD ${head}`,
    );

    await step(
      'bare image (debootstrap base + Node.js, npm, git)',
      () => bareImage(packages),
      (v) => v,
    );

    await step(
      'normal user: git clone, npm test stops with the apt-get line',
      async () => {
        const c = freshContainer(bundleDir, 'user');
        const dir = await cloneIn(c, 'user');
        const r = await npm(c, 'user', dir, ['test']);
        const text = r.output.join('\n');
        check(r.code !== 0, `npm test as a normal user exits non-zero (exit ${r.code})`);
        check(text.includes(command), `npm test as a normal user names the apt-get line (${command})`);
        check(!text.includes('tsc -p tsconfig.build.json'), 'npm test as a normal user stops before the build');
        removeContainers();
        return r.code;
      },
      (code) => `exit ${code}, names: ${command}`,
    );

    const c = freshContainer(bundleDir, 'root');
    const dir = await step(
      'root: git clone',
      () => cloneIn(c, 'root'),
      (d) => d,
    );
    await step('root: npm install', async () => {
      const r = await npm(c, 'root', dir, ['install']);
      check(r.code === 0, `npm install (exit ${r.code})`);
    });
    const summary = await step(
      'root: npm test',
      async () => {
        const r = await npm(c, 'root', dir, ['test']);
        const s = jestSummary(r.output);
        process.stdout.write(`[test:bare] jest: ${s.suites} | ${s.tests}\n`);
        check(
          r.output.some((l) => l.startsWith('npm test: installing the Debian packages the tests need:')),
          'npm test installs the test packages itself',
        );
        check(r.code === 0, `npm test (exit ${r.code}): ${s.suites} | ${s.tests}`);
        check(s.passed > 0 && s.failed === 0, `jest: ${s.tests}`);
        return s;
      },
      (s) => `${s.suites} | ${s.tests}`,
    );
    process.stdout.write(`[test:bare] passed: ${summary.passed} tests, 0 failed\n`);
  } finally {
    removeContainers();
    fs.rmSync(bundleDir, { recursive: true, force: true });
    printSteps('[test:bare]', steps);
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    removeContainers();
    process.exit(1);
  });

main().catch((err: unknown) => {
  process.stderr.write(`[test:bare] FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
  removeContainers();
  process.exit(1);
});
