/**
 * Scheduled backups (services/backups): every BACKUP_INTERVAL_SECONDS into BACKUP_DIR, the newest
 * BACKUP_KEEP kept, listed with their manifests at GET /api/backups for admins only; a failed
 * backup is logged, shown in the listing and sent to BACKUP_ALERT_TO over the chat provider.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { readHeader } from '../../shared/backup/file-format';
import { codeLevel } from '../../shared/backup/migration-level';
import type { BaseBackupInfo } from '../../shared/backup/wal-archive';
import type { WalArchiveSummary } from '../../services/backups/pitr-listing';
import { db } from '../../shared/db/client';
import { saveSettings } from '../../shared/settings';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';

const ENV_KEYS = ['BACKUP_DIR', 'BACKUP_INTERVAL_SECONDS', 'BACKUP_KEEP', 'BACKUP_PASSPHRASE', 'BACKUP_ALERT_TO'];
const saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
let tmp: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'backups-scheduled-'));
});

afterAll(() => {
  for (const k of ENV_KEYS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface Listing {
  schedule: { dir: string; interval_seconds: number; keep: number; key_carried: boolean };
  last_success: { at: string; file: string } | null;
  last_failure: { at: string; error: string } | null;
  backups: {
    file: string;
    bytes: number;
    manifest: {
      migration: { tag: string };
      row_counts: Record<string, number>;
      encryption_key: { carried: boolean };
    } | null;
  }[];
  base_backups: BaseBackupInfo[];
  wal_archive: WalArchiveSummary | null;
}

/** A base backup as takeBaseBackup leaves it (shared/backup/base-backup.ts): its folder and base.json. */
function writeBase(backupDir: string, name: string, startWal: string): BaseBackupInfo {
  const info: BaseBackupInfo = {
    name,
    system_identifier: '7400000000000000001',
    timeline: 1,
    start_lsn: '0/3000028',
    stop_lsn: '0/3000120',
    start_wal: startWal,
    start_time: '2026-11-28T00:00:00.000Z',
    stop_time: '2026-11-28T00:00:02.000Z',
    server_version: '18.4',
    app_version: '0.1.0',
    bytes: 31_000_000,
    key_fingerprint: 'abcdef0123456789',
  };
  fs.mkdirSync(path.join(backupDir, 'base', name), { recursive: true });
  fs.writeFileSync(path.join(backupDir, 'base', name, 'base.json'), JSON.stringify(info));
  return info;
}

describe('every interval, the newest BACKUP_KEEP kept', () => {
  let t: TestApp;
  const dir = () => path.join(tmp, 'ok');

  beforeAll(async () => {
    Object.assign(process.env, {
      BACKUP_DIR: dir(),
      BACKUP_INTERVAL_SECONDS: '1',
      BACKUP_KEEP: '2',
      BACKUP_PASSPHRASE: 'scheduled passphrase',
    });
    delete process.env.BACKUP_ALERT_TO;
    t = await startTestApp();
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  test('backups are written, the oldest deleted past the count, and listed with their manifests for admins', async () => {
    const api = client(t.baseUrl);
    const list = async () => (await api.get<{ data: Listing }>('/api/backups', { token: adminToken() })).body.data;
    const first = await until('a first backup', async () => (await list()).backups.at(-1)?.file);
    // Retention at work: the first one gone, two kept.
    await until('retention', async () => {
      const l = await list();
      return l.backups.length === 2 && !l.backups.some((b) => b.file === first) ? l : undefined;
    });
    // The schedule held still from here: a backup written and one pruned between the listing and
    // the reads below (every second, and slower on a loaded machine) would leave them apart.
    const backups = t.app.broker.getLocalService('backups') as unknown as {
      timer?: NodeJS.Timeout;
      running?: Promise<void>;
    };
    clearInterval(backups.timer);
    await backups.running;
    const after = await list();
    expect(after.backups).toHaveLength(2);
    expect(
      fs
        .readdirSync(dir())
        .filter((f) => f.endsWith('.backup'))
        .sort(),
    ).toEqual(after.backups.map((b) => b.file).sort());
    expect(after.backups[0].file > after.backups[1].file).toBe(true);
    expect(after.schedule).toMatchObject({ dir: dir(), interval_seconds: 1, keep: 2, key_carried: true });
    expect(after.last_failure).toBeNull();
    for (const b of after.backups) {
      expect(b.manifest?.migration.tag).toBe(codeLevel().tag);
      expect(b.manifest?.encryption_key.carried).toBe(true);
      expect(b.manifest?.row_counts.managers).toBeGreaterThanOrEqual(1);
      const { header } = await readHeader(path.join(dir(), b.file));
      expect(b.bytes).toBe(fs.statSync(path.join(dir(), b.file)).size);
      expect(header.manifest).toEqual(b.manifest);
    }
    const reseller = await api.get('/api/backups', { token: token('reseller', { resellerId: 1 }) });
    expect(reseller.status).toBe(403);
    expect((await api.get('/api/backups')).status).toBe(401);
  }, 90_000);

  test('the point-in-time recovery base backups and the archived WAL are listed beside them', async () => {
    const older = writeBase(dir(), 'base-20261128T000000Z', '000000010000000000000003');
    const newer = writeBase(dir(), 'base-20261128T060000Z', '000000010000000000000009');
    // Being copied (not renamed yet), and a folder without its base.json: neither is a base backup.
    fs.mkdirSync(path.join(dir(), 'base', 'base-20261128T120000Z.partial'), { recursive: true });
    fs.mkdirSync(path.join(dir(), 'base', 'base-20261128T130000Z'), { recursive: true });
    fs.mkdirSync(path.join(dir(), 'wal'), { recursive: true });
    for (const [name, size] of [
      ['000000010000000000000009', 1000],
      ['00000001000000000000000A', 500],
      ['00000002.history', 40],
      ['00000001000000000000000B.part', 70],
    ] as const)
      fs.writeFileSync(path.join(dir(), 'wal', name), Buffer.alloc(size));

    const api = client(t.baseUrl);
    const res = await api.get<{ data: Listing }>('/api/backups', { token: adminToken() });
    expect(res.status).toBe(200);
    expect(res.body.data.base_backups).toEqual([newer, older]);
    expect(res.body.data.wal_archive).toEqual({
      segments: 2,
      bytes: 1500,
      newest_segment: '00000001000000000000000A',
      newest_archived_at: fs.statSync(path.join(dir(), 'wal', '00000001000000000000000A')).mtime.toISOString(),
    });
    // The backup files are listed as before: the base and WAL folders are not backups.
    expect(res.body.data.backups.every((b) => b.file.endsWith('.backup'))).toBe(true);

    const openapi = (await api.get<Record<string, unknown>>('/api/openapi.json')).body as {
      paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: unknown }> }> } }>;
    };
    const documented = JSON.stringify(openapi.paths['/api/backups'].get.responses['200']);
    for (const field of ['base_backups', 'stop_time', 'start_wal', 'wal_archive', 'newest_archived_at'])
      expect(documented).toContain(field);
  });
});

describe('without BACKUP_DIR', () => {
  let t: TestApp;

  beforeAll(async () => {
    for (const k of ENV_KEYS) delete process.env[k];
    t = await startTestApp();
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  test('nothing is listed, base backups and WAL included', async () => {
    const res = await client(t.baseUrl).get<{ data: Listing }>('/api/backups', { token: adminToken() });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ backups: [], base_backups: [], wal_archive: null });
  });
});

describe('a failed backup', () => {
  let t: TestApp;
  let stub: http.Server;
  const received: { path: string; body: { chat_id: string; text: string } }[] = [];

  beforeAll(async () => {
    stub = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body: JSON.parse(body || '{}') });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, result: { message_id: received.length } }));
      });
    });
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
    // A file where the folder should be: every backup fails.
    const blocked = path.join(tmp, 'not-a-folder');
    fs.writeFileSync(blocked, 'x');
    Object.assign(process.env, {
      BACKUP_DIR: path.join(blocked, 'backups'),
      BACKUP_INTERVAL_SECONDS: '1',
      BACKUP_ALERT_TO: '424242',
    });
    t = await startTestApp();
    await saveSettings(db(), {
      messaging_provider: 'telegram',
      telegram_bot_token: '123456:ABC-DEF',
      telegram_base_url: `http://127.0.0.1:${(stub.address() as AddressInfo).port}`,
      allow_private_targets: true,
    });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await new Promise((r) => stub.close(r));
  });

  test('is shown in the listing and sent to the operator by chat', async () => {
    const api = client(t.baseUrl);
    const listing = await until('a failure', async () => {
      const l = (await api.get<{ data: Listing }>('/api/backups', { token: adminToken() })).body.data;
      return l.last_failure ? l : undefined;
    });
    expect(listing.last_failure?.error).toMatch(/ENOTDIR/);
    expect(listing.backups).toEqual([]);
    const alert = await until('the chat alert', async () => received.find((r) => r.path.endsWith('/sendMessage')));
    expect(alert.path).toBe('/bot123456:ABC-DEF/sendMessage');
    expect(alert.body.chat_id).toBe('424242');
    expect(alert.body.text).toMatch(/^Backup failed at .* ENOTDIR/);
  }, 60_000);
});
