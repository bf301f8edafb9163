import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  baseBackupName,
  baseFor,
  basesBeyondRetention,
  isBaseBackupName,
  walBeyondRetention,
  type BaseBackupInfo,
} from '../../shared/backup/wal-archive';

const base = (name: string, stop: string, startWal = '000000010000000000000003'): BaseBackupInfo => ({
  name,
  system_identifier: '1',
  timeline: 1,
  start_lsn: '0/3000028',
  stop_lsn: '0/3000120',
  start_wal: startWal,
  start_time: stop,
  stop_time: stop,
  server_version: '18',
  app_version: '0.1.0',
  bytes: 1,
  key_fingerprint: null,
});

test('base names sort by time and are told from other folders', () => {
  expect(baseBackupName(new Date('2026-11-28T23:05:09.123Z'))).toBe('base-20261128T230509Z');
  expect(isBaseBackupName('base-20261128T230509Z')).toBe(true);
  expect(isBaseBackupName('base-20261128T230509Z.partial')).toBe(false);
  expect(
    basesBeyondRetention(['base-20261128T000000Z', 'x', 'base-20261127T000000Z', 'base-20261129T000000Z'], 2),
  ).toEqual(['base-20261127T000000Z']);
});

test('the base for a moment is the newest that had finished by then', () => {
  const bases = [base('a', '2026-11-28T10:00:00Z'), base('b', '2026-11-28T12:00:00Z')];
  expect(baseFor(bases, new Date('2026-11-28T11:00:00Z'))?.name).toBe('a');
  expect(baseFor(bases, new Date('2026-11-28T12:00:00Z'))?.name).toBe('b');
  expect(baseFor(bases, new Date('2026-11-28T09:59:59Z'))).toBeUndefined();
});

test('WAL older than the oldest kept base goes, across timelines; histories stay', () => {
  const names = [
    '000000010000000000000001',
    '000000010000000000000002.00000028.backup',
    '000000010000000000000003',
    '000000020000000000000002',
    '00000002.history',
    '000000020000000000000004',
  ];
  expect(walBeyondRetention(names, '000000010000000000000003')).toEqual([
    '000000010000000000000001',
    '000000010000000000000002.00000028.backup',
    '000000020000000000000002',
  ]);
});

describe('the archive command (run by /bin/sh as the server would)', () => {
  const run = (cmd: string, cwd: string) => spawnSync('/bin/sh', ['-c', cmd], { cwd }).status;
  // bootstrap.mjs is ESM: its command is built in a child.
  const command = (dir: string): string =>
    spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { archiveCommand } from ${JSON.stringify(path.resolve('shared/db/bootstrap.mjs'))}; process.stdout.write(archiveCommand(${JSON.stringify(dir)}))`,
      ],
      { encoding: 'utf8' },
    ).stdout;

  test('copies a segment whole, accepts the same one again, refuses a different one', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wal-cmd-'));
    const archive = path.join(root, "it's archive");
    fs.mkdirSync(archive);
    fs.mkdirSync(path.join(root, 'pg_wal'));
    fs.writeFileSync(path.join(root, 'pg_wal', 'SEG'), 'one');
    const cmd = command(archive).replaceAll('%p', 'pg_wal/SEG').replaceAll('%f', 'SEG');
    expect(run(cmd, root)).toBe(0);
    expect(fs.readFileSync(path.join(archive, 'SEG'), 'utf8')).toBe('one');
    expect(fs.readdirSync(archive)).toEqual(['SEG']);
    expect(run(cmd, root)).toBe(0);
    fs.writeFileSync(path.join(root, 'pg_wal', 'SEG'), 'two');
    expect(run(cmd, root)).not.toBe(0);
    expect(fs.readFileSync(path.join(archive, 'SEG'), 'utf8')).toBe('one');
    fs.rmSync(root, { recursive: true, force: true });
  });
});
