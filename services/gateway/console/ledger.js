/** The ledger (GET /api/transactions): filters, the filter's totals per currency, rows with names, CSV download. */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { addTexts, fieldLabel, t } from './i18n.js';
import { options, resellers } from './lookups.js';
import { go, href } from './router.js';
import { dateTime, ErrorMessage, Form, html, Loaded, money, Pager, Table, useLoad } from './ui.js';

addTexts({
  ar: {
    Ledger: 'دفتر الحركات',
    'The filter matches no movement.': 'لا توجد حركات تطابق التصفية.',
    'Totals of the filter': 'إجماليات التصفية',
    Incoming: 'الوارد',
    Outgoing: 'الصادر',
    Net: 'الصافي',
    Movements: 'الحركات',
    'Download CSV': 'تنزيل CSV',
    'Preparing the CSV…': 'جارٍ تجهيز ملف CSV…',
    'Save the CSV': 'حفظ ملف CSV',
    'Manager id': 'معرّف المدير',
    'Subscriber id': 'معرّف المشترك',
    From: 'من',
    To: 'إلى',
    Type: 'النوع',
    Method: 'الطريقة',
    When: 'الوقت',
    Amount: 'المبلغ',
    Manager: 'المدير',
    Notes: 'ملاحظات',
    Order: 'الترتيب',
    'newest first': 'الأحدث أولاً',
    'oldest first': 'الأقدم أولاً',
    Apply: 'تطبيق',
    Filters: 'التصفية',
  },
});

// Ledger types and methods as words (option labels and the type column).
addTexts(
  {},
  {
    invoice_payment: ['Invoice payment', 'دفعة فاتورة'],
    wallet_credit: ['Wallet credit', 'إيداع في المحفظة'],
    wallet_debit: ['Wallet debit', 'خصم من المحفظة'],
    plan_change_credit: ['Plan change credit', 'رصيد مُعاد عند تغيير الباقة'],
    reseller_credit: ['Reseller credit', 'إيداع في رصيد الموزّع'],
    reseller_debit: ['Reseller debit', 'خصم من رصيد الموزّع'],
    renewal: ['Renewal', 'تجديد'],
    rename_fee: ['Rename fee', 'رسوم تغيير الاسم'],
    refill_fee: ['Quota refill fee', 'رسوم إعادة تعبئة الحصة'],
    cash: ['Cash', 'نقدًا'],
    card: ['Card', 'بطاقة'],
    bank: ['Bank', 'تحويل مصرفي'],
    wallet: ['Wallet', 'المحفظة'],
    prepaid_card: ['Prepaid card', 'بطاقة مسبقة الدفع'],
    other: ['Other', 'أخرى'],
  },
);

const TYPES = [
  'invoice_payment',
  'wallet_credit',
  'wallet_debit',
  'plan_change_credit',
  'reseller_credit',
  'reseller_debit',
  'renewal',
  'rename_fee',
  'refill_fee',
];
const METHODS = ['cash', 'card', 'bank', 'wallet', 'prepaid_card', 'other'];
const KEYS = ['type', 'method', 'subscriber_id', 'reseller_id', 'manager_id', 'from', 'to', 'order'];
const opt = (values) => values.map((v) => ({ value: v, label: fieldLabel(v) }));

/** Fetches the filter's CSV with the token and offers it as a file. */
function CsvDownload({ filters }) {
  const [file, setFile] = useState(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  useEffect(() => () => file && URL.revokeObjectURL(file), [file]);
  async function download() {
    setBusy(true);
    setError(null);
    try {
      const blob = await api('GET', '/api/transactions', { query: { ...filters, format: 'csv' }, as: 'blob' });
      setFile(URL.createObjectURL(new Blob([blob], { type: 'text/csv' })));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return html`<div class="toolbar">
    <button type="button" onClick=${download} disabled=${busy}>${busy ? t('Preparing the CSV…') : t('Download CSV')}</button>
    ${file && html`<a href=${file} download="transactions.csv">${t('Save the CSV')}</a>`}
    <${ErrorMessage} error=${error} />
  </div>`;
}

function Totals({ totals }) {
  return html`<${Table} caption="Totals of the filter" rows=${totals} empty="The filter matches no movement." columns=${[
    ['currency', 'Currency'],
    ['count', 'Movements'],
    ['incoming', 'Incoming', (x) => money(x.incoming, x.currency)],
    ['outgoing', 'Outgoing', (x) => money(x.outgoing, x.currency)],
    ['net', 'Net', (x) => money(x.net, x.currency)],
  ]} />`;
}

function Rows({ rows }) {
  return html`<${Table} rows=${rows} empty="The filter matches no movement." columns=${[
    ['created_at', 'When', (r) => dateTime(r.created_at)],
    ['type', 'Type', (r) => fieldLabel(r.type)],
    ['amount', 'Amount', (r) => money(r.amount, r.currency)],
    ['method', 'Method', (r) => (r.method ? fieldLabel(r.method) : '—')],
    [
      'subscriber_username',
      'Subscriber',
      (r) =>
        r.subscriber_id
          ? html`<a href=${href(`/subscribers/${r.subscriber_id}`)}>${r.subscriber_username ?? `#${r.subscriber_id}`}</a>`
          : '—',
    ],
    ['reseller_name', 'Reseller', (r) => r.reseller_name ?? '—'],
    ['manager_username', 'Manager', (r) => r.manager_username ?? '—'],
    [
      'invoice_id',
      'Invoice',
      (r) =>
        r.invoice_id
          ? html`<a href=${href(`/invoices/${r.invoice_id}`)}><bdi>${r.invoice_number ?? `#${r.invoice_id}`}</bdi></a>`
          : '—',
    ],
    ['notes', 'Notes'],
  ]} />`;
}

export function LedgerPage({ query }) {
  const filters = Object.fromEntries(KEYS.filter((k) => query[k]).map((k) => [k, query[k]]));
  const page = Number(query.page ?? 1);
  const rs = useLoad(() => resellers(), []);
  const list = useLoad(
    () => api('GET', '/api/transactions', { query: { ...filters, page } }),
    [JSON.stringify(filters), page],
  );
  const fields = (resellerRows) => [
    { name: 'type', label: 'Type', type: 'select', options: opt(TYPES), value: query.type },
    { name: 'method', label: 'Method', type: 'select', options: opt(METHODS), value: query.method },
    { name: 'subscriber_id', label: 'Subscriber id', type: 'int', min: 1, value: query.subscriber_id },
    ...(resellerRows.length
      ? [
          {
            name: 'reseller_id',
            label: 'Reseller',
            type: 'select',
            options: options(resellerRows),
            value: query.reseller_id,
          },
        ]
      : []),
    { name: 'manager_id', label: 'Manager id', type: 'int', min: 1, value: query.manager_id },
    { name: 'from', label: 'From', type: 'date', value: query.from },
    { name: 'to', label: 'To', type: 'date', value: query.to },
    {
      name: 'order',
      label: 'Order',
      type: 'select',
      required: true,
      options: [
        { value: 'desc', label: t('newest first') },
        { value: 'asc', label: t('oldest first') },
      ],
      value: query.order ?? 'desc',
    },
  ];
  return html`<section>
    <h1>${t('Ledger')}</h1>
    <${Loaded} state=${rs}>${(
      rows,
    ) => html`<details class="filters" open=${Object.keys(filters).length > 0}><summary>${t('Filters')}</summary>
      <${Form} className="form inline" fields=${fields(rows)} submitLabel="Apply" onSubmit=${async (v) => go('/ledger', v)} />
    </details>`}</${Loaded}>
    <${CsvDownload} filters=${filters} />
    <${Loaded} state=${list}>${(res) => html`<${Totals} totals=${res.totals} />
      <${Rows} rows=${res.data} />
      <${Pager} pagination=${res.pagination} onPage=${(p) => go('/ledger', { ...filters, page: p })} />`}</${Loaded}>
  </section>`;
}
