/** Invoices: the list and its filters, one invoice with items and payments, payments, PDF and chat. */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { addTexts, t } from './i18n.js';
import { options, resellers } from './lookups.js';
import { go, href } from './router.js';
import { session } from './session.js';
import {
  ActionDialog,
  date,
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
  Table,
  useLoad,
} from './ui.js';

// POST /api/invoices/:id/void (docs/operators-first-day.md).
addTexts({
  ar: {
    'Void invoice': 'إلغاء الفاتورة',
    'The invoice stays on record and stops counting; nobody paid it.':
      'تبقى الفاتورة في السجل ولا تُحتسب؛ لم يدفعها أحد.',
    'Invoice voided': 'أُلغيت الفاتورة',
  },
});

const STATUSES = ['pending', 'partial', 'paid', 'overdue', 'void'];
const METHODS = ['cash', 'card', 'bank', 'wallet', 'prepaid_card', 'other'];
export const PAPERS = [
  'A4',
  'A3',
  'A5',
  'A6',
  'B4',
  'B5',
  'Letter',
  'Legal',
  'Tabloid',
  'Ledger',
  'Executive',
  'Statement',
  'Folio',
  'C5',
  'DL',
  'Receipt80',
  'Receipt58',
];
const opt = (values) => values.map((v) => ({ value: v, label: v.replace(/_/g, ' ') }));

addTexts({
  ar: {
    'Quick pay': 'دفع سريع',
    'Pay open invoices, oldest first': 'دفع الفواتير المفتوحة، الأقدم أولًا',
    'The amount pays the oldest open invoices first; any excess is credited to the wallet.':
      'يسدّد المبلغ الفواتير المفتوحة الأقدم أولًا، ويُضاف أي فائض إلى المحفظة.',
    'Applied to {count} invoice(s); {amount} to the wallet.': 'سُدّد {count} فاتورة، و{amount} إلى المحفظة.',
    Consolidate: 'دمج',
    'Merge pending invoices': 'دمج الفواتير المعلّقة',
    'Notes on the merged invoice': 'ملاحظات على الفاتورة المدمجة',
    'Every pending invoice of this subscriber is merged into one new invoice; the originals are voided.':
      'تُدمج كل الفواتير المعلّقة لهذا المشترك في فاتورة جديدة واحدة، وتُلغى الفواتير الأصلية.',
    'Merged into {number}': 'دُمجت في {number}',
    'New invoice': 'فاتورة جديدة',
    'Ad-hoc invoice': 'فاتورة خاصة',
    Item: 'البند',
    Quantity: 'الكمية',
    'Invoice {number} created': 'أُنشئت الفاتورة {number}',
    Invoice: 'الفاتورة',
    'Invoice actions': 'إجراءات الفاتورة',
    'Record payment': 'تسجيل دفعة',
    'Balance due: {amount}.': 'الرصيد المستحق: {amount}.',
    'Payment recorded': 'سُجّلت الدفعة',
    'Send by chat': 'إرسال عبر المحادثة',
    'Send the PDF by WhatsApp or Telegram': 'إرسال ملف PDF عبر WhatsApp أو Telegram',
    'Send one PDF of all open invoices': 'إرسال ملف PDF واحد لكل الفواتير المفتوحة',
    "Phone (default: the subscriber's)": 'الهاتف (افتراضيًا: هاتف المشترك)',
    Caption: 'التعليق',
    Sent: 'أُرسلت',
    'New public link': 'رابط عام جديد',
    'The current public link and QR code stop working.': 'يتوقف الرابط العام الحالي ورمز QR عن العمل.',
    'Public link replaced': 'استُبدل الرابط العام',
    'Delete invoice': 'حذف الفاتورة',
    'The invoice is deleted for good.': 'تُحذف الفاتورة نهائيًا.',
    'receipt page': 'صفحة الإيصال',
    Paper: 'الورق',
    default: 'الافتراضي',
    'Show PDF': 'عرض PDF',
    'Rendering…': 'جارٍ الإنشاء…',
    'Download the PDF': 'تنزيل ملف PDF',
    'PDF of invoice {number}': 'ملف PDF للفاتورة {number}',
    Filters: 'عوامل التصفية',
    'newest first': 'الأحدث أولًا',
    'oldest first': 'الأقدم أولًا',
    'invoice number or subscriber': 'رقم الفاتورة أو المشترك',
    'Ledger transaction': 'قيد الدفتر',
    pending: 'قيد الانتظار',
    partial: 'مدفوعة جزئيًا',
    paid: 'مدفوعة',
    overdue: 'متأخرة',
    void: 'ملغاة',
    cash: 'نقدًا',
    card: 'بطاقة',
    bank: 'تحويل مصرفي',
    wallet: 'المحفظة',
    'prepaid card': 'بطاقة مسبقة الدفع',
    other: 'أخرى',
  },
});

export function InvoiceTable({ rows }) {
  return html`<${Table} rows=${rows} empty="No invoices." columns=${[
    ['invoice_number', 'Number', (i) => html`<a href=${href(`/invoices/${i.id}`)}>${i.invoice_number}</a>`],
    [
      'subscriber_id',
      'Subscriber',
      (i) =>
        html`<a href=${href(`/subscribers/${i.subscriber_id}`)}>${i.subscriber_username ?? `#${i.subscriber_id}`}</a>`,
    ],
    ['reseller_name', 'Reseller'],
    ['issue_date', 'Issued', (i) => date(i.issue_date)],
    ['due_date', 'Due', (i) => date(i.due_date)],
    ['total', 'Total', (i) => money(i.total, i.currency)],
    ['paid_amount', 'Paid', (i) => money(i.paid_amount, i.currency)],
    ['balance', 'Balance', (i) => money(i.balance, i.currency)],
    ['status', 'Status', (i) => html`<span class=${`badge ${i.status}`}>${t(i.status)}</span>`],
  ]} />`;
}

/** On a subscriber's page: quick-pay oldest first, consolidate, and an ad-hoc invoice. */
export function invoiceActionsFor(s, reload) {
  return [
    session.canInvoice('invoices.pay') &&
      html`<${ActionDialog} label="Quick pay" title="Pay open invoices, oldest first" fields=${[
        {
          name: 'amount',
          label: t('Amount ({currency})', { currency: s.currency }),
          type: 'number',
          min: 0.01,
          required: true,
        },
        {
          name: 'method',
          label: 'Method',
          type: 'select',
          options: opt(METHODS.filter((m) => m !== 'wallet')),
          value: 'cash',
          required: true,
        },
        { name: 'reference', label: 'Reference' },
        { name: 'notes', label: 'Notes', type: 'textarea' },
      ]}
      confirm="The amount pays the oldest open invoices first; any excess is credited to the wallet."
      run=${(v) => api('POST', `/api/invoices/quick-pay/${s.id}`, { body: v })}
      showResult=${(
        res,
      ) => html`<p>${t('Applied to {count} invoice(s); {amount} to the wallet.', { count: res.applied.length, amount: money(res.remaining, s.currency) })}</p>
        <${Table} rows=${res.applied} columns=${[
          ['invoice_id', 'Invoice', (a) => `#${a.invoice_id}`],
          ['amount', 'Amount', (a) => money(a.amount, s.currency)],
        ]} />`}
      onDone=${reload} />`,
    session.canInvoice('invoices.consolidate') &&
      html`<${ActionDialog} label="Consolidate" title="Merge pending invoices"
      fields=${[{ name: 'notes', label: 'Notes on the merged invoice', type: 'textarea' }]}
      confirm="Every pending invoice of this subscriber is merged into one new invoice; the originals are voided."
      run=${(v) => api('POST', `/api/invoices/consolidate/${s.id}`, { body: v })}
      onDone=${(res) => {
        notify(t('Merged into {number}', { number: res.data.consolidated_invoice.invoice_number }));
        reload();
      }} />`,
    session.canInvoice('invoices.create') &&
      html`<${ActionDialog} label="New invoice" title="Ad-hoc invoice" fields=${[
        { name: 'description', label: 'Item', required: true },
        { name: 'qty', label: 'Quantity', type: 'number', min: 0.001, value: 1, required: true },
        {
          name: 'unit_price',
          label: t('Unit price ({currency})', { currency: s.currency }),
          type: 'number',
          min: 0,
          required: true,
        },
        { name: 'due_date', label: 'Due date', type: 'date' },
        { name: 'notes', label: 'Notes', type: 'textarea' },
      ]}
      run=${({ description, qty, unit_price, ...rest }) => api('POST', '/api/invoices', { body: { subscriber_id: s.id, items: [{ description, qty, unit_price }], ...rest } })}
      onDone=${(res) => {
        notify(t('Invoice {number} created', { number: res.data.invoice_number }));
        reload();
      }} />`,
  ].filter(Boolean);
}

export function InvoicesPage({ query }) {
  const keys = ['status', 'subscriber_id', 'reseller_id', 'from', 'to', 'search', 'order'];
  const filters = Object.fromEntries(keys.filter((k) => query[k]).map((k) => [k, query[k]]));
  const page = Number(query.page ?? 1);
  const rs = useLoad(() => resellers(), []);
  const list = useLoad(
    () => api('GET', '/api/invoices', { query: { ...filters, page } }),
    [JSON.stringify(filters), page],
  );
  const fields = (resellerRows) => [
    { name: 'search', label: 'Search', type: 'search', value: query.search, hint: 'invoice number or subscriber' },
    { name: 'status', label: 'Status', type: 'select', options: opt(STATUSES), value: query.status },
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
    { name: 'from', label: 'Issued from', type: 'date', value: query.from },
    { name: 'to', label: 'Issued to', type: 'date', value: query.to },
    {
      name: 'order',
      label: 'Order',
      type: 'select',
      required: true,
      options: [
        { value: 'desc', label: 'newest first' },
        { value: 'asc', label: 'oldest first' },
      ],
      value: query.order ?? 'desc',
    },
  ];
  return html`<section>
    <h1>${t('Invoices')}</h1>
    <${Loaded} state=${rs}>${(
      rows,
    ) => html`<details class="filters" open=${Object.keys(filters).length > 0}><summary>${t('Filters')}</summary>
      <${Form} className="form inline" fields=${fields(rows)} submitLabel="Apply" onSubmit=${async (v) => go('/invoices', v)} />
    </details>`}</${Loaded}>
    <${Loaded} state=${list}>${(res) => html`<${InvoiceTable} rows=${res.data} />
      <${Pager} pagination=${res.pagination} onPage=${(p) => go('/invoices', { ...filters, page: p })} />`}</${Loaded}>
  </section>`;
}

function PdfPreview({ invoice }) {
  const [paper, setPaper] = useState('');
  const [pdf, setPdf] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => () => pdf && URL.revokeObjectURL(pdf.url), [pdf]);
  async function show(e) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const blob = await api('GET', `/api/invoices/${invoice.id}/pdf`, { query: { paper }, as: 'blob' });
      setPdf({ url: URL.createObjectURL(new Blob([blob], { type: 'application/pdf' })), size: blob.size });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return html`<form class="form inline" onSubmit=${show}>
      <div class="field"><label for="paper">${t('Paper')}</label>
        <select id="paper" value=${paper} onChange=${(e) => setPaper(e.currentTarget.value)}>
          <option value="">${t('default')}</option>${PAPERS.map((p) => html`<option value=${p}>${p}</option>`)}
        </select></div>
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? t('Rendering…') : t('Show PDF')}</button></div>
    </form>
    <${ErrorMessage} error=${error} onRetry=${() => show(new Event('submit'))} />
    ${
      pdf &&
      html`<p><a href=${pdf.url} download=${`${invoice.invoice_number}.pdf`}>${t('Download the PDF')}</a> (${ltrText(`${Math.round(pdf.size / 1024)} KB`)})</p>
      <iframe class="pdf" title=${t('PDF of invoice {number}', { number: invoice.invoice_number })} src=${pdf.url}></iframe>`
    }`;
}

export function InvoicePage({ id }) {
  const state = useLoad(() => api('GET', `/api/invoices/${id}`), [id]);
  return html`<${Loaded} state=${state}>${(res) => {
    const inv = res.data;
    const open = inv.status !== 'paid' && inv.status !== 'void';
    return html`<section>
      <div class="page-head">
        <h1>${t('Invoice')} <bdi dir="ltr">${inv.invoice_number}</bdi></h1>
        <span class=${`badge ${inv.status}`}>${t(inv.status)}</span>
      </div>
      <div class="toolbar" role="group" aria-label=${t('Invoice actions')}>
        ${
          session.canInvoice('invoices.pay') &&
          open &&
          html`<${ActionDialog} label="Record payment" fields=${[
            {
              name: 'amount',
              label: t('Amount ({currency})', { currency: inv.currency }),
              type: 'number',
              min: 0.01,
              max: inv.balance,
              value: inv.balance,
              required: true,
            },
            { name: 'method', label: 'Method', type: 'select', options: opt(METHODS), value: 'cash', required: true },
            { name: 'reference', label: 'Reference' },
            { name: 'paid_at', label: 'Paid at', type: 'datetime' },
            { name: 'notes', label: 'Notes', type: 'textarea' },
          ]}
          confirm=${t('Balance due: {amount}.', { amount: money(inv.balance, inv.currency) })}
          run=${(v) => api('POST', `/api/invoices/${inv.id}/payment`, { body: v })} onDone=${() => {
            notify(t('Payment recorded'));
            state.reload();
          }} />`
        }
        ${
          session.canInvoice('invoices.send') &&
          html`<${ActionDialog} label="Send by chat" title="Send the PDF by WhatsApp or Telegram" fields=${[
            { name: 'combined', label: 'Send one PDF of all open invoices', type: 'checkbox' },
            { name: 'phone', label: "Phone (default: the subscriber's)", type: 'tel' },
            { name: 'caption', label: 'Caption' },
          ]}
          run=${({ combined, ...body }) => api('POST', `/api/invoices/${inv.id}/${combined ? 'send-combined' : 'send-chat'}`, { body })}
          onDone=${() => notify(t('Sent'))} />`
        }
        ${
          session.canInvoice('invoices.send') &&
          html`<${ActionDialog} label="New public link" confirm="The current public link and QR code stop working."
          run=${() => api('POST', `/api/invoices/${inv.id}/public-token`)} onDone=${() => {
            notify(t('Public link replaced'));
            state.reload();
          }} />`
        }
        ${
          session.canInvoice('invoices.void') &&
          open &&
          inv.paid_amount === 0 &&
          html`<${ActionDialog} label="Void invoice" danger confirm="The invoice stays on record and stops counting; nobody paid it."
          run=${() => api('POST', `/api/invoices/${inv.id}/void`)} onDone=${() => {
            notify(t('Invoice voided'));
            state.reload();
          }} />`
        }
        ${
          session.isAdmin &&
          (inv.payments ?? []).length === 0 &&
          html`<${ActionDialog} label="Delete invoice" danger confirm="The invoice is deleted for good."
          run=${() => api('DELETE', `/api/invoices/${inv.id}`)} onDone=${() => go('/invoices')} />`
        }
      </div>
      <div class="grid">
        <section class="card" aria-labelledby="h-inv"><h2 id="h-inv">${t('Details')}</h2>
          <${KeyValues} data=${{
            ...inv,
            subscriber: html`<a href=${href(`/subscribers/${inv.subscriber_id}`)}>${inv.subscriber_username ?? `#${inv.subscriber_id}`}</a>`,
            reseller: inv.reseller_name,
            amount: money(inv.amount, inv.currency),
            tax: money(inv.tax_amount, inv.currency),
            total: money(inv.total, inv.currency),
            paid: money(inv.paid_amount, inv.currency),
            balance_due: money(inv.balance, inv.currency),
            commission: `${money(inv.commission_amount, inv.currency)} (${inv.commission_rate}%)`,
            public_link: inv.public_url
              ? html`<a href=${inv.public_url} target="_blank" rel="noopener noreferrer">${t('receipt page')}</a>`
              : null,
          }} keys=${['subscriber', 'reseller', 'issue_date', 'due_date', 'amount', 'tax', 'total', 'paid', 'balance_due', 'commission', 'paid_at', 'notes', 'public_link']} />
        </section>
        <section class="card" aria-labelledby="h-items"><h2 id="h-items">${t('Items')}</h2>
          <${Table} rows=${inv.items} columns=${[
            ['description', 'Description'],
            ['qty', 'Qty'],
            ['unit_price', 'Unit price', (i) => money(i.unit_price, inv.currency)],
            ['amount', 'Amount', (i) => money(i.amount, inv.currency)],
          ]} />
        </section>
      </div>
      <section aria-labelledby="h-payments"><h2 id="h-payments">${t('Payments')}</h2>
        <${Table} rows=${inv.payments} empty="No payment yet." columns=${[
          ['id', 'Id'],
          ['amount', 'Amount', (p) => money(p.amount, inv.currency)],
          ['method', 'Method'],
          ['reference', 'Reference'],
          ['transaction_id', 'Ledger transaction'],
          ['paid_at', 'Paid at', (p) => dateTime(p.paid_at ?? p.created_at)],
        ]} />
      </section>
      <section aria-labelledby="h-pdf"><h2 id="h-pdf">${t('PDF')}</h2><${PdfPreview} invoice=${inv} /></section>
    </section>`;
  }}</${Loaded}>`;
}
