/**
 * Imports (docs/import.md, admins): start one from daloRADIUS, phpnuxbill or CSV (the CSV files
 * uploaded from this browser, or a database URL or a path under the server's IMPORT_DIR), a dry
 * run first by default; follow its progress; read its reconciliation report; then run for real the
 * same request. The job's number is in the address (`#/imports?job=7`), so a reload follows it
 * again. The API keeps no list of imports: the audit trail has them (`import.start`).
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { addTexts, fieldLabel, t } from './i18n.js';
import { go } from './router.js';
import { dateTime, ErrorMessage, Form, html, KeyValues, money, notify, Table } from './ui.js';

addTexts(
  {
    ar: {
      Imports: 'الاستيراد',
      'Start an import': 'بدء استيراد',
      From: 'من',
      'Source: a MySQL URL, or a file or folder under IMPORT_DIR': 'المصدر: رابط MySQL أو ملف أو مجلد ضمن IMPORT_DIR',
      'subscribers.csv (required for an upload)': 'subscribers.csv (مطلوب عند الرفع)',
      'plans.csv (optional)': 'plans.csv (اختياري)',
      'history.csv (optional)': 'history.csv (اختياري)',
      'CSV files from this computer': 'ملفات CSV من هذا الحاسوب',
      'Dry run: write nothing, report what would happen': 'تشغيل تجريبي: لا يُكتب شيء، تقرير بما سيحدث',
      'Column names (theirs=ours, comma-separated)': 'أسماء الأعمدة (اسمهم=اسمنا، مفصولة بفواصل)',
      'Reseller of subscribers the source names none for': 'الموزّع للمشتركين الذين لا يحدد المصدر موزّعًا لهم',
      'Subscribers per batch': 'المشتركون في كل دفعة',
      Start: 'بدء',
      'Give a source or upload subscribers.csv, not both.': 'أدخل مصدرًا أو ارفع subscribers.csv، لا كليهما.',
      'A database import needs its source URL.': 'استيراد قاعدة البيانات يحتاج رابط المصدر.',
      'Import #{id}': 'الاستيراد رقم {id}',
      'Import #{id} started': 'بدأ الاستيراد رقم {id}',
      'dry run': 'تشغيل تجريبي',
      'for real': 'فعلي',
      '{processed} of {total} subscribers written': 'كُتب {processed} من {total} مشترك',
      'Import progress': 'تقدّم الاستيراد',
      'The report': 'التقرير',
      Entity: 'الكيان',
      Read: 'مقروء',
      Imported: 'مستورد',
      Unchanged: 'دون تغيير',
      Skipped: 'متخطّى',
      Conflicting: 'متعارض',
      Money: 'المال',
      'In the source': 'في المصدر',
      'Not imported': 'غير مستورد',
      'Here after': 'هنا بعد الاستيراد',
      Difference: 'الفرق',
      'The totals reconcile to the cent.': 'المجاميع متطابقة حتى آخر قرش.',
      'The totals do not reconcile: see the mismatches.': 'المجاميع غير متطابقة: انظر الفروقات.',
      Issues: 'المشكلات',
      'No issue.': 'لا توجد مشكلات.',
      Reason: 'السبب',
      Count: 'العدد',
      'First keys': 'أولى المفاتيح',
      Mismatches: 'الفروقات',
      'Every issue is in {file} on the server.': 'كل المشكلات في {file} على الخادم.',
      'Run it for real': 'تشغيله فعليًا',
      'The same import writes this time.': 'الاستيراد نفسه يكتب هذه المرة.',
      'Follow import number': 'متابعة الاستيراد رقم',
      Follow: 'متابعة',
      balances: 'الأرصدة',
      queued: 'في الانتظار',
      running: 'قيد التشغيل',
      done: 'تم',
      failed: 'فشل',
      'reading and planning': 'القراءة والتخطيط',
      writing: 'الكتابة',
      skipped: 'متخطّى',
      conflicting: 'متعارض',
      warning: 'تحذير',
      Key: 'المفتاح',
      What: 'ماذا',
      Outcome: 'النتيجة',
      payments: 'المدفوعات',
    },
  },
  {
    from: ['From', 'من'],
    source: ['Source', 'المصدر'],
    finished_at: ['Finished', 'تاريخ الانتهاء'],
    subscribers: ['Subscribers', 'المشتركون'],
    plans: ['Plans', 'الباقات'],
    resellers: ['Resellers', 'الموزّعون'],
    history: ['Payment history', 'سجل المدفوعات'],
    service_limits: ['Plans allowed to resellers', 'الباقات المسموحة للموزّعين'],
    routers: ['Access servers', 'خوادم الوصول'],
    sessions: ['Sessions', 'الجلسات'],
  },
);

const SOURCES = ['csv', 'daloradius', 'phpnuxbill'];
/** The systems' own spellings. */
const SOURCE_NAMES = { csv: 'CSV', daloradius: 'daloRADIUS', phpnuxbill: 'phpnuxbill' };
const FILES = [
  ['subscribers', 'subscribers.csv (required for an upload)'],
  ['plans', 'plans.csv (optional)'],
  ['history', 'history.csv (optional)'],
];

/** A money total of the report, given in minor units of its currency, as the currency's decimals. */
function minor(amount, currency) {
  let digits = 2;
  try {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits;
  } catch {
    // An unknown code keeps two decimals.
  }
  const sign = amount < 0 ? '-' : '';
  const text = String(Math.abs(amount)).padStart(digits + 1, '0');
  const major = digits ? `${text.slice(0, -digits)}.${text.slice(-digits)}` : text;
  return money(Number(`${sign}${major}`), currency);
}

/** The request a start form gives: its fields, and the uploaded files' text. */
async function requestOf(values, form) {
  const body = { ...values };
  const files = {};
  for (const [name] of FILES) {
    const file = form.elements.namedItem(`file_${name}`)?.files?.[0];
    if (file) files[name] = await file.text();
  }
  if (Object.keys(files).length) {
    if (body.source !== undefined || !files.subscribers)
      throw new Error(t('Give a source or upload subscribers.csv, not both.'));
    body.files = files;
  } else if (body.source === undefined) {
    throw new Error(
      body.from === 'csv'
        ? t('Give a source or upload subscribers.csv, not both.')
        : t('A database import needs its source URL.'),
    );
  }
  return body;
}

function Report({ report }) {
  const entities = Object.entries(report.entities ?? {}).map(([entity, c]) => ({ entity, ...c }));
  const moneyRows = Object.entries(report.money ?? {})
    .filter(([, m]) => m && typeof m === 'object')
    .map(([line, m]) => ({ line, ...m }));
  return html`<section class="card" aria-labelledby="h-report">
    <h2 id="h-report">${t('The report')}</h2>
    <${Table} rows=${entities} columns=${[
      ['entity', 'Entity', (r) => fieldLabel(r.entity)],
      ['read', 'Read'],
      ['imported', 'Imported'],
      ['unchanged', 'Unchanged'],
      ['skipped', 'Skipped'],
      ['conflicting', 'Conflicting'],
    ]} />
    <h3>${t('Money')}</h3>
    <${Table} rows=${moneyRows} columns=${[
      ['line', 'Money', (r) => t(r.line)],
      ['source', 'In the source', (r) => minor(r.source, report.currency)],
      ['notImported', 'Not imported', (r) => minor(r.notImported, report.currency)],
      ['after', 'Here after', (r) => minor(r.after, report.currency)],
      ['difference', 'Difference', (r) => minor(r.difference, report.currency)],
    ]} />
    <p class=${report.money?.reconciled ? 'reconciled' : 'warning'}>${t(
      report.money?.reconciled
        ? 'The totals reconcile to the cent.'
        : 'The totals do not reconcile: see the mismatches.',
    )}</p>
    <h3>${t('Issues')}</h3>
    <${Table} rows=${report.reasons ?? []} empty="No issue." columns=${[
      ['entity', 'Entity', (r) => fieldLabel(r.entity)],
      ['outcome', 'Outcome', (r) => t(r.outcome)],
      ['reason', 'Reason'],
      ['count', 'Count'],
      ['examples', 'First keys', (r) => r.examples.join(', ')],
    ]} />
    ${report.issuesFile && html`<p class="muted">${t('Every issue is in {file} on the server.', { file: report.issuesFile })}</p>`}
    ${
      report.mismatches?.length > 0 &&
      html`<h3>${t('Mismatches')}</h3><${Table} rows=${report.mismatches} columns=${[
        ['entity', 'Entity', (r) => fieldLabel(r.entity)],
        ['key', 'Key'],
        ['what', 'What'],
        ['source', 'In the source'],
        ['ours', 'Here after'],
      ]} />`
    }
  </section>`;
}

/** Job `id`, polled every second until it is done or failed. */
function Job({ id, request, onAgain }) {
  const [job, setJob] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    let stop = false;
    let timer;
    async function poll() {
      try {
        const res = await api('GET', `/api/imports/${id}`);
        if (stop) return;
        setJob(res.data);
        setError(null);
        if (res.data.status === 'done' || res.data.status === 'failed') return;
      } catch (err) {
        if (stop) return;
        setError(err);
        if (!err.retryable) return;
      }
      timer = setTimeout(poll, 1000);
    }
    poll();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [id]);
  return html`<section class="card" aria-labelledby="h-job" aria-live="polite">
    <h2 id="h-job">${t('Import #{id}', { id })}</h2>
    <${ErrorMessage} error=${error} />
    ${
      job &&
      html`<p><strong class="job-status">${t(job.status)}</strong>${[
        t(job.dry_run ? 'dry run' : 'for real'),
        ...(job.phase && job.phase !== job.status ? [t(job.phase)] : []),
        t('{processed} of {total} subscribers written', job),
      ].map((part) => ` · ${part}`)}</p>
      <progress max=${Math.max(job.total, 1)} value=${job.processed} aria-label=${t('Import progress')}>${job.processed}/${job.total}</progress>
      <${KeyValues} data=${{ from: job.from, source: job.source, created_at: dateTime(job.created_at), finished_at: job.finished_at ? dateTime(job.finished_at) : null, error: job.error }} />
      ${job.report && html`<${Report} report=${job.report} />`}
      ${
        job.status === 'done' &&
        job.dry_run &&
        request &&
        html`<div class="actions"><p>${t('The same import writes this time.')}</p>
          <button type="button" onClick=${() => onAgain({ ...request, dry_run: false })}>${t('Run it for real')}</button></div>`
      }`
    }
  </section>`;
}

export function ImportsPage({ query }) {
  const jobId = query.job ? Number(query.job) : null;
  // The last request, kept to run a finished dry run for real (files included); gone on reload.
  const [request, setRequest] = useState(null);
  const [error, setError] = useState(null);
  function started(body, res) {
    setRequest({ id: res.data.id, body });
    notify(t('Import #{id} started', { id: res.data.id }));
    go('/imports', { job: res.data.id });
  }
  async function start(body) {
    setError(null);
    try {
      started(body, await api('POST', '/api/imports', { body }));
    } catch (err) {
      setError(err);
    }
  }
  return html`<section>
    <div class="page-head"><h1>${t('Imports')}</h1></div>
    <section class="card" aria-labelledby="h-start">
      <h2 id="h-start">${t('Start an import')}</h2>
      <${Form} submitLabel="Start" fields=${[
        {
          name: 'from',
          label: 'From',
          type: 'select',
          required: true,
          options: SOURCES.map((s) => ({ value: s, label: SOURCE_NAMES[s] })),
        },
        { name: 'source', label: 'Source: a MySQL URL, or a file or folder under IMPORT_DIR' },
        { name: 'dry_run', label: 'Dry run: write nothing, report what would happen', type: 'checkbox', value: true },
        { name: 'columns', label: 'Column names (theirs=ours, comma-separated)' },
        { name: 'reseller', label: 'Reseller of subscribers the source names none for' },
        { name: 'batch_size', label: 'Subscribers per batch', type: 'int', min: 1, max: 10000 },
      ]} onSubmit=${async (values, form) => {
        const body = await requestOf(values, form);
        started(body, await api('POST', '/api/imports', { body }));
      }}>
        <fieldset class="field files">
          <legend>${t('CSV files from this computer')}</legend>
          ${FILES.map(
            ([name, label]) => html`<div class="field"><label for=${`file-${name}`}>${t(label)}</label>
              <input id=${`file-${name}`} name=${`file_${name}`} type="file" accept=".csv,text/csv" /></div>`,
          )}
        </fieldset>
      </${Form}>
    </section>
    <${ErrorMessage} error=${error} />
    <${Form} className="form inline" submitLabel="Follow" fields=${[
      { name: 'job', label: 'Follow import number', type: 'int', min: 1, value: jobId ?? undefined },
    ]} onSubmit=${async (v) => go('/imports', { job: v.job })} />
    ${jobId && html`<${Job} key=${jobId} id=${jobId} request=${request?.id === jobId ? request.body : null} onAgain=${start} />`}
  </section>`;
}
