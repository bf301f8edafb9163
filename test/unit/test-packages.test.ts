/**
 * `npm test`'s pretest (scripts/test-packages.mjs) against fake dpkg-query and apt-get on PATH: it
 * installs the missing Debian packages with one apt-get as root, stays quiet when all are there,
 * and stops with the command to run when it may not install. Debian only, as the suite is.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const SCRIPT = pathToFileURL(path.join(__dirname, '../../scripts/test-packages.mjs')).href;
const ALL = [
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

interface Run {
  status: number | null;
  out: string;
  aptCalls: string[];
  installed: string[];
}

/** Runs provision() with `installed` known to the fake dpkg; `aptFails` makes apt-get install exit 100. */
function runWith(installed: string[], root: boolean, aptFails = false): Run {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'test-packages-'));
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  const state = path.join(dir, 'installed');
  const calls = path.join(dir, 'apt-calls');
  fs.writeFileSync(state, installed.map((p) => `${p}\n`).join(''));
  fs.writeFileSync(calls, '');
  fs.writeFileSync(
    path.join(bin, 'dpkg-query'),
    `#!/bin/sh\n# dpkg-query -W -f=... <name>\neval last=\\\${$#}\ngrep -qx "$last" "${state}" && printf 'install ok installed' && exit 0\necho "no packages found matching $last" >&2; exit 1\n`,
    { mode: 0o755 },
  );
  fs.writeFileSync(
    path.join(bin, 'apt-get'),
    `#!/bin/sh\necho "$*" >> "${calls}"\ncase "$*" in *install*) ${aptFails ? 'exit 100' : 'true'}; for a in "$@"; do case "$a" in -*|install) ;; *) echo "$a" >> "${state}";; esac; done;; esac\n`,
    { mode: 0o755 },
  );
  const driver = `import { provision } from '${SCRIPT}'; process.exit(provision({ root: ${root} }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', driver], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
  });
  const result = {
    status: r.status,
    out: r.stdout + r.stderr,
    aptCalls: fs.readFileSync(calls, 'utf8').split('\n').filter(Boolean),
    installed: fs.readFileSync(state, 'utf8').split('\n').filter(Boolean),
  };
  fs.rmSync(dir, { recursive: true, force: true });
  return result;
}

describe('npm test provisions its Debian packages', () => {
  it('does nothing, silently, when every package is installed', () => {
    const r = runWith(ALL, true);
    expect(r.status).toBe(0);
    expect(r.aptCalls).toEqual([]);
    expect(r.out).toBe('');
  });

  it('as root, installs exactly the missing ones with one apt-get install and says which', () => {
    const present = ALL.filter((p) => p !== 'chromium' && p !== 'mariadb-server');
    const r = runWith(present, true);
    expect(r.status).toBe(0);
    expect(r.out).toContain('installing the Debian packages the tests need: chromium mariadb-server');
    expect(r.aptCalls).toEqual(['update -qq', 'install -y -qq --no-install-recommends chromium mariadb-server']);
    expect(r.installed.sort()).toEqual([...ALL].sort());
  });

  it('not root: stops at once with the one command to run, installing nothing', () => {
    const r = runWith(ALL.slice(2), false);
    expect(r.status).toBe(1);
    expect(r.out).toContain(
      "sudo sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium poppler-utils'",
    );
    expect(r.aptCalls).toEqual([]);
  });

  it('a failing apt-get fails the test command with the command to run by hand', () => {
    const r = runWith(ALL.slice(1), true, true);
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/apt-get failed \(100\); run it by hand: .*install .* chromium/);
  });
});
