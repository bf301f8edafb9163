/**
 * Invoices: the list, one invoice with its lines and payments, its PDF, and paying it online
 * through the operator's checkout (the provider's page, then back).
 */
import { useState } from 'preact/hooks';
import { addTexts, t } from '/console/i18n.js';
import { date, dateTime, ltrText, money } from '/console/format.js';
import { html, Loaded, Pager, useLoad } from '/console/ui.js';
import { my } from './api.js';
import { openCheckout } from './account.js';
import { featureOn } from './page.js';

addTexts({
  ar: {
    Invoices: 'الفواتير',
    Invoice: 'الفاتورة',
    'No invoices yet.': 'لا فواتير بعد.',
    'Issued {date}': 'صدرت في {date}',
    'Issue date': 'تاريخ الإصدار',
    'Due date': 'تاريخ الاستحقاق',
    'Balance due': 'الرصيد المستحق',
    Total: 'الإجمالي',
    Amount: 'المبلغ',
    Tax: 'الضريبة',
    Paid: 'المدفوع',
    Lines: 'البنود',
    Payments: 'المدفوعات',
    'No payment yet.': 'لا مدفوعات بعد.',
    'Pay {amount} online': 'ادفع {amount} عبر الإنترنت',
    'Download the PDF': 'تنزيل ملف PDF',
    'Back to invoices': 'العودة إلى الفواتير',
    '{qty} × {price}': '{qty} × {price}',
    pending: 'بانتظار الدفع',
    partial: 'مدفوعة جزئيًا',
    paid: 'مدفوعة',
    overdue: 'متأخرة',
    void: 'ملغاة',
    cash: 'نقدًا',
    card: 'بطاقة',
    bank: 'تحويل بنكي',
    wallet: 'المحفظة',
    prepaid_card: 'بطاقة شحن',
    other: 'أخرى',
  },
});

/** An open invoice past its due date reads "overdue" before the nightly sweep marks it so. */
function shownStatus(i) {
  const open = i.status === 'pending' || i.status === 'partial';
  return open && i.due_date < new Date().toISOString().slice(0, 10) ? 'overdue' : i.status;
}
const badge = (i) => {
  const status = shownStatus(i);
  return html`<span class=${`badge ${status}`}>${t(status)}</span>`;
};

export function InvoicesScreen() {
  const [page, setPage] = useState(1);
  const state = useLoad(() => my('GET', '/invoices', { query: { page, limit: 20 } }), [page]);
  return html`<h1>${t('Invoices')}</h1>
    <${Loaded} state=${state}>${(res) =>
      res.data.length === 0
        ? html`<p class="muted">${t('No invoices yet.')}</p>`
        : html`<ul class="rows invoices">${res.data.map(
            (i) => html`<li><a href=${`#/invoices/${i.id}`}>
                <span class="row-head"><strong>${ltrText(i.invoice_number)}</strong> ${badge(i)}</span>
                <span class="row-body"><span>${t('Issued {date}', { date: date(i.issue_date) })}</span>
                  <strong>${money(i.total, i.currency)}</strong></span>
                ${i.balance > 0 && html`<span class="muted">${t('Balance due')}: ${money(i.balance, i.currency)}</span>`}
              </a></li>`,
          )}</ul>
            <${Pager} pagination=${res.pagination} onPage=${setPage} />`}</${Loaded}>`;
}

export function InvoiceScreen({ id }) {
  const state = useLoad(() => my('GET', `/invoices/${id}`).then((r) => r.data), [id]);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  async function pay() {
    setBusy(true);
    setError(null);
    try {
      const res = await my('POST', `/invoices/${id}/pay`, { body: {} });
      openCheckout(res.data.url);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }
  async function pdf(number) {
    setError(null);
    try {
      const blob = await my('GET', `/invoices/${id}/pdf`, { as: 'blob' });
      const link = document.createElement('a');
      link.href = URL.createObjectURL(blob);
      link.download = `${number}.pdf`;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    } catch (err) {
      setError(err);
    }
  }
  return html`<p><a href="#/invoices">${t('Back to invoices')}</a></p>
    <${Loaded} state=${state}>${(i) => html`
      <h1>${t('Invoice')} ${ltrText(i.invoice_number)}</h1>
      <section class="card">
        <p>${badge(i)}</p>
        <dl class="kv">
          <dt>${t('Issue date')}</dt><dd>${date(i.issue_date)}</dd>
          <dt>${t('Due date')}</dt><dd>${date(i.due_date)}</dd>
          <dt>${t('Amount')}</dt><dd>${money(i.amount, i.currency)}</dd>
          <dt>${t('Tax')}</dt><dd>${money(i.tax_amount, i.currency)}</dd>
          <dt>${t('Total')}</dt><dd><strong>${money(i.total, i.currency)}</strong></dd>
          <dt>${t('Paid')}</dt><dd>${money(i.paid_amount, i.currency)}</dd>
          <dt>${t('Balance due')}</dt><dd><strong>${money(i.balance, i.currency)}</strong></dd>
        </dl>
        <div class="actions">
          ${
            i.balance > 0 &&
            i.status !== 'void' &&
            featureOn('payments') &&
            html`<button type="button" disabled=${busy} onClick=${pay}>${t('Pay {amount} online', { amount: money(i.balance, i.currency) })}</button>`
          }
          <button type="button" class="secondary" onClick=${() => pdf(i.invoice_number)}>${t('Download the PDF')}</button>
        </div>
        ${error && html`<p class="message error" role="alert">${error.explanation}</p>`}
      </section>
      <section class="card">
        <h2>${t('Lines')}</h2>
        <ul class="rows">${i.items.map(
          (
            l,
          ) => html`<li><span class="row-body"><span>${l.description}</span><strong>${money(l.amount, i.currency)}</strong></span>
            <span class="muted">${t('{qty} × {price}', { qty: ltrText(l.qty), price: money(l.unit_price, i.currency) })}</span></li>`,
        )}</ul>
      </section>
      <section class="card">
        <h2>${t('Payments')}</h2>
        ${
          i.payments.length === 0
            ? html`<p class="muted">${t('No payment yet.')}</p>`
            : html`<ul class="rows">${i.payments.map(
                (p) =>
                  html`<li><span class="row-body"><span>${dateTime(p.paid_at)} · ${t(p.method)}</span><strong>${money(p.amount, i.currency)}</strong></span></li>`,
              )}</ul>`
        }
      </section>`}</${Loaded}>`;
}
