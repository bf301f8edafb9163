/**
 * Live sessions (GET /api/sessions), refreshed every few seconds, with disconnect of one session or
 * of a selection through the subscriber routes that exist (POST /api/subscribers/:id/disconnect and
 * the bulk action `disconnect`); and a subscriber's closed sessions for its page.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { addTexts, fieldLabel, t } from './i18n.js';
import { accessServers, options, plans, resellers } from './lookups.js';
import { go, href } from './router.js';
import { session } from './session.js';
import { ActionDialog, bytes, dateTime, Form, html, Loaded, notify, Pager, Table, useLoad } from './ui.js';

addTexts({
  ar: {
    'Live sessions': 'الجلسات الحية',
    'Closed sessions': 'الجلسات المنتهية',
    'No open session.': 'لا توجد جلسة مفتوحة.',
    'No closed session yet.': 'لا توجد جلسات منتهية بعد.',
    'Refreshes every {seconds} seconds.': 'تتحدّث كل {seconds} ثوانٍ.',
    'Pause refresh': 'إيقاف التحديث',
    'Resume refresh': 'استئناف التحديث',
    'Disconnect selected ({n})': 'فصل المحدد ({n})',
    Disconnect: 'فصل',
    'The selected subscribers are disconnected now.': 'سيتم فصل المشتركين المحددين الآن.',
    'The subscriber is disconnected now.': 'سيتم فصل المشترك الآن.',
    'Disconnected {n}, failed {failed}': 'تم فصل {n}، فشل {failed}',
    Select: 'تحديد',
    'Access server': 'خادم الوصول',
    Address: 'العنوان',
    MAC: 'MAC',
    Started: 'البدء',
    Stopped: 'الانتهاء',
    Duration: 'المدة',
    'Bytes in': 'البايتات الواردة',
    'Bytes out': 'البايتات الصادرة',
    'Last interim': 'آخر تحديث',
    Stale: 'متوقفة',
    Cause: 'السبب',
    'Sort by': 'الترتيب حسب',
    'Only stale': 'المتوقفة فقط',
    'Only live': 'الحية فقط',
    Search: 'بحث',
    'username, address or MAC': 'اسم المستخدم أو العنوان أو MAC',
  },
});

// Sort keys as words.
addTexts(
  { ar: { Descending: 'تنازليًا', Ascending: 'تصاعديًا' } },
  {
    started_at: ['Started', 'البدء'],
    duration: ['Duration', 'المدة'],
    nas: ['Access server', 'خادم الوصول'],
    framed_ip: ['Address', 'العنوان'],
    mac: ['MAC', 'MAC'],
    bytes_in: ['Bytes in', 'البايتات الواردة'],
    bytes_out: ['Bytes out', 'البايتات الصادرة'],
    interim_age: ['Last interim', 'آخر تحديث مرحلي'],
  },
);

const REFRESH_SECONDS = 10;
const SORTS = [
  'started_at',
  'duration',
  'username',
  'subscriber_id',
  'nas',
  'framed_ip',
  'mac',
  'bytes_in',
  'bytes_out',
  'interim_age',
];
const KEYS = ['nas_id', 'service_id', 'reseller_id', 'search', 'stale', 'sort', 'order'];

/** Seconds as `1d 2h 3m` (the larger units only when they are not zero). */
export function duration(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return [d && `${d}d`, (d || h) && `${h}h`, `${m}m`, !d && !h && `${seconds % 60}s`].filter(Boolean).join(' ');
}

const COLUMNS = [
  [
    'username',
    'Subscriber',
    (s) => (s.subscriber_id ? html`<a href=${href(`/subscribers/${s.subscriber_id}`)}>${s.username}</a>` : s.username),
  ],
  ['nas_name', 'Access server', (s) => s.nas_name ?? s.nas_ip],
  ['framed_ip', 'Address'],
  ['mac', 'MAC'],
  ['started_at', 'Started', (s) => dateTime(s.started_at)],
  ['duration', 'Duration', (s) => duration(s.duration)],
  ['bytes_in', 'Bytes in', (s) => bytes(s.bytes_in)],
  ['bytes_out', 'Bytes out', (s) => bytes(s.bytes_out)],
  ['interim_age', 'Last interim', (s) => duration(s.interim_age)],
];

function disconnectOne(s) {
  return html`<${ActionDialog} label="Disconnect" confirm="The subscriber is disconnected now."
    run=${() => api('POST', `/api/subscribers/${s.subscriber_id}/disconnect`, { body: {} })}
    onDone=${(res) => notify(res.data?.message ?? t('Disconnect'))} />`;
}

export function SessionsPage({ query }) {
  const filters = Object.fromEntries(KEYS.filter((k) => query[k]).map((k) => [k, query[k]]));
  const page = Number(query.page ?? 1);
  const [live, setLive] = useState(true);
  const [chosen, setChosen] = useState(new Set());
  const lookups = useLoad(
    async () => ({ nas: await accessServers(), plans: await plans(), resellers: await resellers() }),
    [],
  );
  const list = useLoad(
    () => api('GET', '/api/sessions', { query: { ...filters, page } }),
    [JSON.stringify(filters), page],
  );
  useEffect(() => {
    if (!live) return undefined;
    const timer = setInterval(list.reload, REFRESH_SECONDS * 1000);
    return () => clearInterval(timer);
  }, [live, list.reload]);
  const canDisconnect = session.can('subscribers.disconnect');
  const toggle = (id) =>
    setChosen((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const fields = (lk) => [
    { name: 'search', label: 'Search', type: 'search', value: query.search, hint: t('username, address or MAC') },
    ...(lk.nas.length
      ? [
          {
            name: 'nas_id',
            label: 'Access server',
            type: 'select',
            numeric: true,
            options: options(lk.nas, (n) => n.name),
            value: query.nas_id,
          },
        ]
      : []),
    {
      name: 'service_id',
      label: 'Plan',
      type: 'select',
      numeric: true,
      options: options(lk.plans),
      value: query.service_id,
    },
    ...(lk.resellers.length
      ? [
          {
            name: 'reseller_id',
            label: 'Reseller',
            type: 'select',
            numeric: true,
            options: options(lk.resellers),
            value: query.reseller_id,
          },
        ]
      : []),
    {
      name: 'stale',
      label: 'Stale',
      type: 'select',
      options: [
        { value: 'true', label: t('Only stale') },
        { value: 'false', label: t('Only live') },
      ],
      value: query.stale,
    },
    {
      name: 'sort',
      label: 'Sort by',
      type: 'select',
      required: true,
      options: SORTS.map((s) => ({ value: s, label: fieldLabel(s) })),
      value: query.sort ?? 'started_at',
    },
    {
      name: 'order',
      label: 'Order',
      type: 'select',
      required: true,
      options: [
        { value: 'desc', label: 'Descending' },
        { value: 'asc', label: 'Ascending' },
      ],
      value: query.order ?? 'desc',
    },
  ];
  const selectColumn = [
    'select',
    'Select',
    (s) =>
      s.subscriber_id &&
      html`<input type="checkbox" aria-label=${t('Select') + ' ' + s.username} checked=${chosen.has(s.subscriber_id)} onChange=${() => toggle(s.subscriber_id)} />`,
  ];
  const stale = ['stale', 'Stale', (s) => (s.stale ? html`<span class="badge blocked">${t('Stale')}</span>` : '')];
  const action = ['actions', '', (s) => s.subscriber_id && disconnectOne(s)];
  return html`<section>
    <h1>${t('Live sessions')}</h1>
    <${Loaded} state=${lookups}>${(
      lk,
    ) => html`<details class="filters" open=${Object.keys(filters).length > 0}><summary>${t('Filters')}</summary>
      <${Form} className="form inline" fields=${fields(lk)} submitLabel="Apply" onSubmit=${async (v) => go('/sessions', v)} />
    </details>`}</${Loaded}>
    <div class="toolbar">
      <span class="muted">${live ? t('Refreshes every {seconds} seconds.', { seconds: REFRESH_SECONDS }) : ''}</span>
      <button type="button" class="secondary" onClick=${() => setLive(!live)}>${live ? t('Pause refresh') : t('Resume refresh')}</button>
      ${
        canDisconnect &&
        html`<${ActionDialog} label=${t('Disconnect selected ({n})', { n: chosen.size })} confirm="The selected subscribers are disconnected now."
        run=${() => api('POST', '/api/subscribers/bulk-action', { body: { ids: [...chosen], action: 'disconnect', payload: {} } })}
        onDone=${(res) => {
          notify(
            t('Disconnected {n}, failed {failed}', {
              n: res.data?.succeeded?.length ?? 0,
              failed: res.data?.failed?.length ?? 0,
            }),
          );
          setChosen(new Set());
          list.reload();
        }} />`
      }
    </div>
    <${Loaded} state=${list}>${(res) => html`<${Table} rows=${res.data} empty="No open session." columns=${[
      ...(canDisconnect ? [selectColumn] : []),
      ...COLUMNS,
      stale,
      ...(canDisconnect ? [action] : []),
    ]} />
      <${Pager} pagination=${res.pagination} onPage=${(p) => go('/sessions', { ...filters, page: p })} />`}</${Loaded}>
  </section>`;
}

/** On a subscriber's page: its closed sessions, newest first, a page at a time. */
export function ClosedSessions({ id }) {
  const [page, setPage] = useState(1);
  const state = useLoad(
    () => api('GET', `/api/subscribers/${id}/sessions`, { query: { page, limit: 20 } }),
    [id, page],
  );
  return html`<section aria-labelledby="h-closed-sessions"><h2 id="h-closed-sessions">${t('Closed sessions')}</h2>
    <${Loaded} state=${state}>${(res) => html`<${Table} rows=${res.data} empty="No closed session yet." columns=${[
      ...COLUMNS.slice(1),
      ['stopped_at', 'Stopped', (s) => dateTime(s.stopped_at)],
      ['terminate_cause', 'Cause'],
    ]} />
      <${Pager} pagination=${res.pagination} onPage=${setPage} />`}</${Loaded}>
  </section>`;
}
