/**
 * Changing plan among those the operator marks self-service: pick one, read the prorated quote
 * (what is left of the current plan, the new plan's charge, the net due), then confirm.
 */
import { useState } from 'preact/hooks';
import { addTexts, t } from '/console/i18n.js';
import { date, ltrText, money } from '/console/format.js';
import { ErrorMessage, html, Loaded, notify, useLoad } from '/console/ui.js';
import { my } from './api.js';

addTexts({
  ar: {
    'Change plan': 'تغيير الباقة',
    'Your plan': 'باقتك',
    '{price} for {days} days': '{price} لمدة {days} يومًا',
    '{gb} GB a month': '{gb} GB شهريًا',
    'No monthly limit': 'بلا حد شهري',
    'See the price': 'عرض السعر',
    'No other plan is offered to choose yourself. Please contact us.':
      'لا توجد باقة أخرى متاحة للاختيار الذاتي. يرجى الاتصال بنا.',
    'Moving to {plan} now': 'الانتقال إلى {plan} الآن',
    'Days left on your plan': 'الأيام المتبقية من باقتك',
    'Unused part of your plan': 'الجزء غير المستخدم من باقتك',
    'Charge of the new plan for those days': 'تكلفة الباقة الجديدة لتلك الأيام',
    'You pay now': 'تدفع الآن',
    'Credited to your wallet': 'يُضاف إلى محفظتك',
    'Confirm the change': 'تأكيد التغيير',
    Cancel: 'إلغاء',
    'Your plan is now {plan}. Expires on {date}.': 'باقتك الآن {plan}. تنتهي في {date}.',
    'An invoice for the difference is in your invoices.': 'فاتورة الفرق موجودة في فواتيرك.',
  },
});

function Quote({ plan, onDone, onCancel }) {
  const state = useLoad(
    () => my('GET', '/change-plan', { query: { service_id: plan.id } }).then((r) => r.data),
    [plan.id],
  );
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  async function confirm(q) {
    setBusy(true);
    setError(null);
    try {
      const res = await my('POST', '/change-plan', { body: { service_id: plan.id } });
      notify(
        t('Your plan is now {plan}. Expires on {date}.', {
          plan: res.data.plan.name,
          date: date(res.data.expiry_date),
        }),
      );
      onDone(res.data, q);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }
  return html`<section class="card quote" aria-live="polite">
    <h2>${t('Moving to {plan} now', { plan: plan.name })}</h2>
    <${Loaded} state=${state}>${(q) => html`
      <dl class="kv">
        <dt>${t('Days left on your plan')}</dt><dd>${ltrText(q.days_remaining)}</dd>
        <dt>${t('Unused part of your plan')}</dt><dd>${money(q.old_unused_credit, q.currency)}</dd>
        <dt>${t('Charge of the new plan for those days')}</dt><dd>${money(q.new_service_charge, q.currency)}</dd>
        <dt>${q.net_amount_due >= 0 ? t('You pay now') : t('Credited to your wallet')}</dt>
        <dd class="big">${money(Math.abs(q.net_amount_due), q.currency)}</dd>
      </dl>
      <${ErrorMessage} error=${error} />
      <div class="actions">
        <button type="button" disabled=${busy} onClick=${() => confirm(q)}>${t('Confirm the change')}</button>
        <button type="button" class="secondary" onClick=${onCancel}>${t('Cancel')}</button>
      </div>`}</${Loaded}>
  </section>`;
}

export function PlanScreen() {
  const state = useLoad(() => my('GET', '/plans').then((r) => r.data), []);
  const [picked, setPicked] = useState(null);
  const [moved, setMoved] = useState(null);
  return html`<h1>${t('Change plan')}</h1>
    ${
      moved &&
      html`<p class="message" role="status">${t('Your plan is now {plan}. Expires on {date}.', { plan: moved.plan.name, date: date(moved.expiry_date) })}
      ${moved.due > 0 && html` <a href="#/invoices">${t('An invoice for the difference is in your invoices.')}</a>`}</p>`
    }
    <${Loaded} state=${state}>${(plans) => html`
      ${plans.length < 2 && html`<p class="muted">${t('No other plan is offered to choose yourself. Please contact us.')}</p>`}
      <ul class="rows plans">${plans.map(
        (p) => html`<li class=${p.current ? 'current' : ''}>
          <span class="row-head"><strong>${p.name}</strong>${p.current && html` <span class="badge online">${t('Your plan')}</span>`}</span>
          <span>${t('{price} for {days} days', { price: money(p.price, p.currency), days: ltrText(p.duration_days) })}</span>
          <span class="muted">${p.monthly_quota_gb === null ? t('No monthly limit') : t('{gb} GB a month', { gb: ltrText(p.monthly_quota_gb) })}${p.rate_limit ? html` · ${ltrText(p.rate_limit)}` : ''}</span>
          ${!p.current && html`<button type="button" class="secondary" onClick=${() => setPicked(p)}>${t('See the price')}</button>`}
        </li>`,
      )}</ul>
      ${
        picked &&
        html`<${Quote} key=${picked.id} plan=${picked}
        onCancel=${() => setPicked(null)}
        onDone=${(account, q) => {
          setPicked(null);
          setMoved({ ...account, due: q.net_amount_due });
          state.reload();
        }} />`
      }`}</${Loaded}>`;
}
