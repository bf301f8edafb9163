/** The subscribers list: filters, search, sort and paging as the API offers them, and bulk actions. */
import { useState } from 'preact/hooks';
import { allPages, api } from './api.js';
import { BulkPanel } from './bulk.js';
import { addTexts, blockedReasonText, t } from './i18n.js';
import { accessServers, options, plans, resellers } from './lookups.js';
import { go, href } from './router.js';
import { session } from './session.js';
import { bytes, date, ErrorMessage, Form, html, Loaded, ltrText, notify, Pager, useLoad } from './ui.js';

// IPv6 (docs/ipv6.md): the WAN prefix or address, and the prefix delegated to the subscriber's LAN.
addTexts(
  {
    ar: {
      'IPv6 prefix (WAN)': 'بادئة IPv6 (الواجهة الخارجية)',
      'Delegated IPv6 prefix (LAN)': 'بادئة IPv6 المفوَّضة (الشبكة المحلية)',
    },
  },
  {
    ipv6_prefix: ['IPv6 prefix (WAN)', 'بادئة IPv6 (الواجهة الخارجية)'],
    delegated_ipv6_prefix: ['Delegated IPv6 prefix (LAN)', 'بادئة IPv6 المفوَّضة (الشبكة المحلية)'],
  },
);

addTexts({
  ar: {
    'Empty: the default reseller of direct subscribers ({name})': 'فارغ: الموزّع الافتراضي للمشتركين المباشرين ({name})',
    'Direct subscribers': 'المشتركون المباشرون',
  },
});

const STATUSES = ['active', 'inactive', 'expired', 'expiring', 'online', 'offline'];
const SORTS = ['created_at', 'username', 'expiry_date', 'daily_quota_used'];

addTexts({
  ar: {
    expiring: 'قارب على الانتهاء',
    'created at': 'تاريخ الإنشاء',
    username: 'اسم المستخدم',
    'expiry date': 'تاريخ الانتهاء',
    'daily quota used': 'المستخدم اليوم',
    descending: 'تنازلي',
    ascending: 'تصاعدي',
    'username, name, phone or MAC': 'اسم المستخدم أو الاسم أو الهاتف أو MAC',
    'Select every subscriber on this page': 'تحديد كل المشتركين في هذه الصفحة',
    'Select {name}': 'تحديد {name}',
    'PPPoE login, e.g. name@realm': 'اسم دخول PPPoE، مثل name@realm',
    quota: 'الحصة',
    any: 'أي',
    none: 'لا شيء',
  },
});
const BLOCKED_REASONS = ['expired', 'quota', 'overdue'];
const FILTER_KEYS = [
  'search',
  'status',
  'service_id',
  'reseller_id',
  'nas_id',
  'fup_level',
  'auto_renew',
  'blocked',
  'blocked_reason',
  'sort',
  'order',
  'limit',
];

function filtersOf(query) {
  const out = {};
  for (const k of FILTER_KEYS) if (query[k]) out[k] = query[k];
  return out;
}

const yesNo = () => [
  { value: 'true', label: t('yes') },
  { value: 'false', label: t('no') },
];

/** The form's "Blocked" choice as the API's query: blocked=true|false or blocked_reason=<reason>. */
function blockedQuery(values) {
  const { blocked_reason: choice, ...rest } = values;
  if (choice === 'any') return { ...rest, blocked: 'true' };
  if (choice === 'none') return { ...rest, blocked: 'false' };
  return choice ? { ...rest, blocked_reason: choice } : rest;
}

function filterFields(query, lookups) {
  const opt = (values) => values.map((v) => ({ value: v, label: v.replace(/_/g, ' ') }));
  const fields = [
    { name: 'search', label: 'Search', type: 'search', value: query.search, hint: 'username, name, phone or MAC' },
    { name: 'status', label: 'Status', type: 'select', options: opt(STATUSES), value: query.status },
    { name: 'service_id', label: 'Plan', type: 'select', options: options(lookups.plans), value: query.service_id },
  ];
  if (session.isAdmin)
    fields.push({
      name: 'reseller_id',
      label: 'Reseller',
      type: 'select',
      options: options(lookups.resellers),
      value: query.reseller_id,
    });
  fields.push(
    lookups.nas.length
      ? { name: 'nas_id', label: 'Access server', type: 'select', options: options(lookups.nas), value: query.nas_id }
      : { name: 'nas_id', label: 'Access server id', type: 'int', min: 1, value: query.nas_id },
    {
      name: 'fup_level',
      label: 'FUP level',
      type: 'select',
      options: opt(['0', '1', '2', '3']),
      value: query.fup_level,
    },
    { name: 'auto_renew', label: 'Auto-renew', type: 'select', options: yesNo(), value: query.auto_renew },
    {
      // One choice for two API filters: "any reason" is blocked=true, "not blocked" blocked=false,
      // a reason blocked_reason=<it> (blockedQuery).
      name: 'blocked_reason',
      label: 'Blocked',
      type: 'select',
      options: [
        { value: 'any', label: t('any reason') },
        ...BLOCKED_REASONS.map((r) => ({ value: r, label: blockedReasonText(r) })),
        { value: 'none', label: t('not blocked') },
      ],
      value: query.blocked_reason ?? { true: 'any', false: 'none' }[query.blocked],
    },
    {
      name: 'sort',
      label: 'Sort by',
      type: 'select',
      options: opt(SORTS),
      value: query.sort ?? 'created_at',
      required: true,
    },
    {
      name: 'order',
      label: 'Order',
      type: 'select',
      options: [
        { value: 'desc', label: 'descending' },
        { value: 'asc', label: 'ascending' },
      ],
      value: query.order ?? 'desc',
      required: true,
    },
    {
      name: 'limit',
      label: 'Rows per page',
      type: 'select',
      options: opt(['25', '50', '100', '200', '500']),
      value: query.limit ?? '50',
      required: true,
    },
  );
  return fields;
}

/**
 * What the bulk panel keeps of a selected row: its username (a failed id is named in the outcome)
 * and what renewing it will invoice, tax included (the API's `renewal.total`), in its currency.
 */
const pickOf = (row) => ({
  username: row.username,
  renewal: row.renewal ? { total: row.renewal.total, currency: row.currency } : null,
});

export function SubscribersPage({ query }) {
  const filters = filtersOf(query);
  const page = Number(query.page ?? 1);
  const key = JSON.stringify({ filters, page });
  const lookups = useLoad(async () => {
    const [p, r, n] = await Promise.all([plans(), resellers(), accessServers()]);
    return { plans: p, resellers: r, nas: n };
  }, []);
  const list = useLoad(() => api('GET', '/api/subscribers', { query: { ...filters, page } }), [key]);
  // Selected ids, each with its username and what renewing it will invoice (pickOf).
  const [selected, setSelected] = useState(() => new Map());
  const [collecting, setCollecting] = useState(null);
  const [collectError, setCollectError] = useState(null);
  const planName = (id) => lookups.data?.plans.find((p) => p.id === id)?.name ?? `#${id}`;

  function toggle(row, on) {
    const next = new Map(selected);
    if (on) next.set(row.id, pickOf(row));
    else next.delete(row.id);
    setSelected(next);
  }
  async function selectAllMatching() {
    setCollecting('Collecting the matching subscribers…');
    setCollectError(null);
    try {
      const rows = await allPages('/api/subscribers', filters, {
        onProgress: (n, total) => setCollecting(`Collected ${n} of ${total}…`),
      });
      setSelected(new Map(rows.map((r) => [r.id, pickOf(r)])));
      notify(`${rows.length} subscribers selected`);
    } catch (err) {
      setCollectError(err);
    } finally {
      setCollecting(null);
    }
  }

  return html`<section>
    <div class="page-head">
      <h1>${t('Subscribers')}</h1>
      ${session.can('subscribers.create') && html`<a class="button" href="#/subscribers/new">${t('New subscriber')}</a>`}
    </div>
    <${Loaded} state=${lookups}>${(lk) => html`<section class="filters" aria-label=${t('Search, filters and sort')}>
      <${Form} className="form inline" fields=${filterFields(query, lk)} submitLabel="Apply"
        onSubmit=${async (values) => go('/subscribers', blockedQuery(values))} />
    </section>`}</${Loaded}>
    <${Loaded} state=${list}>${(res) => {
      const rows = res.data;
      const allOnPage = rows.length > 0 && rows.every((r) => selected.has(r.id));
      return html`
        ${
          session.isAdminOrReseller &&
          html`<div class="selection">
          <span>${t('{n} selected', { n: selected.size })}</span>
          <button type="button" class="secondary" onClick=${selectAllMatching} disabled=${!!collecting}>${t('Select all {n} matching', { n: res.pagination.total })}</button>
          ${selected.size > 0 && html`<button type="button" class="secondary" onClick=${() => setSelected(new Map())}>${t('Clear selection')}</button>`}
          ${collecting && html`<span class="muted">${collecting}</span>`}
        </div>`
        }
        <${ErrorMessage} error=${collectError} onRetry=${selectAllMatching} />
        <${BulkPanel} picked=${selected} onFinished=${() => {
          setSelected(new Map());
          list.reload();
        }} />
        <div class="table-wrap"><table>
          <caption class="visually-hidden">${t('Subscribers')}</caption>
          <thead><tr>
            ${
              session.isAdminOrReseller &&
              html`<th scope="col" class="pick"><input type="checkbox" aria-label=${t('Select every subscriber on this page')} checked=${allOnPage}
              onChange=${(e) => {
                const next = new Map(selected);
                rows.forEach((r) => (e.currentTarget.checked ? next.set(r.id, pickOf(r)) : next.delete(r.id)));
                setSelected(next);
              }} /></th>`
            }
            ${['Username', 'Name', 'Phone', 'Plan', 'Status', 'Online', 'Expiry', 'Auto-renew', 'Used today'].map((title) => html`<th scope="col">${t(title)}</th>`)}
          </tr></thead>
          <tbody>${rows.map(
            (s) => html`<tr key=${s.id}>
            ${session.isAdminOrReseller && html`<td class="pick"><input type="checkbox" aria-label=${t('Select {name}', { name: s.username })} checked=${selected.has(s.id)} onChange=${(e) => toggle(s, e.currentTarget.checked)} /></td>`}
            <td><a href=${href(`/subscribers/${s.id}`)}>${s.username}</a></td>
            <td>${s.full_name ?? ''}</td><td>${s.phone ? ltrText(s.phone) : ''}</td><td>${planName(s.service_id)}</td>
            <td><span class=${`badge ${s.status}`}>${t(s.status)}</span>${s.blocked_reason && html` <span class="badge blocked">${t('Blocked: {reason}', { reason: blockedReasonText(s.blocked_reason) })}</span>`}</td>
            <td>${s.is_online ? html`<span class="badge online">${t('online')}</span> ${s.ip_address ?? ''}` : t('offline')}</td>
            <td class="nowrap">${date(s.expiry_date)}</td><td>${s.auto_renew ? t('yes') : t('no')}</td><td>${bytes(s.daily_quota_used ?? 0)}</td>
          </tr>`,
          )}</tbody>
        </table></div>
        ${rows.length === 0 && html`<p class="muted">${t('No subscriber matches.')}</p>`}
        <${Pager} pagination=${res.pagination} onPage=${(p) => go('/subscribers', { ...filters, page: p })} />`;
    }}</${Loaded}>
  </section>`;
}

export function subscriberFields(lookups, current = {}) {
  const fields = [
    {
      name: 'username',
      label: 'Username',
      value: current.username,
      required: !current.id,
      hint: 'PPPoE login, e.g. name@realm',
    },
    {
      name: 'password',
      label: 'Password',
      type: 'password',
      required: !current.id,
      hint: current.id ? 'leave empty to keep it' : undefined,
    },
    {
      name: 'service_id',
      label: 'Plan',
      type: 'select',
      numeric: true,
      options: options(lookups.plans),
      value: current.service_id,
      required: !current.id,
    },
  ];
  if (session.isAdmin && lookups.resellers.length) {
    fields.push({
      name: 'reseller_id',
      label: 'Reseller',
      type: 'select',
      numeric: true,
      options: options(lookups.resellers),
      value: current.reseller_id,
      hint: current.id
        ? undefined
        : t('Empty: the default reseller of direct subscribers ({name})', {
            name: lookups.defaultReseller ?? t('Direct subscribers'),
          }),
    });
  }
  fields.push(
    { name: 'full_name', label: 'Full name', value: current.full_name },
    { name: 'phone', label: 'Phone', type: 'tel', value: current.phone },
    { name: 'mac_address', label: 'MAC address', value: current.mac_address },
    { name: 'static_ip', label: 'Static IP', value: current.static_ip },
    { name: 'ipv6_prefix', label: 'IPv6 prefix (WAN)', value: current.ipv6_prefix },
    { name: 'delegated_ipv6_prefix', label: 'Delegated IPv6 prefix (LAN)', value: current.delegated_ipv6_prefix },
    { name: 'expiry_date', label: 'Expiry date', type: 'date', value: current.expiry_date },
    { name: 'price', label: 'Own price', type: 'number', min: 0, value: current.price },
    {
      name: 'override_price',
      label: 'Use the own price instead of the plan price',
      type: 'checkbox',
      value: current.override_price,
    },
    {
      name: 'auto_renew',
      label: 'Renew automatically from the wallet at expiry',
      type: 'checkbox',
      value: current.auto_renew,
    },
    { name: 'region', label: 'Region', value: current.region },
    { name: 'building', label: 'Building', value: current.building },
    { name: 'address', label: 'Address', value: current.address },
    { name: 'nationality', label: 'Nationality', value: current.nationality },
    { name: 'country', label: 'Country', value: current.country },
    { name: 'notes', label: 'Notes', type: 'textarea', value: current.notes },
  );
  return fields;
}

/**
 * What the new-subscriber form offers: a reseller's own token only the plans its service limits
 * let it sell; an admin every plan, and the name of the default reseller an empty choice means.
 */
async function newSubscriberLookups() {
  const [all, rs] = await Promise.all([plans(), resellers()]);
  if (session.isAdmin) {
    const { data: settings } = await api('GET', '/api/settings');
    const chosen = rs.find((r) => r.id === settings.default_reseller_id);
    return { plans: all, resellers: rs, defaultReseller: chosen?.name };
  }
  if (session.role !== 'reseller' || session.claims.resellerId === null) return { plans: all, resellers: rs };
  const { data: limits } = await api('GET', `/api/resellers/${session.claims.resellerId}/service-limits`);
  const sellable = new Set(limits.map((l) => l.service_id));
  return { plans: all.filter((p) => sellable.has(p.id)), resellers: rs };
}

export function NewSubscriberPage() {
  const lookups = useLoad(newSubscriberLookups, []);
  return html`<section>
    <h1>${t('New subscriber')}</h1>
    <${Loaded} state=${lookups}>${(lk) => html`<${Form} fields=${subscriberFields(lk)} submitLabel="Create subscriber"
      onSubmit=${async (values) => {
        const res = await api('POST', '/api/subscribers', { body: values });
        notify(`Subscriber ${res.data.username} created`);
        go(`/subscribers/${res.data.id}`);
      }} />`}</${Loaded}>
  </section>`;
}
