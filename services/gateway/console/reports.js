/**
 * The Reports page (issue 38, docs/reports.md): a report of GET /api/reports/:name over a date range,
 * its rows as a table (revenue also as a chart), its totals, and the same rows as a CSV download.
 */
import { api } from './api.js';
import { Chart, toSeries } from './charts.js';
import { addTexts, fieldLabel, knownField, t } from './i18n.js';
import { options, resellers } from './lookups.js';
import { go } from './router.js';
import { session } from './session.js';
import { Form, html, KeyValues, Loaded, money, notify, Pager, Table, useLoad } from './ui.js';

addTexts({
  ar: {
    // Grouping options (select labels go through t).
    Period: 'الفترة',
    day: 'اليوم',
    week: 'الأسبوع',
    month: 'الشهر',
    method: 'طريقة الدفع',
    plan: 'الباقة',
    reseller: 'الموزّع',
    manager: 'المدير',
    Reports: 'التقارير',
    Report: 'التقرير',
    Revenue: 'الإيرادات',
    Aging: 'أعمار الديون',
    Expiring: 'قرب الانتهاء',
    Usage: 'الاستهلاك',
    'Reseller statement': 'كشف حساب الموزع',
    Cards: 'البطاقات',
    From: 'من',
    To: 'إلى',
    'Group by': 'التجميع حسب',
    By: 'حسب',
    'Reseller id': 'رقم الموزع',
    Show: 'عرض',
    'Download CSV': 'تنزيل CSV',
    Totals: 'الإجماليات',
    'CSV downloaded': 'تم تنزيل CSV',
  },
});

const REPORTS = [
  ['revenue', 'Revenue'],
  ['aging', 'Aging'],
  ['expiring', 'Expiring'],
  ['usage', 'Usage'],
  ['reseller-statement', 'Reseller statement'],
  ['cards', 'Cards'],
];
const RANGED = new Set(['revenue', 'expiring', 'usage', 'reseller-statement', 'cards']);
const KEYS = ['from', 'to', 'group', 'by', 'reseller_id', 'page'];

function queryOf(name, query) {
  const out = {};
  for (const k of KEYS) if (query[k]) out[k] = query[k];
  if (!RANGED.has(name)) {
    delete out.from;
    delete out.to;
  }
  if (name !== 'revenue') delete out.group;
  if (name !== 'revenue' && name !== 'aging') delete out.by;
  return out;
}

/** The CSV of the same query, fetched with the session's token and saved as a file. */
async function downloadCsv(name, query) {
  const { page: _page, ...all } = query;
  const qs = new URLSearchParams({ ...all, format: 'csv' });
  const res = await fetch(`/api/reports/${name}?${qs}`, { headers: { authorization: `Bearer ${session.token}` } });
  if (!res.ok) throw new Error((await res.json()).message);
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = `${name}.csv`;
  a.click();
  URL.revokeObjectURL(url);
  notify(t('CSV downloaded'));
}

function Totals({ res }) {
  if (res.totals)
    return html`<h2>${t('Totals')}</h2><ul>${res.totals.map((x) => html`<li key=${x.currency}>${money(x.amount, x.currency)} (${x.count})</li>`)}</ul>`;
  if (res.statement)
    return html`<${KeyValues} data=${res.statement} keys=${['name', 'currency', 'opening_balance', 'closing_balance', 'balance_now']} />`;
  return null;
}

function revenueChart(rows) {
  const byPeriod = new Map();
  for (const r of rows) byPeriod.set(r.period, (byPeriod.get(r.period) ?? 0) + r.amount);
  return toSeries([...byPeriod].map(([period, amount]) => ({ period, amount })));
}

/** A report's money columns: amounts of a row that names its currency. */
const MONEY = /(^|_)(amount|total|balance|paid|due|outstanding|revenue|commission|price)$/;

/**
 * A report's columns from its first row: money in the one format, a payment method's key or name in
 * words ("Cash"), a count titled as a count.
 */
function columnsOf(rows) {
  if (!rows.length) return undefined;
  return Object.keys(rows[0]).map((k) => {
    if (k === 'count') return [k, 'Count'];
    if (MONEY.test(k)) return [k, fieldLabel(k), (r) => (r.currency ? money(r[k], r.currency) : r[k])];
    if (k === 'key' || k === 'name')
      return [
        k,
        fieldLabel(k),
        (r) => (typeof r[k] === 'string' && knownField(r[k]) ? fieldLabel(r[k]) : (r[k] ?? '—')),
      ];
    return [k, fieldLabel(k)];
  });
}

export function ReportsPage({ query }) {
  const name = query.name ?? 'revenue';
  const q = queryOf(name, query);
  const state = useLoad(() => api('GET', `/api/reports/${name}`, { query: q }), [name, JSON.stringify(q)]);
  const lookups = useLoad(() => resellers(), []);
  const fields = [
    {
      name: 'name',
      label: 'Report',
      type: 'select',
      options: REPORTS.map(([value, label]) => ({ value, label: t(label) })),
      value: name,
      required: true,
    },
    { name: 'from', label: 'From', type: 'date', value: query.from },
    { name: 'to', label: 'To', type: 'date', value: query.to },
    ...(name === 'revenue'
      ? [
          {
            name: 'group',
            label: 'Group by',
            type: 'select',
            options: ['day', 'week', 'month'].map((v) => ({ value: v, label: t(v) })),
            value: query.group,
          },
          {
            name: 'by',
            label: 'By',
            type: 'select',
            options: ['method', 'plan', 'reseller', 'manager'].map((v) => ({ value: v, label: t(v) })),
            value: query.by,
          },
        ]
      : []),
    lookups.data?.length
      ? {
          name: 'reseller_id',
          label: 'Reseller',
          type: 'select',
          numeric: true,
          options: options(lookups.data),
          value: query.reseller_id,
        }
      : { name: 'reseller_id', label: 'Reseller id', type: 'int', min: 1, value: query.reseller_id },
  ];
  return html`<h1>${t('Reports')}</h1>
    <${Form} className="filters" fields=${fields} submitLabel="Show" onSubmit=${(values) => go('/reports', { ...values, page: 1 })} />
    <p><button type="button" class="secondary" onClick=${() => downloadCsv(name, { ...q }).catch((err) => notify(String(err.message ?? err)))}>${t('Download CSV')}</button></p>
    <${Loaded} state=${state}>${(res) => {
      const chart = name === 'revenue' && res.data.length > 0 && revenueChart(res.data);
      return html`<${Totals} res=${res} />
        ${chart && html`<${Chart} title=${t('Revenue')} data=${chart} bars=${true} />`}
        <${Table} rows=${res.data} columns=${columnsOf(res.data)} />
        <${Pager} pagination=${res.pagination} onPage=${(page) => go('/reports', { ...query, name, page })} />`;
    }}</${Loaded}>`;
}
