/**
 * The audit trail (docs/security.md), for admins and resellers (a reseller reads its tree's rows):
 * filters by actor, target type, target id and time, a page of rows newest first, and each row's
 * changes as a table of before and after.
 */
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { addTexts, fieldLabel, knownField, t } from './i18n.js';
import { dateTime, Form, html, Loaded, Pager, Table, useLoad } from './ui.js';

addTexts({}, { invoice_id: ['Invoice', 'الفاتورة'], payment_id: ['Payment', 'الدفعة'] });
addTexts({ ar: { 'key {key} of {name}': 'المفتاح {key} لـ {name}' } });

/** The target types the trail writes (docs/security.md's table). */
const TARGET_TYPES = [
  'subscriber',
  'invoice',
  'plan',
  'reseller',
  'nas',
  'card',
  'card_batch',
  'bulk_job',
  'bandwidth_rule',
  'manager',
  'api_key',
  'settings',
];

addTexts(
  {},
  {
    plan: ['Plan', 'الباقة'],
    invoice: ['Invoice', 'الفاتورة'],
    card: ['Card', 'البطاقة'],
    card_batch: ['Card batch', 'دفعة البطاقات'],
    bulk_job: ['Bulk job', 'مهمة جماعية'],
    bandwidth_rule: ['Bandwidth rule', 'قاعدة عرض النطاق'],
    manager: ['Manager', 'المدير'],
    api_key: ['API key', 'مفتاح API'],
    settings: ['Settings', 'الإعدادات'],
    webhook: ['Webhook', 'خطاف ويب'],
  },
);

/** A before or after value: a row snapshot stays JSON (data), a yes/no reads in the language. */
const shown = (v) => {
  if (v === null || v === undefined || v === '') return '—';
  if (typeof v === 'boolean') return v ? t('yes') : t('no');
  return typeof v === 'object' ? html`<code>${JSON.stringify(v)}</code>` : t(String(v));
};

/** A changed field by its label; a stored column without one is named as the database names it. */
function fieldName(key) {
  const snake = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return knownField(snake) ? fieldLabel(snake) : html`<code>${key}</code>`;
}

/**
 * Whether a detail is a list (a quick-pay's `payments`, one per invoice it paid; a consolidation's
 * `voided_invoice_ids`) rather than a `[before, after]` pair: both are arrays, and a list of two
 * would read as one record changing into the other. Lists are of ids, or of records that carry
 * ids (`invoice_id`, `payment_id`); a changed field's values do not.
 */
const isList = (key, v) =>
  Array.isArray(v) &&
  v.length > 0 &&
  (/(^|_)ids$/.test(key) || v.every((e) => e && typeof e === 'object' && !Array.isArray(e) && hasId(e)));
const hasId = (record) => Object.keys(record).some((k) => k === 'id' || k.endsWith('_id'));

/** One element of a list: an id, or a record's fields by label ("Invoice 12, Payment 40"). */
const itemText = (item) =>
  item && typeof item === 'object'
    ? Object.entries(item)
        .map(([k, v]) => `${fieldLabel(k)} ${shown(v)}`)
        .join(', ')
    : shown(item);

/** `{ field: [before, after] }` as rows; any other detail (a request's field, a count) has no before. */
function Changes({ changes }) {
  const entries = Object.entries(changes ?? {});
  if (entries.length === 0) return '—';
  return html`<table class="diff">
    <thead><tr><th scope="col">${t('Field')}</th><th scope="col">${t('Before')}</th><th scope="col">${t('After')}</th></tr></thead>
    <tbody>${entries.map(([k, v]) => {
      if (isList(k, v))
        return html`<tr key=${k}><th scope="row">${fieldName(k)}</th><td></td>
          <td><ol class="records">${v.map((item, i) => html`<li key=${i}>${itemText(item)}</li>`)}</ol></td></tr>`;
      const pair = Array.isArray(v) && v.length === 2;
      return html`<tr key=${k}><th scope="row">${fieldName(k)}</th>
        <td>${pair ? html`<del>${shown(v[0])}</del>` : ''}</td>
        <td>${pair ? html`<ins>${shown(v[1])}</ins>` : shown(v)}</td></tr>`;
    })}</tbody>
  </table>`;
}

function actor(r) {
  if (r.actor_type === 'system') return t('system');
  if (r.actor_type === 'api_key')
    return r.api_key_name && r.manager_name
      ? t('key {key} of {name}', { key: r.api_key_name, name: r.manager_name })
      : t('key #{key} of manager #{id}', { key: r.api_key_id, id: r.manager_id });
  if (r.actor_type === 'anonymous') return t('anonymous');
  return r.manager_name ?? t('manager #{id}', { id: r.manager_id });
}

/** The target by its name (a subscriber's username, an invoice's number) when it still exists. */
function target(r) {
  const type = fieldLabel(r.target_type);
  if (r.target_id === null) return type;
  return html`${type} <bdi>${r.target_name ?? `#${r.target_id}`}</bdi>`;
}

const filterFields = (q) => [
  { name: 'actor', label: 'Manager ID', type: 'int', value: q.actor },
  {
    name: 'target_type',
    label: 'Target type',
    type: 'select',
    value: q.target_type,
    options: TARGET_TYPES.map((v) => ({ value: v, label: fieldLabel(v) })),
  },
  { name: 'target_id', label: 'Target ID', type: 'int', value: q.target_id },
  { name: 'from', label: 'From', type: 'datetime' },
  { name: 'to', label: 'To', type: 'datetime' },
];

export function AuditPage() {
  const [query, setQuery] = useState({ page: 1 });
  const state = useLoad(() => api('GET', '/api/audit', { query: { ...query, limit: 50 } }), [JSON.stringify(query)]);
  return html`<section>
    <div class="page-head"><h1>${t('Audit trail')}</h1></div>
    <${Form} className="form filters" fields=${filterFields(query)} submitLabel="Filter"
      onSubmit=${(values) => setQuery({ ...values, page: 1 })} />
    <${Loaded} state=${state}>${(res) => html`<${Table} rows=${res.data} empty="No audit row matches." columns=${[
      ['at', 'When', (r) => dateTime(r.at)],
      ['actor_type', 'Who', actor],
      ['ip', 'Address'],
      ['action', 'Action', (r) => html`<code>${r.action}</code>`],
      ['target_type', 'Target', target],
      ['changes', 'Changes', (r) => html`<${Changes} changes=${r.changes} />`],
    ]} />
    <${Pager} pagination=${res.pagination} onPage=${(page) => setQuery({ ...query, page })} />`}</${Loaded}>
  </section>`;
}
