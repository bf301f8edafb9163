/**
 * API keys (docs/security.md): the signed-in manager's keys (an admin sees every key), a new key
 * with full access or a subset of the manager's permissions, an expiry and the addresses it may be
 * used from; its secret is shown once, in the creation answer; revocation. The permissions offered
 * are the API's own list (an admin's) or the ones the manager's token holds.
 */
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { t } from './i18n.js';
import { session } from './session.js';
import { ActionDialog, dateTime, html, Loaded, notify, Pager, Table, useLoad } from './ui.js';

/** A manager with two-factor sign-in on proves it again to create a key (docs/two-factor.md). */
function keyFields(permissions, ownTwoFactor) {
  return [
    { name: 'name', label: 'Name', required: true },
    { name: 'full', label: 'Full access (acts as you)', type: 'checkbox' },
    {
      name: 'permissions',
      label: 'Permissions (when not full)',
      type: 'checkboxes',
      options: permissions.map((p) => ({ value: p, label: p })),
    },
    { name: 'expires_at', label: 'Expires', type: 'datetime', hint: t('Empty: never.') },
    {
      name: 'allowed_ips',
      label: 'Allowed addresses',
      hint: t('Addresses or CIDR ranges, separated by commas; empty: any address.'),
    },
    ...(ownTwoFactor
      ? [
          {
            name: 'two_factor_code',
            label: 'Your two-factor code',
            required: true,
            hint: t('The 6 digits your authenticator app shows, or a recovery code'),
          },
        ]
      : []),
  ];
}

/** The form's comma-separated addresses as the API's list; a full key carries no permission list. */
function createBody(values) {
  const body = { ...values };
  if (values.allowed_ips) body.allowed_ips = values.allowed_ips.split(/[\s,]+/).filter(Boolean);
  if (values.full) delete body.permissions;
  return body;
}

/** The creation answer is the one place the secret appears: shown for copying, then gone. */
function SecretShown({ res }) {
  return html`<p>${t('The key {name}. Copy it now: it is not shown again.', { name: res.data.name })}</p>
    <p><code class="secret">${res.data.key}</code></p>`;
}

function state(k) {
  if (k.revoked_at) return t('revoked {when}', { when: dateTime(k.revoked_at) });
  if (k.expires_at && new Date(k.expires_at).getTime() <= Date.now()) return t('expired');
  return t('active');
}

export function ApiKeysPage() {
  const [page, setPage] = useState(1);
  const keys = useLoad(async () => {
    const list = await api('GET', '/api/api-keys', { query: { page, limit: 50 } });
    const permissions = session.isAdmin
      ? (await api('GET', '/api/permissions')).data
      : (session.claims.permissions ?? []);
    const ownTwoFactor = (await api('GET', '/api/auth/two-factor')).data.enabled;
    return { list, permissions, ownTwoFactor };
  }, [page]);
  return html`<section>
    <div class="page-head"><h1>${t('API keys')}</h1>
      <${Loaded} state=${keys}>${(
        d,
      ) => html`<${ActionDialog} label="New API key" fields=${keyFields(d.permissions, d.ownTwoFactor)}
        run=${(v) => api('POST', '/api/api-keys', { body: createBody(v) })}
        showResult=${(r) => html`<${SecretShown} res=${r} />`}
        onDone=${() => {
          notify(t('API key created'));
          keys.reload();
        }} />`}</${Loaded}>
    </div>
    <${Loaded} state=${keys}>${(d) => html`<${Table} rows=${d.list.data} empty="No API key yet." columns=${[
      ['name', 'Name'],
      ['prefix', 'Prefix', (k) => html`<code>${k.prefix}</code>`],
      ['manager_id', 'Manager'],
      ['permissions', 'Permissions', (k) => (k.full ? t('full') : k.permissions.join(', ') || '—')],
      ['allowed_ips', 'Allowed addresses', (k) => k.allowed_ips.join(', ') || t('any')],
      ['expires_at', 'Expires', (k) => dateTime(k.expires_at)],
      ['last_used_at', 'Last used', (k) => (k.last_used_at ? `${dateTime(k.last_used_at)} (${k.last_used_ip})` : '—')],
      ['state', 'State', state],
      [
        'actions',
        'Actions',
        (k) =>
          !k.revoked_at &&
          html`<${ActionDialog} label=${t('Revoke {name}', { name: k.name })} danger
            confirm=${t('Requests with this key are refused from now on, on every gateway.')}
            run=${() => api('DELETE', `/api/api-keys/${k.id}`)} onDone=${() => {
              notify(t('API key revoked'));
              keys.reload();
            }} />`,
      ],
    ]} />
    <${Pager} pagination=${d.list.pagination} onPage=${setPage} />`}</${Loaded}>
  </section>`;
}
