/** The console's shell: sign-in, the navigation the token allows, and the pages by route. */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ManagersPage, NasPage, PlansPage, ResellersPage } from './admin.js';
import { CardBatchPage, CardsPage } from './cards.js';
import { ImportsPage } from './imports.js';
import { SettingsPage } from './settings.js';
import { ApiKeysPage } from './api-keys.js';
import { AuditPage } from './audit.js';
import { BackupsPage } from './backups.js';
import { api } from './api.js';
import { DashboardPage } from './dashboard.js';
import { ownText } from './format.js';
import { t } from './i18n.js';
import { InvoicePage, InvoicesPage } from './invoices.js';
import { ReportsPage } from './reports.js';
import { LedgerPage } from './ledger.js';
import { match, useRoute } from './router.js';
import { session } from './session.js';
import { SessionsPage } from './sessions.js';
import { SubscriberPage } from './subscriber.js';
import { NewSubscriberPage, SubscribersPage } from './subscribers.js';
import { SecondStep, TwoFactorPage } from './two-factor.js';
import { WebhookPage, WebhooksPage } from './webhooks.js';
import { ErrorMessage, Form, html, notify, StatusLine, useLoad } from './ui.js';

function SignIn() {
  // Set when the password was right and two-factor sign-in asks for a code (docs/two-factor.md).
  const [challenge, setChallenge] = useState(null);
  useEffect(() => {
    document.title = `${t('Sign in')} · ${t('ISP billing console')}`;
  }, []);
  return html`<main id="main" class="signin">
    <h1>${t('Sign in')}</h1>
    ${session.notice && html`<p class="message" role="alert">${session.notice}</p>`}
    ${
      challenge
        ? html`<${SecondStep} challenge=${challenge} onBack=${() => setChallenge(null)} />`
        : html`
    <${Form} submitLabel="Sign in" fields=${[
      { name: 'username', label: 'Username', required: true },
      { name: 'password', label: 'Password', type: 'password', required: true },
    ]} onSubmit=${async (values) => {
      const res = await api('POST', '/api/auth/login', { body: values });
      if (res.data.two_factor_required) return setChallenge(res.data.challenge);
      // The start page then opens on the first page the caller may see (Page): the dashboard for an
      // admin or a reseller. A deep link the sign-in interrupted is kept.
      session.start(res.data.token);
    }} />`
    }
  </main>`;
}

/** Navigation entries and who sees them (the API would refuse the others anyway). */
const NAV = [
  ['#/dashboard', 'Dashboard', () => session.isAdminOrReseller],
  ['#/subscribers', 'Subscribers', () => session.can('subscribers.view')],
  ['#/invoices', 'Invoices', () => true],
  ['#/reports', 'Reports', () => session.isAdminOrReseller],
  ['#/ledger', 'Ledger', () => true],
  ['#/sessions', 'Live sessions', () => session.can('subscribers.view')],
  ['#/resellers', 'Resellers', () => session.isAdminOrReseller],
  ['#/plans', 'Plans', () => true],
  ['#/cards', 'Prepaid cards', () => session.isAdminOrReseller],
  ['#/imports', 'Imports', () => session.isAdmin],
  ['#/nas', 'Access servers', () => session.isAdmin],
  ['#/managers', 'Managers', () => session.isAdmin],
  ['#/settings', 'Settings', () => session.isAdmin],
  ['#/webhooks', 'Webhooks', () => session.isAdmin],
  ['#/audit', 'Audit', () => session.isAdminOrReseller],
  ['#/backups', 'Backups', () => session.isAdmin],
  ['#/api-keys', 'API keys', () => true],
  ['#/security', 'Security', () => true],
];
/** A token that may only enrol in two-factor sign-in sees its security page alone. */
const visibleNav = () =>
  NAV.filter(([hash, , visible]) => (session.claims.enrolOnly ? hash === '#/security' : visible()));

const PAGES = [
  ['/dashboard', () => DashboardPage, 'Dashboard'],
  ['/reports', () => ReportsPage, 'Reports'],
  ['/subscribers', () => SubscribersPage, 'Subscribers'],
  ['/subscribers/new', () => NewSubscriberPage, 'New subscriber'],
  ['/subscribers/:id', () => SubscriberPage, 'Subscriber'],
  ['/invoices', () => InvoicesPage, 'Invoices'],
  ['/invoices/:id', () => InvoicePage, 'Invoice'],
  ['/ledger', () => LedgerPage, 'Ledger'],
  ['/sessions', () => SessionsPage, 'Live sessions'],
  ['/resellers', () => ResellersPage, 'Resellers'],
  ['/plans', () => PlansPage, 'Plans'],
  ['/cards', () => CardsPage, 'Prepaid cards'],
  ['/cards/batches/:id', () => CardBatchPage, 'Card batch'],
  ['/imports', () => ImportsPage, 'Imports'],
  ['/nas', () => NasPage, 'Access servers'],
  ['/managers', () => ManagersPage, 'Managers'],
  ['/settings', () => SettingsPage, 'Settings'],
  ['/webhooks', () => WebhooksPage, 'Webhooks'],
  ['/webhooks/:id', () => WebhookPage, 'Webhook'],
  ['/audit', () => AuditPage, 'Audit trail'],
  ['/backups', () => BackupsPage, 'Backups'],
  ['/api-keys', () => ApiKeysPage, 'API keys'],
  ['/security', () => TwoFactorPage, 'Security'],
];

function Page({ route }) {
  if (session.claims.enrolOnly && route.path !== '/security') {
    location.replace('#/security');
    return null;
  }
  for (const [pattern, component, title] of PAGES) {
    const params = match(pattern, route.path);
    if (!params) continue;
    document.title = `${t(title)} · ${t('ISP billing console')}`;
    const Component = component();
    return html`<${Component} key=${route.path} ...${params} query=${route.query} />`;
  }
  const first = visibleNav()[0];
  if (route.path === '/' && first) {
    location.replace(first[0]);
    return null;
  }
  return html`<h1>${t('Not found')}</h1><p>${t('No page at {path}.', { path: route.path })}</p>`;
}

/** The operator's name (the `operator_name` setting), which the server writes into the page. */
const operatorName = document.querySelector('meta[name="operator"]')?.content ?? '';

function Shell() {
  const route = useRoute();
  const [error, setError] = useState(null);
  const { role, resellerId } = session.claims;
  async function signOut() {
    try {
      await api('POST', '/api/auth/logout', { body: {} });
    } catch (err) {
      // A token the server already refuses is signed out anyway; anything else is worth saying.
      if (err.status !== 401) return setError(err);
    }
    session.end(t('You are signed out.'));
    notify(t('Signed out'));
  }
  return html`
    <a class="skip" href="#main" onClick=${(e) => {
      e.preventDefault();
      document.getElementById('main')?.focus();
    }}>${t('Skip to content')}</a>
    <header class="top">
      <strong class="brand">${operatorName || t('ISP billing')}</strong>
      <nav aria-label=${t('Main')}>
        <ul>${visibleNav().map(
          ([hash, text]) => html`<li>
          <a href=${hash} aria-current=${route.path.startsWith(hash.slice(1)) ? 'page' : undefined}>${t(text)}</a></li>`,
        )}</ul>
      </nav>
      <${Who} role=${role} resellerId=${resellerId} />
      <button type="button" class="secondary" onClick=${signOut}>${t('Sign out')}</button>
    </header>
    <${ErrorMessage} error=${error} />
    <main id="main" tabindex="-1"><${Page} route=${route} /></main>`;
}

/**
 * Who is signed in: the role, and the reseller by its name (a reseller-role token may read its own
 * reseller; a `user` token may not, so it reads the reseller's number).
 */
function Who({ role, resellerId }) {
  const reseller = useLoad(
    () =>
      resellerId && session.isAdminOrReseller
        ? api('GET', `/api/resellers/${resellerId}`).then((res) => res.data.name)
        : Promise.resolve(null),
    [resellerId],
  );
  const text = !resellerId
    ? t(role)
    : reseller.data
      ? t('{role} of {reseller}', { role: t(role), reseller: ownText(reseller.data) })
      : t('{role} of reseller #{id}', { role: t(role), id: resellerId });
  return html`<span class="who">${text}</span>`;
}

function App() {
  const [, setVersion] = useState(0);
  useEffect(() => session.onChange(() => setVersion((v) => v + 1)), []);
  return html`${session.token ? html`<${Shell} />` : html`<${SignIn} />`}<${StatusLine} />`;
}

render(html`<${App} />`, document.getElementById('app'));
