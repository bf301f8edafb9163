/**
 * The account screen (plan, status, expiry, days left, why access is blocked, wallet, auto-renew,
 * how to reach and pay the operator, renewing now) and the wallet's two doors: a data top-up and a
 * recharge card.
 */
import { addTexts, blockedReasonText, t } from '/console/i18n.js';
import { date, ltrText, money } from '/console/format.js';
import { Form, html, Loaded, notify, useConfirm, useLoad } from '/console/ui.js';
import { useState } from 'preact/hooks';
import { my } from './api.js';
import { featureOn } from './page.js';

addTexts({
  ar: {
    Plan: 'الباقة',
    Status: 'الحالة',
    'Expires on': 'ينتهي في',
    'Days left': 'الأيام المتبقية',
    Wallet: 'المحفظة',
    'Internet access': 'الوصول إلى الإنترنت',
    Working: 'يعمل',
    'Deactivated by your provider': 'أوقفه مزوّد الخدمة',
    'Blocked: {reason}': 'محظور: {reason}',
    'Pay the overdue invoice to get back online.': 'ادفع الفاتورة المتأخرة لاستعادة الاتصال.',
    'See my invoices': 'عرض فواتيري',
    'Renew now': 'جدّد الآن',
    'Renew {plan} for {price}?': 'تجديد {plan} مقابل {price}؟',
    'Paid from your wallet when it covers the price; otherwise you pay online.':
      'يُدفع من محفظتك إذا غطّى رصيدها السعر؛ وإلا فتدفع عبر الإنترنت.',
    'Renewed until {date}.': 'تم التجديد حتى {date}.',
    Cancel: 'إلغاء',
    'Renew automatically from my wallet': 'التجديد تلقائيًا من محفظتي',
    'Auto-renew is on.': 'التجديد التلقائي مفعّل.',
    'Auto-renew is off.': 'التجديد التلقائي متوقف.',
    'Contact us': 'اتصل بنا',
    Phone: 'الهاتف',
    Email: 'البريد الإلكتروني',
    Address: 'العنوان',
    'How to pay': 'طريقة الدفع',
    'Top up data': 'شحن بيانات',
    'Recharge card': 'بطاقة شحن',
    '{gb} GB for {price}': '{gb} GB مقابل {price}',
    'Buy {gb} GB for {price} from your wallet?': 'شراء {gb} GB مقابل {price} من محفظتك؟',
    Buy: 'شراء',
    'Added {gb} GB to this month.': 'أُضيف {gb} GB إلى هذا الشهر.',
    'No data top-ups are offered right now.': 'لا توجد باقات شحن بيانات معروضة حاليًا.',
    'Paid from your wallet: {wallet}.': 'تُدفع من محفظتك: {wallet}.',
    'Card PIN': 'الرقم السري للبطاقة',
    'As printed under the scratch panel.': 'كما هو مطبوع تحت طبقة الخدش.',
    Redeem: 'استخدم البطاقة',
    'Card redeemed. Your wallet: {wallet}. Expires on: {date}.':
      'تم استخدام البطاقة. محفظتك: {wallet}. تاريخ الانتهاء: {date}.',
    'Sending you to the payment page…': 'جارٍ تحويلك إلى صفحة الدفع…',
  },
});

/** Leaves for the provider's checkout (the same tab: the token stays in this tab's storage). */
export function openCheckout(url) {
  notify(t('Sending you to the payment page…'));
  location.assign(url);
}

function Status({ a }) {
  // An account the operator deactivated is refused by the router whatever its dates say.
  if (a.status !== 'active') return html`<span class="badge overdue">${t('Deactivated by your provider')}</span>`;
  if (!a.blocked_reason) return html`<span class="badge online">${t('Working')}</span>`;
  return html`<span class="badge overdue">${t('Blocked: {reason}', { reason: blockedReasonText(a.blocked_reason) })}</span>`;
}

function Renew({ a, onDone }) {
  const [dialog, ask] = useConfirm();
  const [error, setError] = useState(null);
  async function renew() {
    const price = money(a.plan.renewal_total, a.plan.currency);
    const yes = await ask({
      title: t('Renew now'),
      text: `${t('Renew {plan} for {price}?', { plan: a.plan.name, price })} ${t('Paid from your wallet when it covers the price; otherwise you pay online.')}`,
      action: t('Renew now'),
    });
    if (!yes) return;
    setError(null);
    try {
      const res = await my('POST', '/renew', { body: {} });
      if (!res.data.renewed) return openCheckout(res.data.url);
      notify(t('Renewed until {date}.', { date: date(res.data.expiry_date) }));
      onDone();
    } catch (err) {
      setError(err);
    }
  }
  return html`<button type="button" onClick=${renew}>${t('Renew now')}</button>${dialog}
    ${error && html`<p class="message error" role="alert">${error.explanation}</p>`}`;
}

function AutoRenew({ a, onChange }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  async function toggle(e) {
    const on = e.currentTarget.checked;
    setBusy(true);
    setError(null);
    try {
      const res = await my('PUT', '/account', { body: { auto_renew: on } });
      notify(res.data.auto_renew ? t('Auto-renew is on.') : t('Auto-renew is off.'));
      onChange(res.data);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return html`<div class="field checkbox switch">
    <input type="checkbox" id="auto-renew" role="switch" checked=${a.auto_renew} disabled=${busy} onChange=${toggle} />
    <label for="auto-renew">${t('Renew automatically from my wallet')}</label>
    ${error && html`<p class="message error" role="alert">${error.explanation}</p>`}
  </div>`;
}

function Operator({ o }) {
  if (!o.phone && !o.email && !o.address && !o.how_to_pay) return null;
  return html`<section class="card">
    <h2>${t('Contact us')}</h2>
    <dl class="kv">
      ${o.phone && html`<dt>${t('Phone')}</dt><dd><a href=${`tel:${o.phone.replace(/[^\d+]/g, '')}`}>${ltrText(o.phone)}</a></dd>`}
      ${o.email && html`<dt>${t('Email')}</dt><dd><a href=${`mailto:${o.email}`}>${ltrText(o.email)}</a></dd>`}
      ${o.address && html`<dt>${t('Address')}</dt><dd>${o.address}</dd>`}
    </dl>
    ${o.how_to_pay && html`<h3>${t('How to pay')}</h3><p class="how-to-pay">${o.how_to_pay}</p>`}
  </section>`;
}

export function AccountScreen() {
  const state = useLoad(() => my('GET', '/account').then((r) => r.data), []);
  const [fresh, setFresh] = useState(null);
  return html`<${Loaded} state=${state}>${(loaded) => {
    const a = fresh ?? loaded;
    return html`
      <h1>${a.full_name || ltrText(a.username)}</h1>
      <section class="card summary" aria-label=${t('Plan')}>
        <dl class="kv">
          <dt>${t('Plan')}</dt><dd>${a.plan.name}</dd>
          <dt>${t('Internet access')}</dt><dd><${Status} a=${a} /></dd>
          <dt>${t('Expires on')}</dt><dd>${date(a.expiry_date)}</dd>
          <dt>${t('Days left')}</dt><dd class="big">${ltrText(a.days_left)}</dd>
          <dt>${t('Wallet')}</dt><dd>${money(a.wallet_balance, a.wallet_currency)}</dd>
        </dl>
        ${
          a.blocked_reason === 'overdue' &&
          html`<p class="message error">${t('Pay the overdue invoice to get back online.')} <a href="#/invoices">${t('See my invoices')}</a></p>`
        }
        <div class="actions">
          ${featureOn('renew') && html`<${Renew} a=${a} onDone=${state.reload} />`}
          ${featureOn('topup') && html`<a class="button secondary" href="#/topup">${t('Top up data')}</a>`}
          ${featureOn('redeem') && html`<a class="button secondary" href="#/card">${t('Recharge card')}</a>`}
        </div>
        ${featureOn('auto_renew') && html`<${AutoRenew} a=${a} onChange=${setFresh} />`}
      </section>
      <${Operator} o=${a.operator} />`;
  }}</${Loaded}>`;
}

export function TopupScreen() {
  const state = useLoad(
    () =>
      Promise.all([my('GET', '/topup-data'), my('GET', '/account')]).then(([o, a]) => ({
        offers: o.data,
        account: a.data,
      })),
    [],
  );
  const [dialog, ask] = useConfirm();
  const [error, setError] = useState(null);
  async function buy(offer) {
    const price = money(offer.price, offer.currency);
    if (
      !(await ask({
        title: t('Top up data'),
        text: t('Buy {gb} GB for {price} from your wallet?', { gb: offer.gb, price }),
        action: t('Buy'),
      }))
    )
      return;
    setError(null);
    try {
      await my('POST', '/topup-data', { body: { gb: offer.gb } });
      notify(t('Added {gb} GB to this month.', { gb: offer.gb }));
      state.reload();
    } catch (err) {
      setError(err);
    }
  }
  return html`<h1>${t('Top up data')}</h1>
    <${Loaded} state=${state}>${({ offers, account }) => html`
      <p>${t('Paid from your wallet: {wallet}.', { wallet: money(account.wallet_balance, account.wallet_currency) })}</p>
      ${offers.length === 0 && html`<p class="muted">${t('No data top-ups are offered right now.')}</p>`}
      <ul class="choices">${offers.map(
        (o) => html`<li><button type="button" class="choice" onClick=${() => buy(o)}>
          ${t('{gb} GB for {price}', { gb: o.gb, price: money(o.price, o.currency) })}</button></li>`,
      )}</ul>
      ${error && html`<p class="message error" role="alert">${error.explanation}</p>`}
      ${dialog}`}</${Loaded}>`;
}

export function CardScreen() {
  const [done, setDone] = useState(null);
  return html`<h1>${t('Recharge card')}</h1>
    ${
      done &&
      html`<p class="message" role="status">${t('Card redeemed. Your wallet: {wallet}. Expires on: {date}.', {
        wallet: money(done.account.wallet_balance, done.account.wallet_currency),
        date: date(done.account.expiry_date),
      })}</p>`
    }
    <${Form}
      submitLabel="Redeem"
      fields=${[{ name: 'pin', label: 'Card PIN', required: true, hint: 'As printed under the scratch panel.', autocomplete: 'off' }]}
      onSubmit=${async (values, form) => {
        const res = await my('POST', '/redeem-card', { body: values });
        form.reset();
        setDone(res.data);
        notify(
          t('Card redeemed. Your wallet: {wallet}. Expires on: {date}.', {
            wallet: money(res.data.account.wallet_balance, res.data.account.wallet_currency),
            date: date(res.data.account.expiry_date),
          }),
        );
      }}
    />`;
}
