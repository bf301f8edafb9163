/**
 * A MariaDB server of the test's own, as the FreeRADIUS tests start theirs: Debian's mariadbd on a
 * fresh data directory (mariadb-install-db) in a temporary folder, on a free loopback port, root
 * without a password. Nothing of the machine's own MariaDB is used or needed (only the package).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';

export interface MariaDb {
  /** `mysql://root@127.0.0.1:<port>/` */
  url: string;
  stop(): Promise<void>;
}

const SBIN = ['/usr/sbin', '/usr/bin', '/sbin'];

function findProgram(names: string[]): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), ...SBIN];
  for (const name of names) {
    for (const dir of dirs) {
      const file = path.join(dir, name);
      if (fs.existsSync(file)) return file;
    }
  }
  return undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function startMariadb(): Promise<MariaDb> {
  const server = findProgram(['mariadbd', 'mysqld']);
  const install = findProgram(['mariadb-install-db', 'mysql_install_db']);
  if (!server || !install) {
    throw new Error(
      "MariaDB is not installed: the daloRADIUS and phpnuxbill import tests start their own from Debian's mariadb-server (npm test installs it as root; else apt-get install mariadb-server)",
    );
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-test-mariadb-'));
  // mariadbd refuses to run as root unless told to; any other user runs it as itself.
  const asUser = process.getuid?.() === 0 ? ['--user=root'] : [];
  const init = spawnSync(
    install,
    ['--no-defaults', `--datadir=${dir}/data`, '--auth-root-authentication-method=normal', '--skip-test-db', ...asUser],
    { encoding: 'utf8' },
  );
  if (init.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`${install} failed (${init.status}):\n${init.stdout}${init.stderr}`);
  }
  const port = await freePort();
  const proc: ChildProcess = spawn(
    server,
    [
      '--no-defaults',
      `--datadir=${dir}/data`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--socket=${dir}/mysqld.sock`,
      `--pid-file=${dir}/mysqld.pid`,
      `--log-error=${dir}/error.log`,
      '--skip-log-bin',
      '--innodb-buffer-pool-size=32M',
      ...asUser,
    ],
    { stdio: 'ignore' },
  );
  const url = `mysql://root@127.0.0.1:${port}/`;
  const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
  const errorLog = () => (fs.existsSync(`${dir}/error.log`) ? fs.readFileSync(`${dir}/error.log`, 'utf8') : '');
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw new Error(`mariadbd exited (${proc.exitCode}) before serving`);
    }
    try {
      const conn = await mysql.createConnection({ uri: url });
      await conn.end();
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        const log = errorLog();
        proc.kill('SIGKILL');
        fs.rmSync(dir, { recursive: true, force: true });
        throw new Error(`mariadbd did not serve on ${url} in 30 s: ${(err as Error).message}\n${log.slice(-2000)}`, {
          cause: err,
        });
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    async stop() {
      if (proc.exitCode === null) {
        proc.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
