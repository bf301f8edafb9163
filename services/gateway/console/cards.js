/**
 * Prepaid cards (docs/cards.md): batches (make one and save its PINs, the only time the API gives
 * them; list; print in parts; the CSV of their state; suspend and release), a batch's cards with
 * their state (suspend or release one), the redemption tries with their lockouts (lift one), and a
 * subscriber's "redeem a card" (subscriber.js shows it).
 */
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { options, plans, resellers } from './lookups.js';
import { addTexts, t } from './i18n.js';
import { PAPERS } from './invoices.js';
import { go, href } from './router.js';
import { session } from './session.js';
import {
  ActionDialog,
  dateTime,
  ErrorMessage,
  Form,
  html,
  KeyValues,
  Loaded,
  money,
  notify,
  Pager,
  Table,
  useLoad,
} from './ui.js';

addTexts(
  {
    ar: {
      Batch: 'الدفعة',
      'Prepaid cards': 'البطاقات المسبقة الدفع',
      'Card batch': 'دفعة بطاقات',
      'Card batch #{id}': 'دفعة البطاقات رقم {id}',
      'New card batch': 'دفعة بطاقات جديدة',
      'Number of cards': 'عدد البطاقات',
      'Money value (leave empty for a plan card)': 'القيمة المالية (اتركها فارغة لبطاقة باقة)',
      'or a plan (one renewal)': 'أو باقة (تجديد واحد)',
      'Serial prefix (capitals and digits)': 'بادئة الرقم التسلسلي (أحرف كبيرة وأرقام)',
      'Expires on': 'تنتهي في',
      'Give either a money value or a plan.': 'أدخل قيمة مالية أو باقة، لا كليهما.',
      'Batch #{id}: {count} cards made.': 'الدفعة رقم {id}: تم إنشاء {count} بطاقة.',
      'The PINs are shown this once: save them now, or print the batch.':
        'تظهر أرقام PIN هذه المرة فقط: احفظها الآن أو اطبع الدفعة.',
      'Save the PINs (CSV)': 'حفظ أرقام PIN (CSV)',
      Batches: 'الدفعات',
      'No card batch yet.': 'لا توجد دفعة بطاقات بعد.',
      Worth: 'القيمة',
      Cards: 'البطاقات',
      Printed: 'المطبوعة',
      'Not printed': 'غير المطبوعة',
      all: 'الكل',
      none: 'لا شيء',
      'Cards {from}–{to}': 'البطاقات {from}–{to}',
      'Suspend the batch': 'إيقاف الدفعة',
      'Release the batch': 'إطلاق الدفعة',
      'None of its cards redeems until it is released.': 'لا تُستخدم أي بطاقة منها حتى تُطلق.',
      'Its unused cards redeem again.': 'تعود بطاقاتها غير المستخدمة قابلة للاستخدام.',
      'Download the CSV': 'تنزيل ملف CSV',
      'Print cards': 'طباعة البطاقات',
      'Print a part': 'طباعة جزء',
      'From card': 'من البطاقة',
      'To card': 'إلى البطاقة',
      'Cards a page': 'بطاقات في الصفحة',
      Paper: 'الورق',
      Language: 'اللغة',
      'Each card is printed once: printing erases its PIN. At most 500 cards a part.':
        'تُطبع كل بطاقة مرة واحدة: الطباعة تمحو رقم PIN. 500 بطاقة كحد أقصى في كل جزء.',
      'Cards {from}–{to} printed.': 'طُبعت البطاقات {from}–{to}.',
      'Save the sheet again': 'حفظ الورقة مرة أخرى',
      'The cards of the batch': 'بطاقات الدفعة',
      Serial: 'الرقم التسلسلي',
      'Used on': 'تاريخ الاستخدام',
      'Used by': 'استخدمها',
      'Suspend {serial}': 'إيقاف {serial}',
      'Release {serial}': 'إطلاق {serial}',
      'The card no longer redeems.': 'لم تعد البطاقة قابلة للاستخدام.',
      'The card redeems again.': 'تعود البطاقة قابلة للاستخدام.',
      'Redemption tries and lockouts': 'محاولات الاستخدام والحظر',
      'Subscriber ID': 'معرّف المشترك',
      Address: 'العنوان',
      'No redemption try.': 'لا توجد محاولة استخدام.',
      Outcome: 'النتيجة',
      redeemed: 'تم الاستخدام',
      refused: 'مرفوضة',
      counted: 'محسوبة',
      'lifted {at}': 'رُفع الحظر {at}',
      'Lift the lockout': 'رفع الحظر',
      'Failed tries of this subscriber (or address) stop counting.':
        'تتوقف محاولات هذا المشترك (أو العنوان) الفاشلة عن الاحتساب.',
      'Lockout lifted: {n} tries cleared': 'رُفع الحظر: مُسحت {n} محاولة',
      'Redeem a card': 'استخدام بطاقة',
      'Card PIN': 'رقم PIN للبطاقة',
      'Too many wrong PINs: a manager lifts the lockout on the Prepaid cards page.':
        'أرقام PIN خاطئة كثيرة: يرفع المدير الحظر من صفحة البطاقات المسبقة الدفع.',
      'Card {serial} redeemed.': 'تم استخدام البطاقة {serial}.',
      'Wallet now {amount}.': 'المحفظة الآن {amount}.',
      Filter: 'تصفية',
      Status: 'الحالة',
      active: 'نشطة',
      suspended: 'موقوفة',
      used: 'مستخدمة',
      money: 'مال',
      plan: 'باقة',
      'the operator': 'المشغّل',
      Lockout: 'الحظر',
      When: 'الوقت',
      Created: 'تاريخ الإنشاء',
      Actions: 'الإجراءات',
    },
  },
  {
    card_id: ['Card', 'البطاقة'],
    batch_id: ['Batch', 'الدفعة'],
    serial: ['Serial', 'الرقم التسلسلي'],
    worth: ['Worth', 'القيمة'],
    count: ['Cards', 'البطاقات'],
    active: ['Active', 'نشطة'],
    suspended: ['Suspended', 'موقوفة'],
    used: ['Used', 'مستخدمة'],
    printed: ['Printed', 'المطبوعة'],
    unprinted: ['Unprinted', 'غير المطبوعة'],
    expires_at: ['Expires on', 'تنتهي في'],
  },
);

/** A downloaded file: the browser saves `blob` as `name`. */
function save(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

const worth = (b, planList) =>
  b.kind === 'money'
    ? money(b.value, b.currency)
    : (planList.find((p) => p.id === b.service_id)?.name ?? `#${b.service_id}`);
const resellerName = (rows, id) =>
  id === null ? t('the operator') : (rows.find((r) => r.id === id)?.name ?? `#${id}`);
const ranges = (list) => (list.length ? list.map((r) => `${r.from}–${r.to}`).join(', ') : t('none'));

const batchFields = (lk) => [
  { name: 'count', label: 'Number of cards', type: 'int', min: 1, max: 100000, required: true, value: 10 },
  { name: 'value', label: 'Money value (leave empty for a plan card)', type: 'number', min: 0.01 },
  { name: 'service_id', label: 'or a plan (one renewal)', type: 'select', numeric: true, options: options(lk.plans) },
  {
    name: 'reseller_id',
    label: 'Reseller',
    type: 'select',
    numeric: true,
    options: options(lk.resellers),
    required: !session.isAdmin,
    value: session.claims.resellerId,
  },
  { name: 'prefix', label: 'Serial prefix (capitals and digits)' },
  { name: 'expires_at', label: 'Expires on', type: 'date' },
];

/** What a new batch answered: its PINs, once, as the CSV to save. */
function NewBatch({ res }) {
  const b = res.data;
  return html`<div class="result">
    <p>${t('Batch #{id}: {count} cards made.', { id: b.id, count: b.count })}</p>
    <p class="warning">${t('The PINs are shown this once: save them now, or print the batch.')}</p>
    <button type="button" onClick=${() => save(new Blob([res.csv], { type: 'text/csv' }), `cards-batch-${b.id}-pins.csv`)}>
      ${t('Save the PINs (CSV)')}</button>
  </div>`;
}

function Attempts() {
  const [query, setQuery] = useState({});
  const state = useLoad(() => api('GET', '/api/cards/attempts', { query }), [JSON.stringify(query)]);
  const lift = (a) => (a.subscriber_id !== null ? { subscriber_id: a.subscriber_id } : { address: a.address });
  return html`<section class="card" aria-labelledby="h-attempts">
    <h2 id="h-attempts">${t('Redemption tries and lockouts')}</h2>
    <${Form} className="form inline" submitLabel="Filter" onSubmit=${async (v) => setQuery(v)} fields=${[
      { name: 'subscriber_id', label: 'Subscriber ID', type: 'int', min: 1, value: query.subscriber_id },
      { name: 'address', label: 'Address', value: query.address },
    ]} />
    <${Loaded} state=${state}>${(res) =>
      html`<${Table} rows=${res.data} empty="No redemption try." columns=${[
        ['created_at', 'When', (a) => dateTime(a.created_at)],
        [
          'subscriber_id',
          'Subscriber',
          (a) =>
            a.subscriber_id === null
              ? '—'
              : html`<a href=${href(`/subscribers/${a.subscriber_id}`)}>#${a.subscriber_id}</a>`,
        ],
        ['address', 'Address', (a) => html`<bdi>${a.address ?? '—'}</bdi>`],
        ['ok', 'Outcome', (a) => (a.ok ? t('redeemed') : `${t('refused')}: ${a.reason ?? ''}`)],
        [
          'cleared_at',
          'Lockout',
          (a) => (a.ok ? '—' : a.cleared_at ? t('lifted {at}', { at: dateTime(a.cleared_at) }) : t('counted')),
        ],
        [
          'actions',
          'Actions',
          (a) =>
            !a.ok &&
            !a.cleared_at &&
            html`<${ActionDialog} label="Lift the lockout" confirm=${t('Failed tries of this subscriber (or address) stop counting.')}
            run=${() => api('POST', '/api/cards/lockouts/lift', { body: lift(a) })} onDone=${(r) => {
              notify(t('Lockout lifted: {n} tries cleared', { n: r.data.cleared }));
              state.reload();
            }} />`,
        ],
      ]} />`}</${Loaded}>
  </section>`;
}

export function CardsPage({ query }) {
  const page = Number(query.page ?? 1);
  const lookups = useLoad(async () => ({ plans: await plans(), resellers: await resellers() }), []);
  const list = useLoad(() => api('GET', '/api/cards/batches', { query: { page, limit: 50 } }), [page]);
  return html`<section>
    <div class="page-head"><h1>${t('Prepaid cards')}</h1>
      <${Loaded} state=${lookups}>${(lk) => html`<${ActionDialog} label="New card batch" fields=${batchFields(lk)}
        showResult=${(res) => html`<${NewBatch} res=${res} />`}
        run=${(v) => {
          if ((v.value === undefined) === (v.service_id === undefined))
            throw new Error(t('Give either a money value or a plan.'));
          return api('POST', '/api/cards/batches', { body: v });
        }} onDone=${list.reload} />`}</${Loaded}>
    </div>
    <${Loaded} state=${lookups}>${(lk) =>
      html`<${Loaded} state=${list}>${(res) => html`
      <${Table} rows=${res.data} caption="Batches" empty="No card batch yet." columns=${[
        [
          'id',
          'Batch',
          (b) => html`<a href=${href(`/cards/batches/${b.id}`)}>${t('Card batch #{id}', { id: b.id })}</a>`,
        ],
        ['kind', 'Worth', (b) => worth(b, lk.plans)],
        ['count', 'Cards'],
        ['reseller_id', 'Reseller', (b) => resellerName(lk.resellers, b.reseller_id)],
        ['status', 'Status', (b) => html`<span class=${`badge ${b.status}`}>${t(b.status)}</span>`],
        ['unprinted', 'Not printed', (b) => ranges(b.unprinted)],
        ['expires_at', 'Expires on', (b) => b.expires_at ?? '—'],
        ['created_at', 'Created', (b) => dateTime(b.created_at)],
      ]} />
      <${Pager} pagination=${res.pagination} onPage=${(p) => go('/cards', { page: p })} />`}</${Loaded}>`}</${Loaded}>
    ${session.can('subscribers.refill_quota') && html`<${Attempts} />`}
  </section>`;
}

/** Print cards `from`..`to` (default: the first unprinted part of at most 500 cards). */
function PrintPart({ batch, onPrinted }) {
  const [sheet, setSheet] = useState(null);
  const first = batch.unprinted[0];
  if (!first) return null;
  const to = Math.min(first.to, first.from + 499);
  return html`<section class="card" aria-labelledby="h-print">
    <h2 id="h-print">${t('Print a part')}</h2>
    <p class="muted">${t('Each card is printed once: printing erases its PIN. At most 500 cards a part.')}</p>
    <${Form} key=${`${first.from}-${to}`} className="form inline" submitLabel="Print cards" fields=${[
      { name: 'from', label: 'From card', type: 'int', min: 1, max: batch.count, value: first.from, required: true },
      { name: 'to', label: 'To card', type: 'int', min: 1, max: batch.count, value: to, required: true },
      { name: 'per_page', label: 'Cards a page', type: 'int', min: 1, max: 40, value: 10 },
      { name: 'paper', label: 'Paper', type: 'select', options: PAPERS.map((p) => ({ value: p, label: p })) },
    ]} onSubmit=${async (v) => {
      const blob = await api('GET', `/api/cards/batches/${batch.id}/pdf`, { query: v, as: 'blob' });
      const pdf = new Blob([blob], { type: 'application/pdf' });
      const name = `cards-batch-${batch.id}-${v.from}-${v.to}.pdf`;
      save(pdf, name);
      setSheet({ pdf, name, from: v.from, to: v.to });
      notify(t('Cards {from}–{to} printed.', { from: v.from, to: v.to }));
      onPrinted();
    }} />
    ${
      sheet &&
      html`<p>${t('Cards {from}–{to} printed.', sheet)}${' '}<button type="button" class="link" onClick=${() => save(sheet.pdf, sheet.name)}>${t('Save the sheet again')}</button></p>`
    }
  </section>`;
}

function BatchCards({ batch, onChange }) {
  const [filter, setFilter] = useState({ page: 1 });
  const state = useLoad(
    () => api('GET', `/api/cards/batches/${batch.id}/cards`, { query: { ...filter, limit: 50 } }),
    [batch.id, JSON.stringify(filter), batch.cards?.suspended, batch.cards?.used],
  );
  const statusOptions = ['active', 'suspended', 'used'].map((s) => ({ value: s, label: t(s) }));
  return html`<section class="card" aria-labelledby="h-cards">
    <h2 id="h-cards">${t('The cards of the batch')}</h2>
    <${Form} className="form inline" submitLabel="Filter" onSubmit=${async (v) => setFilter({ ...v, page: 1 })} fields=${[
      { name: 'status', label: 'Status', type: 'select', options: statusOptions, value: filter.status },
    ]} />
    <${Loaded} state=${state}>${(res) => html`<${Table} rows=${res.data} columns=${[
      ['serial', 'Serial', (c) => html`<bdi>${c.serial}</bdi>`],
      ['status', 'Status', (c) => html`<span class=${`badge ${c.status}`}>${t(c.status)}</span>`],
      ['used_at', 'Used on', (c) => (c.used_at ? dateTime(c.used_at) : '—')],
      [
        'used_by_subscriber_id',
        'Used by',
        (c) =>
          c.used_by_subscriber_id === null
            ? '—'
            : html`<a href=${href(`/subscribers/${c.used_by_subscriber_id}`)}>${c.used_by_username ?? `#${c.used_by_subscriber_id}`}</a>`,
      ],
      [
        'actions',
        'Actions',
        (c) =>
          c.status === 'active'
            ? html`<${ActionDialog} label=${t('Suspend {serial}', { serial: c.serial })} confirm=${t('The card no longer redeems.')}
                run=${() => api('POST', `/api/cards/${c.id}/suspend`)} onDone=${onChange} />`
            : c.status === 'suspended' &&
              html`<${ActionDialog} label=${t('Release {serial}', { serial: c.serial })} confirm=${t('The card redeems again.')}
                run=${() => api('POST', `/api/cards/${c.id}/release`)} onDone=${onChange} />`,
      ],
    ]} />
    <${Pager} pagination=${res.pagination} onPage=${(page) => setFilter({ ...filter, page })} />`}</${Loaded}>
  </section>`;
}

export function CardBatchPage({ id }) {
  const state = useLoad(
    async () => ({
      batch: (await api('GET', `/api/cards/batches/${id}`)).data,
      plans: await plans(),
      resellers: await resellers(),
    }),
    [id],
  );
  const [error, setError] = useState(null);
  async function csv() {
    setError(null);
    try {
      save(await api('GET', `/api/cards/batches/${id}/csv`, { as: 'blob' }), `cards-batch-${id}.csv`);
    } catch (err) {
      setError(err);
    }
  }
  return html`<section>
    <${Loaded} state=${state}>${({ batch: b, plans: planList, resellers: rs }) => html`
      <div class="page-head"><h1>${t('Card batch #{id}', { id: b.id })}</h1>
        <span class=${`badge ${b.status}`}>${t(b.status)}</span>
      </div>
      <div class="actions" role="group" aria-label=${t('Actions')}>
        <button type="button" class="secondary" onClick=${csv}>${t('Download the CSV')}</button>
        ${
          b.status === 'active'
            ? html`<${ActionDialog} label="Suspend the batch" danger confirm=${t('None of its cards redeems until it is released.')}
              run=${() => api('POST', `/api/cards/batches/${b.id}/suspend`)} onDone=${state.reload} />`
            : html`<${ActionDialog} label="Release the batch" confirm=${t('Its unused cards redeem again.')}
              run=${() => api('POST', `/api/cards/batches/${b.id}/release`)} onDone=${state.reload} />`
        }
      </div>
      <${ErrorMessage} error=${error} onRetry=${csv} />
      <${KeyValues} data=${{
        kind: t(b.kind),
        worth: worth(b, planList),
        reseller: resellerName(rs, b.reseller_id),
        count: b.count,
        active: b.cards.active,
        suspended: b.cards.suspended,
        used: b.cards.used,
        printed: ranges(b.printed),
        unprinted: ranges(b.unprinted),
        expires_at: b.expires_at,
        created_at: dateTime(b.created_at),
      }} />
      <${PrintPart} batch=${b} onPrinted=${state.reload} />
      <${BatchCards} batch=${b} onChange=${state.reload} />`}</${Loaded}>
  </section>`;
}

/** The subscriber page's "Redeem a card": the PIN a subscriber reads out, redeemed for them. */
export function RedeemCard({ subscriber, onDone }) {
  return html`<${ActionDialog} label="Redeem a card"
    fields=${[{ name: 'pin', label: 'Card PIN', required: true }]}
    run=${(v) =>
      api('POST', `/api/subscribers/${subscriber.id}/redeem-card`, {
        body: { pin: v.pin.replace(/[\s-]/g, '') },
      }).catch((err) => {
        // 429 here is the guessing lockout, not the request rate: waiting does not end it.
        throw err.status === 429
          ? new Error(t('Too many wrong PINs: a manager lifts the lockout on the Prepaid cards page.'))
          : err;
      })}
    showResult=${(res) => html`<div class="result">
      <p>${t('Card {serial} redeemed.', { serial: res.data.serial })}
        ${' '}${t('Wallet now {amount}.', { amount: money(res.data.wallet_balance, res.data.currency) })}</p>
    </div>`}
    onDone=${onDone} />`;
}
