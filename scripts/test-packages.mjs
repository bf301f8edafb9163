// The Debian packages the test suite drives (`npm test` runs this first, as its pretest): Chromium
// for PDFs, poppler to read them back, fonts with Arabic glyphs, FreeRADIUS for interop, nginx for
// deploy/nginx, MariaDB for the importer's daloRADIUS and phpnuxbill sources, nats-server for the
// cluster-faults suite's private NATS. Run as root on
// Debian or Ubuntu, the missing ones are installed with one apt-get; otherwise it stops at once
// with the one command to run. Plain ESM so it runs before the build (`node scripts/test-packages.mjs`).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

export const TEST_PACKAGES = [
  'chromium',
  'poppler-utils',
  'fonts-noto-core',
  'fonts-dejavu-core',
  'freeradius',
  'freeradius-postgresql',
  'freeradius-utils',
  'nginx-light',
  'mariadb-server',
  'nats-server',
];

export function installCommand(packages) {
  return `apt-get update -qq && apt-get install -y -qq --no-install-recommends ${packages.join(' ')}`;
}

/** What to do on a Debian system, from the facts alone: nothing, install (root), or stop with the command. */
export function plan({ missing, root }) {
  if (missing.length === 0) return { action: 'none' };
  if (root) return { action: 'install', packages: missing };
  return {
    action: 'stop',
    message: `the tests need Debian packages that are missing; run once:\n  sudo sh -c '${installCommand(missing)}'`,
  };
}

/** Packages of `names` dpkg does not list as installed (all of them when dpkg-query is absent). */
export function missingPackages(names, run = spawnSync) {
  return names.filter((name) => {
    const r = run('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8' });
    return r.status !== 0 || !String(r.stdout).includes('install ok installed');
  });
}

function onDebian(run) {
  return fs.existsSync('/etc/debian_version') && run('sh', ['-c', 'command -v apt-get'], {}).status === 0;
}

/** Returns the process exit status: 0 when every package is there (or was just installed). */
export function provision({ run = spawnSync, root = process.getuid?.() === 0, log = console.log } = {}) {
  if (!onDebian(run)) {
    // No dpkg to ask: the tests that need a program name the package when it is missing.
    log(`npm test: not Debian or Ubuntu; the tests drive these programs (Debian names): ${TEST_PACKAGES.join(' ')}`);
    return 0;
  }
  const step = plan({ missing: missingPackages(TEST_PACKAGES, run), root });
  if (step.action === 'none') return 0;
  if (step.action === 'stop') {
    log(`npm test: ${step.message}`);
    return 1;
  }
  log(`npm test: installing the Debian packages the tests need: ${step.packages.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // apt's progress lines go; its errors (stderr) stay on the terminal.
  const result = run('sh', ['-c', `${installCommand(step.packages)} >/dev/null`], { stdio: 'inherit', env });
  if (result.status !== 0) {
    log(`npm test: apt-get failed (${result.status}); run it by hand: ${installCommand(step.packages)}`);
    return 1;
  }
  const still = missingPackages(step.packages, run);
  if (still.length > 0) {
    log(`npm test: still missing after apt-get: ${still.join(' ')}`);
    return 1;
  }
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(provision());
