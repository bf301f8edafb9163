/** One subscriber: record, online state, quotas, invoices, bandwidth and every action the token may run. */
import { api } from './api.js';
import { RedeemCard } from './cards.js';
import { Bandwidth, Chart, toSeries } from './charts.js';
import { invoiceActionsFor, InvoiceTable } from './invoices.js';
import { options, plans, resellers } from './lookups.js';
import { go } from './router.js';
import { session } from './session.js';
import { ClosedSessions } from './sessions.js';
import { subscriberFields } from './subscribers.js';
import { useState } from 'preact/hooks';
import { addTexts, blockedReasonText, fieldLabel, t } from './i18n.js';
import {
  ActionDialog,
  bytes,
  dateTime,
  ErrorMessage,
  Form,
  html,
  KeyValues,
  Loaded,
  ltrText,
  money,
  notify,
  Pager,
  quota,
  Table,
  useLoad,
} from './ui.js';

addTexts(
  {
    ar: {
      '{action} ({reason}): {outcome}, {at}': '{action} ({reason}): {outcome}، {at}',
      // coa_outcomes' actions and outcomes (services/network-access/coa/outcome.ts).
      disconnect: 'فصل',
      rate_limit: 'تغيير السرعة',
      disconnected: 'فُصل',
      applied: 'طُبّق',
      offline: 'غير متصل',
      rejected: 'رفضه الموجّه',
      kicked: 'طُرد عبر واجهة الموجّه',
      failed: 'فشل',
      // Why a disconnect was queued (shared/access/outbox.ts).
      renew: 'تجديد',
      disable: 'تعطيل',
      delete: 'حذف',
      service_change: 'تغيير الباقة',
      static_ip: 'عنوان IP ثابت',
      ipv6_prefix: 'بادئة IPv6',
      rename: 'إعادة تسمية',
      bandwidth_rules: 'قواعد السرعة',
      blocked: 'حظر',
      restored: 'استعادة',
    },
  },
  { last_router_action: ['Last router action', 'آخر إجراء على الموجّه'] },
);

const post = (id, action, body = {}) => api('POST', `/api/subscribers/${id}/${action}`, { body });

/**
 * Edit-form fields that another action governs: PUT takes a change to one only with that action's
 * permission too (docs/subscribers.md), so the form offers it only then. The username has its own
 * rename action.
 */
const FIELD_PERMISSION = {
  reseller_id: 'subscribers.transfer',
  expiry_date: 'subscribers.add_days',
  service_id: 'subscribers.change_service',
  price: 'subscribers.set_price',
  override_price: 'subscribers.set_price',
};

const editableField = (f) =>
  f.name !== 'username' && (!(f.name in FIELD_PERMISSION) || session.can(FIELD_PERMISSION[f.name]));

/** A plan-change quote with its plans by name (the API gives `*_name` beside `*_id`). */
function planNames(res) {
  const { current_service_name, service_name, subscriber_id: _id, ...data } = res.data;
  return {
    ...res,
    data: {
      ...data,
      current_service_id: current_service_name ?? data.current_service_id,
      service_id: service_name ?? data.service_id,
    },
  };
}

/** The last thing a router was asked about this subscriber, and its answer (coa_outcomes). */
function routerActionText(a) {
  if (!a) return null;
  return t('{action} ({reason}): {outcome}, {at}', {
    action: t(a.action),
    reason: a.reason ? t(a.reason) : '—',
    outcome: t(a.outcome),
    at: dateTime(a.at),
  });
}

/** What ping, torch or a price calculation answered: its figures, its lists, the router's own output. */
function Result({ res }) {
  const data = res.data ?? {};
  const scalars = Object.keys(data).filter(
    (k) => !Array.isArray(data[k]) && k !== 'raw' && (data[k] === null || typeof data[k] !== 'object'),
  );
  const lists = Object.entries(data).filter(([, v]) => Array.isArray(v));
  return html`<div class="result">
    <${KeyValues} data=${data} keys=${scalars} />
    ${lists.map(([k, rows]) => html`<h3>${fieldLabel(k)}</h3><${Table} rows=${rows} empty="None." />`)}
    ${typeof data.raw === 'string' && html`<pre>${data.raw}</pre>`}
  </div>`;
}

/**
 * The renew confirmation: what the invoice will ask, tax included (the API's `renewal`, from the
 * default tax the invoice takes), and what the reseller balance is debited (the price alone).
 */
function renewalText(s, name) {
  const r = s.renewal;
  const total = money(r.total, s.currency);
  const price = money(r.price, s.currency);
  if (Number(r.tax_rate) === 0)
    return t(
      'Renew {name} on {plan} for {total} (no tax)? The reseller balance is debited {price} and an invoice of {total} is created.',
      { name, plan: s.service.name, total, price },
    );
  return t(
    'Renew {name} on {plan} for {total} with tax ({price} and {tax} tax at {rate})? The reseller balance is debited {price} and an invoice of {total} is created.',
    {
      name,
      plan: s.service.name,
      total,
      price,
      tax: money(r.tax_amount, s.currency),
      rate: ltrText(`${r.tax_rate}%`),
    },
  );
}

/** The single actions, each shown only when the token holds its permission. */
function actionsFor(s, lk, reload) {
  const done = (text) => () => {
    notify(t(text));
    reload();
  };
  const name = ltrText(s.username);
  const all = [
    [
      'subscribers.renew',
      html`<${ActionDialog} label="Renew" confirm=${renewalText(s, name)}
      run=${() => post(s.id, 'renew')} onDone=${done('Renewed')} />`,
    ],
    [
      'subscribers.add_days',
      html`<${ActionDialog} label="Add days" fields=${[
        { name: 'days', label: 'Days', type: 'int', min: 1, max: 3650, required: true },
        { name: 'reason', label: 'Reason', required: true },
      ]}
      confirm="The expiry moves without a payment; the reason is kept in the audit log."
      run=${(v) => post(s.id, 'add-days', v)} onDone=${done('Days added')} />`,
    ],
    [
      'subscribers.change_service',
      html`<${ActionDialog} label="Change plan" fields=${[
        {
          name: 'service_id',
          label: 'New plan',
          type: 'select',
          numeric: true,
          required: true,
          options: options(lk.plans.filter((p) => p.id !== s.service_id)),
        },
        { name: 'charge_difference', label: 'Charge the prorated difference (or credit the wallet)', type: 'checkbox' },
      ]}
      confirm="The subscriber is disconnected and reconnects on the new plan's speed and pool."
      run=${(v) => post(s.id, 'change-service', v)} onDone=${done('Plan changed')} />`,
    ],
    [
      'subscribers.change_service',
      html`<${ActionDialog} label="Price of a plan change" fields=${[
        {
          name: 'service_id',
          label: 'New plan',
          type: 'select',
          numeric: true,
          required: true,
          options: options(lk.plans.filter((p) => p.id !== s.service_id)),
        },
      ]}
      submitLabel="Calculate" run=${(v) => api('GET', `/api/subscribers/${s.id}/calculate-change-service-price`, { query: v })}
      showResult=${(res) => html`<${Result} res=${planNames(res)} />`} />`,
    ],
    [
      'subscribers.inactivate',
      s.status === 'inactive'
        ? html`<${ActionDialog} label="Activate" confirm=${t('Let {name} connect again?', { name })} run=${() => post(s.id, 'activate')} onDone=${done('Activated')} />`
        : html`<${ActionDialog} label="Deactivate" danger confirm=${t('Cut {name} off? The session is disconnected and new ones are refused.', { name })}
          run=${() => post(s.id, 'deactivate')} onDone=${done('Deactivated')} />`,
    ],
    [
      'subscribers.disconnect',
      html`<${ActionDialog} label="Disconnect" confirm=${t("Disconnect {name}'s live session?", { name })}
      run=${() => post(s.id, 'disconnect')} onDone=${(res) => {
        notify(res.data?.message ?? t('Disconnect: {outcome}', { outcome: t(res.data?.outcome ?? '') }));
        reload();
      }} />`,
    ],
    [
      'subscribers.ping',
      html`<${ActionDialog} label="Ping" fields=${[
        { name: 'count', label: 'Count', type: 'int', min: 1, max: 20, value: 4 },
        { name: 'size', label: 'Size (bytes)', type: 'int', min: 28, max: 1500, value: 64 },
      ]}
      run=${(v) => post(s.id, 'ping', v)} showResult=${(res) => html`<${Result} res=${res} />`} />`,
    ],
    [
      'subscribers.torch',
      html`<${ActionDialog} label="Torch" title="Live traffic (torch)" fields=${[
        { name: 'duration', label: 'Seconds', type: 'int', min: 1, max: 10, value: 3 },
      ]}
      run=${(v) => api('GET', `/api/subscribers/${s.id}/torch`, { query: v })} showResult=${(res) => html`<${Result} res=${res} />`} />`,
    ],
    [
      'subscribers.reset_fup',
      html`<${ActionDialog} label="Reset FUP" confirm="Daily counters and the FUP tier go back to 0."
      run=${() => post(s.id, 'reset-fup')} onDone=${done('FUP reset')} />`,
    ],
    [
      'subscribers.reset_mac',
      html`<${ActionDialog} label="Reset MAC" confirm="The next connection binds a new device."
      run=${() => post(s.id, 'reset-mac')} onDone=${done('MAC cleared')} />`,
    ],
    [
      'subscribers.refill_quota',
      html`<${ActionDialog} label="Refill quota" confirm="Daily and monthly counters go back to 0; the refill fee is charged to the reseller."
      run=${() => post(s.id, 'refill')} onDone=${done('Quota refilled')} />`,
    ],
    [
      'subscribers.refill_quota',
      html`<${ActionDialog} label="Top up data" fields=${[{ name: 'gb', label: 'Extra GB', type: 'number', min: 0.001, max: 10000, required: true }]}
      run=${(v) => post(s.id, 'topup-data', v)} onDone=${done('Data added')} />`,
    ],
    [
      'subscribers.refill_quota',
      html`<${ActionDialog} label="Add to wallet" fields=${[{ name: 'amount', label: t('Amount ({currency})', { currency: s.currency }), type: 'number', min: 0.01, required: true }]}
      confirm="The amount is credited to the subscriber's prepaid wallet."
      run=${(v) => post(s.id, 'add-balance', v)} onDone=${done('Wallet credited')} />`,
    ],
    ['subscribers.refill_quota', html`<${RedeemCard} subscriber=${s} onDone=${done('Card redeemed')} />`],
    [
      'subscribers.rename',
      html`<${ActionDialog} label="Rename" fields=${[{ name: 'new_username', label: 'New username', required: true, value: s.username }]}
      confirm="The username changes everywhere; the rename fee, when set, is charged to the reseller."
      run=${(v) => post(s.id, 'rename', v)} onDone=${done('Renamed')} />`,
    ],
    [
      'subscribers.delete',
      html`<${ActionDialog} label="Delete" danger confirm=${t('Delete {name}? Access stops; the username becomes free again.', { name })}
      run=${() => api('DELETE', `/api/subscribers/${s.id}`)} onDone=${() => {
        notify(t('Subscriber deleted'));
        go('/subscribers');
      }} />`,
    ],
  ];
  const shown = all.filter(([permission]) => session.can(permission)).map(([, el]) => el);
  if (session.isAdmin) {
    shown.push(html`<${ActionDialog} label="Delete permanently" danger
      confirm=${t('Erase {name} for good? Only the ledger, invoices and accounting history stay.', { name })}
      run=${() => api('DELETE', `/api/subscribers/${s.id}/permanent`)} onDone=${() => {
        notify(t('Subscriber erased'));
        go('/subscribers');
      }} />`);
  }
  return shown;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

addTexts({
  ar: {
    'Renew {name} on {plan} for {total} (no tax)? The reseller balance is debited {price} and an invoice of {total} is created.':
      'تجديد {name} على {plan} بمبلغ {total} (بلا ضريبة)؟ يُخصم {price} من رصيد الموزّع وتُنشأ فاتورة بمبلغ {total}.',
    'Renew {name} on {plan} for {total} with tax ({price} and {tax} tax at {rate})? The reseller balance is debited {price} and an invoice of {total} is created.':
      'تجديد {name} على {plan} بمبلغ {total} شاملًا الضريبة ({price} وضريبة {tax} بنسبة {rate})؟ يُخصم {price} من رصيد الموزّع وتُنشأ فاتورة بمبلغ {total}.',
    'The expiry moves without a payment; the reason is kept in the audit log.':
      'يتغيّر تاريخ الانتهاء دون دفع، ويُحفظ السبب في سجل التدقيق.',
    "The subscriber is disconnected and reconnects on the new plan's speed and pool.":
      'يُفصل المشترك ثم يعود للاتصال بسرعة الباقة الجديدة ومجمّعها.',
    'Let {name} connect again?': 'السماح لـ {name} بالاتصال مجددًا؟',
    'Cut {name} off? The session is disconnected and new ones are refused.':
      'قطع {name}؟ تُفصل الجلسة ويُرفض أي اتصال جديد.',
    "Disconnect {name}'s live session?": 'فصل الجلسة الحالية لـ {name}؟',
    'Disconnect: {outcome}': 'الفصل: {outcome}',
    'Daily counters and the FUP tier go back to 0.': 'تعود العدادات اليومية ومستوى FUP إلى 0.',
    'The next connection binds a new device.': 'يرتبط الاتصال التالي بجهاز جديد.',
    'Daily and monthly counters go back to 0; the refill fee is charged to the reseller.':
      'تعود العدادات اليومية والشهرية إلى 0، وتُحمّل رسوم التعبئة على الموزّع.',
    "The amount is credited to the subscriber's prepaid wallet.": 'يُضاف المبلغ إلى المحفظة المسبقة الدفع للمشترك.',
    'The username changes everywhere; the rename fee, when set, is charged to the reseller.':
      'يتغيّر اسم المستخدم في كل مكان، وتُحمّل رسوم إعادة التسمية، إن وُجدت، على الموزّع.',
    'Delete {name}? Access stops; the username becomes free again.':
      'حذف {name}؟ يتوقف الوصول ويصبح اسم المستخدم متاحًا من جديد.',
    'Subscriber deleted': 'حُذف المشترك',
    'Erase {name} for good? Only the ledger, invoices and accounting history stay.':
      'محو {name} نهائيًا؟ لا يبقى إلا الدفتر والفواتير وسجل المحاسبة.',
    'Subscriber erased': 'مُحي المشترك',
    always: 'دائمًا',
    'every day': 'كل يوم',
    'Delete rule {id}': 'حذف القاعدة {id}',
    "None: the plan's rate limit applies.": 'لا شيء: يُطبّق حدّ سرعة الباقة.',
    "The subscriber is back on the next rule or the plan's rate.": 'يعود المشترك إلى القاعدة التالية أو سرعة الباقة.',
    'Rule added': 'أُضيفت القاعدة',
    'Bandwidth history is not available on this server.': 'سجل عرض النطاق غير متاح على هذا الخادم.',
    Sun: 'الأحد',
    Mon: 'الاثنين',
    Tue: 'الثلاثاء',
    Wed: 'الأربعاء',
    Thu: 'الخميس',
    Fri: 'الجمعة',
    Sat: 'السبت',
    both: 'كلاهما',
    download: 'تنزيل',
    upload: 'رفع',
    'From (HH:MM, empty: always)': 'من (س:د، فارغ: دائمًا)',
    'To (HH:MM)': 'إلى (س:د)',
    online: 'متصل',
    offline: 'غير متصل',
    active: 'نشط',
    inactive: 'غير نشط',
    expired: 'منتهي',
    sent: 'أُرسلت',
    failed: 'فشل',
  },
});

/** The subscriber's own rate limits over the plan's (permanent, or in a time window on some days). */
function BandwidthRules({ id }) {
  const state = useLoad(() => api('GET', `/api/subscribers/${id}/bandwidth-rules`), [id]);
  const editable = session.can('subscribers.edit');
  const when = (r) => (r.start_time ? ltrText(`${r.start_time}–${r.end_time}`) : t('always'));
  const days = (r) => (r.days?.length ? r.days.map((d) => t(DAYS[d])).join(' ') : t('every day'));
  return html`<section class="card" aria-labelledby="h-rules"><h2 id="h-rules">${t('Bandwidth rules')}</h2>
    <${Loaded} state=${state}>${(res) =>
      html`<${Table} rows=${res.data} empty="None: the plan's rate limit applies." columns=${[
        ['direction', 'Direction'],
        ['rate_kbps', 'kbit/s'],
        ['window', 'When', when],
        ['days', 'Days', days],
        ['priority', 'Priority'],
        ...(editable
          ? [
              [
                'actions',
                'Actions',
                (
                  r,
                ) => html`<${ActionDialog} label=${t('Delete rule {id}', { id: r.id })} danger confirm="The subscriber is back on the next rule or the plan's rate."
        run=${() => api('DELETE', `/api/subscribers/${id}/bandwidth-rules/${r.id}`)} onDone=${state.reload} />`,
              ],
            ]
          : []),
      ]} />`}</${Loaded}>
    ${
      editable &&
      html`<${ActionDialog} label="Add a rule" title="Add a bandwidth rule" fields=${[
        {
          name: 'direction',
          label: 'Direction',
          type: 'select',
          required: true,
          value: 'both',
          options: ['both', 'download', 'upload'].map((d) => ({ value: d, label: d })),
        },
        { name: 'rate_kbps', label: 'Rate (kbit/s)', type: 'int', min: 1, required: true },
        { name: 'start_time', label: 'From (HH:MM, empty: always)', type: 'time' },
        { name: 'end_time', label: 'To (HH:MM)', type: 'time' },
        {
          name: 'days',
          label: 'Days (none: every day)',
          type: 'checkboxes',
          options: DAYS.map((d, i) => ({ value: String(i), label: d })),
        },
        { name: 'priority', label: 'Priority (1 wins)', type: 'int', min: 1, max: 8, value: 4 },
      ]}
      run=${({ days: chosen, ...rule }) => api('POST', `/api/subscribers/${id}/bandwidth-rules`, { body: { ...rule, ...(chosen.length ? { days: chosen.map(Number) } : {}) } })}
      onDone=${() => {
        notify(t('Rule added'));
        state.reload();
      }} />`
    }
  </section>`;
}

const NOTIFICATION_KINDS = { expiry_reminder: 'Expiry reminder' };

/**
 * The messages the lifecycle sent or tried to send this subscriber (expiry reminders), newest
 * first. A server without the route (404) says so; any other failure reads as the API's error.
 */
function Notifications({ id }) {
  const [page, setPage] = useState(1);
  const state = useLoad(
    () => api('GET', '/api/notifications', { query: { subscriber_id: id, page, limit: 20 } }),
    [id, page],
  );
  let body;
  if (state.error?.status === 404) {
    body = html`<p class="muted">${t('Notifications are not available on this server.')}</p>
      <${ErrorMessage} error=${state.error} />`;
  } else {
    body = html`<${Loaded} state=${state}>${(res) =>
      html`<${Table}
          rows=${res.data}
          caption="Notifications"
          empty="No notification for this subscriber yet."
          columns=${[
            ['created_at', 'Date', (n) => dateTime(n.created_at)],
            ['kind', 'Kind', (n) => t(NOTIFICATION_KINDS[n.kind] ?? n.kind)],
            ['rule_days', 'Days before expiry'],
            ['expiry_date', fieldLabel('expiry_date')],
            ['status', 'Status', (n) => html`<span class=${`badge ${n.status}`}>${t(n.status)}</span>`],
            ['sent_at', 'Sent at', (n) => (n.sent_at ? dateTime(n.sent_at) : '—')],
            ['error', 'Error', (n) => n.error ?? '—'],
          ]}
        />
        <${Pager} pagination=${res.data.length ? res.pagination : null} onPage=${setPage} />`}</${Loaded}>`;
  }
  return html`<section class="card" aria-labelledby="h-notifications">
    <h2 id="h-notifications">${t('Notifications')}</h2>
    ${body}
  </section>`;
}

function BandwidthSection({ id }) {
  const state = useLoad(() => api('GET', `/api/subscribers/${id}/bandwidth`), [id]);
  if (state.error?.status === 404)
    return html`<p class="muted">${t('Bandwidth history is not available on this server.')}</p>`;
  return html`<${Loaded} state=${state}>${(res) => html`<${Bandwidth} data=${res.data} />`}</${Loaded}>`;
}

export function SubscriberPage({ id }) {
  const state = useLoad(() => api('GET', `/api/subscribers/${id}`), [id]);
  const lookups = useLoad(async () => ({ plans: await plans(), resellers: await resellers() }), []);
  const invoices = useLoad(() => api('GET', '/api/invoices', { query: { subscriber_id: id, limit: 100 } }), [id]);
  const reload = () => {
    state.reload();
    invoices.reload();
  };
  return html`<${Loaded} state=${state}>${(res) => {
    const s = res.data;
    const usage = toSeries(res.daily_breakdown);
    return html`<section>
      <div class="page-head">
        <h1>${s.username}</h1>
        <span class=${`badge ${s.status}`}>${t(s.status)}</span>
        ${s.is_online ? html`<span class="badge online">${t('online')}</span>` : html`<span class="badge">${t('offline')}</span>`}
        ${s.blocked_reason && html`<span class="badge blocked">${t('Blocked: {reason}', { reason: blockedReasonText(s.blocked_reason) })}</span>`}
        ${s.auto_renew && html`<span class="badge auto-renew">${t('Auto-renew')}</span>`}
      </div>
      <${Loaded} state=${lookups}>${(lk) => html`<div class="toolbar" role="group" aria-label=${t('Actions')}>${actionsFor(s, lk, reload)}</div>`}</${Loaded}>
      <div class="grid">
        <section class="card" aria-labelledby="h-record"><h2 id="h-record">${t('Record')}</h2>
          <${KeyValues} data=${{ ...s, plan: t('{plan} ({price} / {days} days)', { plan: s.service.name, price: money(s.service.price, s.service.currency), days: s.service.duration_days }), reseller: s.reseller.name, password: res.password, blocked_reason: blockedReasonText(s.blocked_reason) }}
            keys=${['full_name', 'phone', 'plan', 'reseller', 'expiry_date', 'last_renewed_on', 'auto_renew', 'blocked_reason', 'password', 'price', 'override_price', 'region', 'building', 'address', 'nationality', 'country', 'notes', 'created_at']} />
        </section>
        <section class="card" aria-labelledby="h-online"><h2 id="h-online">${t('Connection')}</h2>
          <${KeyValues} data=${{ ...s, last_nas_id: s.last_nas_name ?? s.last_nas_id, last_router_action: routerActionText(s.last_router_action) }}
            keys=${['is_online', 'ip_address', 'last_nas_id', 'last_router_action', 'static_ip', 'ipv6_prefix', 'delegated_ipv6_prefix', 'mac_address']} />
          <h3>${t('Quotas')}</h3>
          <${KeyValues} data=${{
            daily_used: quota(s.counters.daily_quota_used, s.counters.daily_quota_gb),
            monthly_used: quota(s.counters.monthly_quota_used, s.counters.monthly_quota_gb),
            extra_data: bytes(s.counters.extra_quota_bytes),
            fup_level: s.counters.fup_level,
            wallet: money(s.counters.wallet_balance, s.currency),
          }} />
        </section>
      </div>
      <section aria-labelledby="h-invoices"><h2 id="h-invoices">${t('Invoices')}</h2>
        ${session.isAdminOrReseller && html`<div class="toolbar">${invoiceActionsFor(s, reload)}</div>`}
        <${Loaded} state=${invoices}>${(inv) => html`<${InvoiceTable} rows=${inv.data} />`}</${Loaded}>
      </section>
      <section aria-labelledby="h-usage"><h2 id="h-usage">${t('Usage and bandwidth')}</h2>
        ${usage && !session.can('subscribers.view_graph') && html`<${Chart} title="Daily download, last 30 days" data=${usage} />`}
        ${session.can('subscribers.view_graph') ? html`<${BandwidthSection} id=${s.id} />` : html`<p class="muted">Bandwidth charts need the subscribers.view_graph permission.</p>`}
      </section>
      ${session.can('subscribers.view') && html`<${ClosedSessions} id=${s.id} />`}
      <${BandwidthRules} id=${s.id} />
      <${Notifications} id=${s.id} />
      ${
        session.can('subscribers.edit') &&
        html`<${Loaded} state=${lookups}>${(lk) => html`<details class="card">
        <summary>${t('Edit the record')}</summary>
        <${Form} fields=${subscriberFields(lk, s).filter(editableField)} submitLabel="Save changes"
          onSubmit=${async (values) => {
            // Only what was changed: an unchanged plan or address must not count as a change.
            const changed = Object.fromEntries(Object.entries(values).filter(([k, v]) => v !== s[k]));
            // An IPv6 prefix emptied is cleared ('' on PUT); other empty fields are left as they are.
            for (const k of ['ipv6_prefix', 'delegated_ipv6_prefix'])
              if (s[k] && values[k] === undefined) changed[k] = '';
            if (Object.keys(changed).length === 0) return notify('Nothing changed');
            await api('PUT', `/api/subscribers/${s.id}`, { body: changed });
            notify('Saved');
            reload();
          }} />
      </details>`}</${Loaded}>`
      }
    </section>`;
  }}</${Loaded}>`;
}
