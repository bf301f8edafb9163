/**
 * Backups (docs/operations.md, admins): the schedule of BACKUP_DIR, the last backup that worked and
 * the last that failed (with its error), and every backup in the folder, newest first, with its
 * manifest: when, size, release, migration level, rows, ledger totals, whether it carries the key.
 * A file whose manifest cannot be read is listed as failed, with the reason. Below them, what
 * point-in-time recovery holds: the base backups in BACKUP_DIR/base, newest first (from when a
 * recovery from each can stop, size, release, server, timeline, first WAL segment), and the
 * archived WAL, summed. Read-only: backups are taken by the schedule, by `npm start` (base backups)
 * or by `npm run backup`.
 */
import { api } from './api.js';
import { count } from './format.js';
import { addTexts, t } from './i18n.js';
import { bytes, dateTime, html, Loaded, Table, useLoad } from './ui.js';

addTexts({
  ar: {
    Backups: 'النسخ الاحتياطية',
    Schedule: 'الجدولة',
    'Scheduled backups are off: point this variable at a folder on the server:':
      'النسخ الاحتياطية المجدولة متوقفة: اضبط هذا المتغير على مجلد في الخادم:',
    Folder: 'المجلد',
    Every: 'كل',
    '{n} hours': '{n} ساعة',
    '{n} minutes': '{n} دقيقة',
    '{n} seconds': '{n} ثانية',
    'only by hand': 'يدويًا فقط',
    Kept: 'المحفوظ',
    'the newest {n}': 'أحدث {n}',
    'Encryption key': 'مفتاح التشفير',
    'carried, sealed with the passphrase': 'مضمَّن، مختوم بعبارة المرور',
    'not carried: keep the key apart': 'غير مضمَّن: احفظ المفتاح على حدة',
    'Failure alerts': 'تنبيهات الفشل',
    'sent over chat': 'تُرسل عبر المحادثة',
    'not set': 'غير مضبوطة',
    'The last backup failed at {when}:': 'فشل آخر نسخ احتياطي في {when}:',
    'Last backup written at {when}:': 'كُتبت آخر نسخة احتياطية في {when}:',
    'No backup in the folder yet.': 'لا توجد نسخة احتياطية في المجلد بعد.',
    File: 'الملف',
    Taken: 'وقت الأخذ',
    Size: 'الحجم',
    Release: 'الإصدار',
    Migration: 'الترحيل',
    Rows: 'الصفوف',
    Key: 'المفتاح',
    Status: 'الحالة',
    carried: 'مضمَّن',
    'not carried': 'غير مضمَّن',
    complete: 'مكتملة',
    'failed:': 'فاشلة:',
    'Manifest of {file}': 'بيان {file}',
    'Rows per table': 'الصفوف لكل جدول',
    Table: 'الجدول',
    'Ledger totals': 'مجاميع دفتر الحسابات',
    'Checksum of the data': 'المجموع الاختباري للبيانات',
    'Taken in {s} s on server {version}': 'أُخذت في {s} ث على الخادم {version}',
    'Point-in-time recovery': 'الاستعادة إلى لحظة محددة',
    'Base backups': 'النسخ الأساسية',
    'No base backup in the folder: the embedded server takes them (npm start or npm run start:cluster without DATABASE_URL).':
      'لا توجد نسخة أساسية في المجلد: يأخذها الخادم المضمَّن (npm start أو npm run start:cluster بدون DATABASE_URL).',
    'Archived WAL: {n} segments, {size}, the newest archived at {when}.':
      'سجل WAL المؤرشف: {n} مقطعًا، {size}، آخرها أُرشف في {when}.',
    'No WAL archived yet.': 'لم يُؤرشف أي سجل WAL بعد.',
    'Recovers from': 'يستعيد من',
    Server: 'الخادم',
    Timeline: 'الخط الزمني',
    'First WAL segment': 'أول مقطع WAL',
  },
});

function interval(seconds) {
  if (!seconds) return t('only by hand');
  if (seconds % 3600 === 0) return t('{n} hours', { n: seconds / 3600 });
  if (seconds % 60 === 0) return t('{n} minutes', { n: seconds / 60 });
  return t('{n} seconds', { n: seconds });
}

function Schedule({ schedule }) {
  if (!schedule.dir)
    return html`<p class="muted">${t('Scheduled backups are off: point this variable at a folder on the server:')} <code>BACKUP_DIR</code></p>`;
  return html`<dl class="kv">
    <dt>${t('Folder')}</dt><dd><code>${schedule.dir}</code></dd>
    <dt>${t('Every')}</dt><dd>${interval(schedule.interval_seconds)}</dd>
    <dt>${t('Kept')}</dt><dd>${t('the newest {n}', { n: schedule.keep })}</dd>
    <dt>${t('Encryption key')}</dt>
    <dd>${schedule.key_carried ? t('carried, sealed with the passphrase') : t('not carried: keep the key apart')}</dd>
    <dt>${t('Failure alerts')}</dt><dd>${schedule.alert_to_set ? t('sent over chat') : t('not set')}</dd>
  </dl>`;
}

/** The last outcomes of this replica's schedule: a failure is said out loud, with the server's words. */
function Outcomes({ success, failure }) {
  const failedLast = failure && (!success || failure.at > success.at);
  return html`
    ${failedLast && html`<div class="message error" role="alert">${t('The last backup failed at {when}:', { when: dateTime(failure.at) })} <code>${failure.error}</code></div>`}
    ${success && html`<p>${t('Last backup written at {when}:', { when: dateTime(success.at) })} <code>${success.file}</code></p>`}`;
}

function rowsOf(manifest) {
  return Object.values(manifest.row_counts).reduce((a, b) => a + b, 0);
}

function Manifest({ backup }) {
  const m = backup.manifest;
  const rows = Object.entries(m.row_counts)
    .filter(([, n]) => n > 0)
    .map(([name, n]) => ({ id: name, name, n }));
  const ledger = Object.entries(m.ledger).map(([key, value]) => ({ id: key, key, value }));
  return html`<details class="manifest"><summary>${t('Manifest of {file}', { file: backup.file })}</summary>
    <p>${t('Taken in {s} s on server {version}', { s: m.seconds.toFixed(1), version: m.server_version })}</p>
    <p>${t('Checksum of the data')}: <code>${m.checksum.data}</code></p>
    <${Table} caption="Rows per table" rows=${rows} columns=${[
      ['name', 'Table', (r) => html`<code>${r.name}</code>`],
      ['n', 'Rows', (r) => count(r.n)],
    ]} />
    <${Table} caption="Ledger totals" rows=${ledger} columns=${[
      ['key', 'Key', (r) => html`<code>${r.key}</code>`],
      ['value', 'Total', (r) => html`<code>${r.value}</code>`],
    ]} />
  </details>`;
}

/** Point-in-time recovery: the base backups a recovery starts from and the WAL it replays. */
function Recovery({ bases, wal }) {
  return html`<h2>${t('Point-in-time recovery')}</h2>
    <p>${
      wal.segments
        ? t('Archived WAL: {n} segments, {size}, the newest archived at {when}.', {
            n: count(wal.segments),
            size: bytes(wal.bytes),
            when: dateTime(wal.newest_archived_at),
          })
        : t('No WAL archived yet.')
    }</p>
    <${Table} caption="Base backups" rows=${bases.map((b) => ({ ...b, id: b.name }))}
      empty="No base backup in the folder: the embedded server takes them (npm start or npm run start:cluster without DATABASE_URL)." columns=${[
        ['name', 'Name', (b) => html`<code>${b.name}</code>`],
        ['from', 'Recovers from', (b) => dateTime(b.stop_time)],
        ['bytes', 'Size', (b) => bytes(b.bytes)],
        ['release', 'Release', (b) => html`<code>${b.app_version}</code>`],
        ['server', 'Server', (b) => b.server_version],
        ['timeline', 'Timeline', (b) => count(b.timeline)],
        ['wal', 'First WAL segment', (b) => html`<code>${b.start_wal}</code>`],
      ]} />`;
}

export function BackupsPage() {
  const listing = useLoad(() => api('GET', '/api/backups'), []);
  return html`<section>
    <div class="page-head"><h1>${t('Backups')}</h1></div>
    <${Loaded} state=${listing}>${({ data }) => html`
      <h2>${t('Schedule')}</h2>
      <${Schedule} schedule=${data.schedule} />
      <${Outcomes} success=${data.last_success} failure=${data.last_failure} />
      <${Table} rows=${data.backups.map((b) => ({ ...b, id: b.file }))} empty="No backup in the folder yet." columns=${[
        ['file', 'File', (b) => html`<code>${b.file}</code>`],
        ['taken', 'Taken', (b) => (b.manifest ? dateTime(b.manifest.created_at) : '—')],
        ['bytes', 'Size', (b) => bytes(b.bytes)],
        ['release', 'Release', (b) => (b.manifest ? html`<code>${b.manifest.app_version}</code>` : '—')],
        [
          'migration',
          'Migration',
          (b) =>
            b.manifest ? html`${count(b.manifest.migration.count)} <code>${b.manifest.migration.tag}</code>` : '—',
        ],
        ['rows', 'Rows', (b) => (b.manifest ? count(rowsOf(b.manifest)) : '—')],
        [
          'key',
          'Key',
          (b) => (b.manifest ? (b.manifest.encryption_key.carried ? t('carried') : t('not carried')) : '—'),
        ],
        [
          'status',
          'Status',
          (b) =>
            b.manifest ? t('complete') : html`<span class="error">${t('failed:')} <code>${b.error}</code></span>`,
        ],
      ]} />
      ${data.backups.filter((b) => b.manifest).map((b) => html`<${Manifest} key=${b.file} backup=${b} />`)}
      ${data.wal_archive && html`<${Recovery} bases=${data.base_backups} wal=${data.wal_archive} />`}`}</${Loaded}>
  </section>`;
}
