/**
 * The subscriber's page (`/my`, docs/self-care.md): sign-in, then the screens by hash route. A
 * phone first: one column, a scrolling tab strip, large touch targets. Every word goes through the
 * console's catalogue (`t`), money and dates through the console's format.js.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { addTexts, t } from '/console/i18n.js';
import { match, useRoute } from '/console/router.js';
import { ErrorMessage, html, notify, StatusLine } from '/console/ui.js';
import { my } from './api.js';
import { AccountScreen, CardScreen, TopupScreen } from './account.js';
import { InvoiceScreen, InvoicesScreen } from './invoices.js';
import { NotificationsScreen, PasswordScreen } from './password.js';
import { PlanScreen } from './plan.js';
import { featureOn, operatorName } from './page.js';
import { LanguageSwitch } from './language.js';
import { session } from './session.js';
import { SignIn } from './sign-in.js';
import { UsageScreen } from './usage.js';

addTexts({
  ar: {
    'My account': 'حسابي',
    Account: 'الحساب',
    Usage: 'الاستهلاك',
    Invoices: 'الفواتير',
    Invoice: 'الفاتورة',
    'Top up data': 'شحن بيانات',
    'Recharge card': 'بطاقة شحن',
    'Change plan': 'تغيير الباقة',
    Password: 'كلمة المرور',
    Messages: 'الرسائل',
    Sections: 'الأقسام',
    'Not found': 'غير موجود',
    'Self-care is turned off by your provider.': 'أوقف مزوّد الخدمة الخدمة الذاتية.',
  },
});

/** [route, words, screen, the self-care switch it needs, false when not a tab] */
const SCREENS = [
  ['/', 'Account', () => AccountScreen],
  ['/usage', 'Usage', () => UsageScreen],
  ['/invoices', 'Invoices', () => InvoicesScreen],
  ['/invoices/:id', 'Invoice', () => InvoiceScreen, null, false],
  ['/topup', 'Top up data', () => TopupScreen, 'topup'],
  ['/card', 'Recharge card', () => CardScreen, 'redeem'],
  ['/plan', 'Change plan', () => PlanScreen, 'change_plan'],
  ['/password', 'Password', () => PasswordScreen, 'password'],
  ['/messages', 'Messages', () => NotificationsScreen],
];
const available = SCREENS.filter(([, , , feature]) => !feature || featureOn(feature));

function Screen({ route }) {
  for (const [pattern, words, screen] of available) {
    const params = match(pattern, route.path);
    if (!params) continue;
    document.title = `${t(words)} · ${operatorName || t('My account')}`;
    const Component = screen();
    return html`<${Component} key=${route.path} ...${params} query=${route.query} />`;
  }
  return html`<h1>${t('Not found')}</h1>`;
}

function Shell() {
  const route = useRoute();
  const [error, setError] = useState(null);
  async function signOut() {
    try {
      await my('POST', '/logout', { body: {} });
    } catch (err) {
      // A token the server already refuses is signed out anyway.
      if (err.status !== 401) return setError(err);
    }
    session.end(t('You are signed out.'));
    notify(t('You are signed out.'));
  }
  const current = (hash) => (hash === '/' ? route.path === '/' : route.path.startsWith(hash));
  return html`
    <header class="my-top">
      <strong class="brand">${operatorName || t('My account')}</strong>
      <${LanguageSwitch} />
      <button type="button" class="secondary" onClick=${signOut}>${t('Sign out')}</button>
    </header>
    <nav class="my-tabs" aria-label=${t('Sections')}>
      <ul>${available
        .filter((s) => s[4] !== false)
        .map(
          ([hash, words]) =>
            html`<li><a href=${`#${hash}`} aria-current=${current(hash) ? 'page' : undefined}>${t(words)}</a></li>`,
        )}</ul>
    </nav>
    <${ErrorMessage} error=${error} />
    <main id="main" class="my-main" tabindex="-1"><${Screen} route=${route} /></main>`;
}

function App() {
  const [, setVersion] = useState(0);
  useEffect(() => session.onChange(() => setVersion((v) => v + 1)), []);
  if (!featureOn('enabled'))
    return html`<main class="my-main signin"><h1>${operatorName || t('My account')}</h1>
      <p class="message">${t('Self-care is turned off by your provider.')}</p></main>`;
  return html`${session.token ? html`<${Shell} />` : html`<${SignIn} operatorName=${operatorName} codeSignIn=${featureOn('code_sign_in')} />`}<${StatusLine} />`;
}

render(html`<${App} />`, document.getElementById('app'));
