/** Resellers (tree, balances, commissions), plans, access servers and managers. */
import { useState } from 'preact/hooks';
import { allPages, api, ApiError } from './api.js';
import { forget, options, plans } from './lookups.js';
import { addTexts, t } from './i18n.js';
import { TierList, tierFields, withTiers } from './fup-tiers.js';
import { session } from './session.js';
import { ActionDialog, Form, html, Loaded, money, notify, Table, useLoad } from './ui.js';

addTexts({
  ar: {
    'generic (standard attributes)': 'عام (السمات القياسية)',
    'Edit {name}': 'تعديل {name}',
    'Reset the password of {name}': 'إعادة تعيين كلمة مرور {name}',
    'Their sessions end; they sign in with the new password.': 'تنتهي جلساته؛ ويسجّل الدخول بكلمة المرور الجديدة.',
    'Manager {name} saved': 'تم حفظ المدير {name}',
    'Password of {name} reset': 'أُعيد تعيين كلمة مرور {name}',
    'New password (8 or more)': 'كلمة المرور الجديدة (8 أحرف أو أكثر)',
    'Active (may sign in)': 'نشط (يمكنه تسجيل الدخول)',
    Active: 'نشط',
  },
});

// A reseller's balance: who pays for a top-up (docs/operators-first-day.md).
addTexts({
  ar: {
    'New money: only the balance of {name} changes (an admin top-up is taken from no other balance).':
      'رصيد جديد: يتغيّر رصيد {name} وحده (شحن المدير لا يُقتطع من أي رصيد آخر).',
    'The amount moves from your own balance to {name}; a debit moves it back to you.':
      'يُنقل المبلغ من رصيدك إلى {name}؛ والخصم يعيده إليك.',
  },
});

const opt = (values) => values.map((v) => ({ value: v, label: v }));

// ---- resellers --------------------------------------------------------------------------------

/** Rows ordered as a tree (each parent before its children), with their depth. */
function asTree(rows) {
  const children = new Map();
  const ids = new Set(rows.map((r) => r.id));
  for (const r of rows) {
    const parent = ids.has(r.parent_id) ? r.parent_id : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(r);
  }
  const out = [];
  const walk = (parent, depth) =>
    (children.get(parent) ?? []).forEach((r) => {
      out.push({ ...r, depth });
      walk(r.id, depth + 1);
    });
  walk(null, 0);
  return out;
}

function Commissions({ reseller }) {
  const year = new Date().getUTCFullYear();
  const [range, setRange] = useState({ from: `${year}-01-01`, to: `${year}-12-31` });
  const state = useLoad(
    () => api('GET', '/api/invoices/commissions', { query: { reseller_id: reseller.id, ...range } }),
    [reseller.id, range.from, range.to],
  );
  return html`<section class="card" aria-labelledby="h-comm"><h2 id="h-comm">${t('Commissions of {name}', { name: reseller.name })}</h2>
    <${Form} className="form inline" submitLabel="Show" onSubmit=${async (v) => setRange(v)} fields=${[
      { name: 'from', label: 'From', type: 'date', value: range.from, required: true },
      { name: 'to', label: 'To', type: 'date', value: range.to, required: true },
    ]} />
    <${Loaded} state=${state}>${(res) => html`
      <p>Rate ${res.data.rate}%: ${money(res.data.total_commission, res.data.currency)} commission on ${money(res.data.total_invoiced, res.data.currency)} invoiced.</p>
      <${Table} rows=${res.data.rows} empty="No invoices in this period." columns=${[
        ['month', 'Month'],
        ['invoiced', 'Invoiced', (r) => money(r.invoiced, res.data.currency)],
        ['commission', 'Commission', (r) => money(r.commission, res.data.currency)],
      ]} />`}</${Loaded}>
  </section>`;
}

function ServiceLimits({ reseller, plansList, onChange }) {
  const state = useLoad(() => api('GET', `/api/resellers/${reseller.id}/service-limits`), [reseller.id]);
  return html`<section class="card" aria-labelledby="h-limits"><h2 id="h-limits">Plans allowed for ${reseller.name}</h2>
    <${Loaded} state=${state}>${(res) => html`<${Table} rows=${res.data} empty="No plan allowed yet." />`}</${Loaded}>
    <${ActionDialog} label="Allow a plan" fields=${[
      { name: 'service_id', label: 'Plan', type: 'select', numeric: true, options: options(plansList), required: true },
      { name: 'max_subscribers', label: 'Most subscribers (empty: no cap)', type: 'int', min: 0 },
    ]}
      run=${(v) => api('POST', `/api/resellers/${reseller.id}/service-limits`, { body: v })} onDone=${() => {
        state.reload();
        onChange();
      }} />
  </section>`;
}

export function ResellersPage() {
  const state = useLoad(async () => ({ rows: await allPages('/api/resellers'), plans: await plans() }), []);
  const [chosen, setChosen] = useState(null);
  const reload = () => {
    forget('resellers');
    state.reload();
  };
  const resellerFields = (rows) => [
    { name: 'name', label: 'Name', required: true },
    {
      name: 'parent_id',
      label: 'Parent',
      type: 'select',
      numeric: true,
      options: options(rows),
      required: !session.isAdmin,
      value: session.claims.resellerId,
    },
    { name: 'commission_rate', label: 'Commission %', type: 'number', min: 0, max: 100 },
    { name: 'currency', label: 'Currency (e.g. USD)' },
    ...(session.isAdmin ? [{ name: 'balance', label: 'Opening balance', type: 'number', min: 0 }] : []),
  ];
  return html`<section>
    <div class="page-head"><h1>${t('Resellers')}</h1>
      <${Loaded} state=${state}>${(d) => html`<${ActionDialog} label="New reseller" fields=${resellerFields(d.rows)}
        run=${(v) => api('POST', '/api/resellers', { body: v })} onDone=${(res) => {
          notify(`Reseller ${res.data.name} created`);
          reload();
        }} />`}</${Loaded}>
    </div>
    <${Loaded} state=${state}>${(d) => html`<${Table} rows=${asTree(d.rows)} columns=${[
      [
        'name',
        'Name',
        (r) =>
          html`<span class="tree" style=${{ paddingInlineStart: `${r.depth * 1.5}em` }}>${r.depth ? '└ ' : ''}${r.name}</span>`,
      ],
      ['id', 'Id'],
      ['balance', 'Balance', (r) => money(r.balance, r.currency)],
      ['commission_rate', 'Commission', (r) => `${r.commission_rate}%`],
      [
        'actions',
        'Actions',
        (
          r,
        ) => html`<button type="button" class="secondary" onClick=${() => setChosen(r)}>${t('Details of {name}', { name: r.name })}</button>
        ${
          (session.isAdmin || r.id !== session.claims.resellerId) &&
          html`<${ActionDialog} label=${t('Balance of {name}', { name: r.name })} title=${t('Credit or debit {name}', { name: r.name })}
          fields=${[
            {
              name: 'amount',
              label: t('Amount ({currency}); negative debits', { currency: r.currency }),
              type: 'number',
              required: true,
            },
            { name: 'notes', label: 'Notes' },
          ]}
          confirm=${
            session.isAdmin
              ? t('New money: only the balance of {name} changes (an admin top-up is taken from no other balance).', {
                  name: r.name,
                })
              : t('The amount moves from your own balance to {name}; a debit moves it back to you.', { name: r.name })
          }
          run=${(v) => api('POST', `/api/resellers/${r.id}/balance`, { body: v })} onDone=${() => {
            notify(t('Balance updated'));
            reload();
          }} />`
        }`,
      ],
    ]} />
    ${chosen && html`<div class="grid"><${Commissions} reseller=${chosen} /><${ServiceLimits} reseller=${chosen} plansList=${d.plans} onChange=${reload} /></div>`}`}</${Loaded}>
  </section>`;
}

// ---- plans ------------------------------------------------------------------------------------

addTexts(
  {
    ar: {
      'IPv6 pool for the WAN prefix': 'مجمّع IPv6 لبادئة الواجهة الخارجية',
      'IPv6 pool for the delegated prefix': 'مجمّع IPv6 للبادئة المفوَّضة',
      "A pool of ours (IPv6 pools) or the router's own pool name; sent only to subscribers without a prefix of their own.":
        'مجمّع من مجمّعاتنا (مجمّعات IPv6) أو اسم مجمّع في الموجّه نفسه؛ يُرسل فقط للمشتركين الذين ليست لهم بادئة خاصة.',
      'RADIUS attributes of {name}': 'سمات RADIUS للباقة {name}',
      'Attributes of {name} saved': 'حُفظت سمات {name}',
      'One pair a line, as FreeRADIUS names them: Attribute := "value" (or = and +=). Added to what the vendor profile sends; checked against the dictionary when saved.':
        'زوج واحد في كل سطر بأسماء FreeRADIUS: السمة := "القيمة" (أو = و +=). يُضاف إلى ما يرسله ملف المورّد؛ ويُتحقق منه مقابل القاموس عند الحفظ.',
      'line {n}: unknown attribute {attribute}': 'السطر {n}: سمة غير معروفة {attribute}',
      'line {n}: {why}': 'السطر {n}: {why}',
    },
  },
  {
    framed_ipv6_pool: ['IPv6 pool for the WAN prefix', 'مجمّع IPv6 لبادئة الواجهة الخارجية'],
    delegated_ipv6_pool: ['IPv6 pool for the delegated prefix', 'مجمّع IPv6 للبادئة المفوَّضة'],
  },
);

const IPV6_POOL_HINT =
  "A pool of ours (IPv6 pools) or the router's own pool name; sent only to subscribers without a prefix of their own.";

const planFields = (p = {}) => [
  { name: 'name', label: 'Name', required: !p.id, value: p.name },
  { name: 'price', label: 'Price', type: 'number', min: 0, required: !p.id, value: p.price },
  { name: 'duration_days', label: 'Days', type: 'int', min: 1, max: 3660, value: p.duration_days ?? 30 },
  { name: 'currency', label: 'Currency', value: p.currency },
  { name: 'rate_limit', label: 'Rate limit (e.g. 20M/20M)', value: p.rate_limit },
  { name: 'pool_name', label: 'Address pool', value: p.pool_name },
  { name: 'framed_ipv6_pool', label: 'IPv6 pool for the WAN prefix', value: p.framed_ipv6_pool, hint: IPV6_POOL_HINT },
  { name: 'delegated_ipv6_pool', label: 'IPv6 pool for the delegated prefix', value: p.delegated_ipv6_pool },
  { name: 'daily_quota_gb', label: 'Daily quota GB', type: 'number', min: 0, value: p.daily_quota_gb },
  { name: 'monthly_quota_gb', label: 'Monthly quota GB', type: 'number', min: 0, value: p.monthly_quota_gb },
  { name: 'mac_binding', label: 'Bind the first MAC', type: 'checkbox', value: p.mac_binding },
  ...tierFields(p),
];

/**
 * A plan's per-vendor template (`vendor_attributes`, docs/network-access.md "Operator templates"):
 * one textarea per vendor. The API checks each against the dictionary and answers
 * `vendor_attributes: <vendor>: line <n>: <why>`: shown beside that vendor's field.
 */
const templateField = (vendor) => `template_${vendor.replace(/-/g, '_')}`;
const templateFields = (p) =>
  VENDOR_OPTIONS.map((o, i) => ({
    name: templateField(o.value),
    label: o.label,
    type: 'textarea',
    value: p.vendor_attributes?.[o.value],
    hint: i === 0 ? TEMPLATE_HINT : undefined,
  }));
const TEMPLATE_HINT =
  'One pair a line, as FreeRADIUS names them: Attribute := "value" (or = and +=). Added to what the vendor profile sends; checked against the dictionary when saved.';

function templateProblem(why) {
  const unknown = /^line (\d+): unknown attribute (\S+)$/.exec(why);
  if (unknown) return t('line {n}: unknown attribute {attribute}', { n: unknown[1], attribute: unknown[2] });
  const line = /^line (\d+): (.+)$/.exec(why);
  return line ? t('line {n}: {why}', { n: line[1], why: line[2] }) : why;
}

async function saveTemplates(p, values) {
  // Every vendor is sent: an emptied field removes that vendor's template.
  const vendor_attributes = Object.fromEntries(VENDORS.map((v) => [v, values[templateField(v)] ?? '']));
  try {
    return await api('PUT', `/api/services/${p.id}`, { body: { vendor_attributes } });
  } catch (err) {
    const m = /^vendor_attributes: ([a-z-]+): (.+)$/.exec(err?.message ?? '');
    if (!m || !VENDORS.includes(m[1])) throw err;
    // Named after the field, so the form shows it beside the vendor's textarea.
    throw new ApiError(err.status, `${templateField(m[1])} ${templateProblem(m[2])}`);
  }
}

export function PlansPage() {
  const state = useLoad(() => allPages('/api/services'), []);
  const reload = () => {
    forget('plans');
    state.reload();
  };
  return html`<section>
    <div class="page-head"><h1>${t('Plans')}</h1>
      ${
        session.isAdmin &&
        html`<${ActionDialog} label="New plan" fields=${planFields()} run=${(v) => api('POST', '/api/services', { body: withTiers(v) })}
        onDone=${(res) => {
          notify(`Plan ${res.data.name} created`);
          reload();
        }} />`
      }
    </div>
    <${Loaded} state=${state}>${(rows) =>
      html`<${Table} rows=${rows} columns=${[
        ['name', 'Name'],
        ['id', 'Id'],
        ['price', 'Price', (p) => money(p.price, p.currency)],
        ['duration_days', 'Days'],
        ['rate_limit', 'Rate limit'],
        ['pool_name', 'Pool'],
        ['daily_quota_gb', 'Daily GB'],
        ['monthly_quota_gb', 'Monthly GB'],
        ['fup_tiers', 'Fair use', (p) => html`<${TierList} tiers=${p.fup_tiers} />`],
        ...(session.isAdmin
          ? [
              [
                'actions',
                'Actions',
                (p) => html`
        <${ActionDialog} label=${t('Edit {name}', { name: p.name })} fields=${planFields(p)} run=${(v) => api('PUT', `/api/services/${p.id}`, { body: withTiers(v) })} onDone=${reload} />
        <${ActionDialog} label=${t('RADIUS attributes of {name}', { name: p.name })} fields=${templateFields(p)} run=${(v) => saveTemplates(p, v)}
          onDone=${() => {
            notify(t('Attributes of {name} saved', { name: p.name }));
            reload();
          }} />
        <${ActionDialog} label=${t('Retire {name}', { name: p.name })} danger confirm="The plan is retired (refused while subscribers use it)."
          run=${() => api('DELETE', `/api/services/${p.id}`)} onDone=${reload} />`,
              ],
            ]
          : []),
      ]} />`}</${Loaded}>
  </section>`;
}

// ---- access servers ---------------------------------------------------------------------------

/** The vendor profiles of the API (docs/network-access.md, "Vendor profiles"). */
const VENDORS = ['mikrotik', 'accel-ppp', 'cisco', 'juniper', 'huawei', 'nokia', 'generic'];
/** Makers' names as they write them; `generic` is a word to translate. */
const VENDOR_NAMES = {
  mikrotik: 'MikroTik',
  'accel-ppp': 'Accel-PPP',
  cisco: 'Cisco',
  juniper: 'Juniper',
  huawei: 'Huawei',
  nokia: 'Nokia',
};
const VENDOR_OPTIONS = VENDORS.map((v) => ({ value: v, label: VENDOR_NAMES[v] ?? 'generic (standard attributes)' }));

addTexts(
  { ar: { Vendor: 'المورّد', "CoA port (empty: the vendor's)": 'منفذ CoA (فارغ: منفذ المورّد)' } },
  {
    vendor: ['Vendor', 'المورّد'],
    walled_garden_vendor_attributes: [
      'Walled garden RADIUS attributes per vendor',
      'سمات RADIUS للحديقة المسوّرة لكل مورّد',
    ],
  },
);

const nasFields = (n = {}) => [
  { name: 'name', label: 'Name', required: !n.id, value: n.name },
  { name: 'ip_address', label: 'IPv4 address', required: !n.id, value: n.ip_address },
  { name: 'secret', label: n.id ? 'RADIUS secret (empty: keep)' : 'RADIUS secret', type: 'password', required: !n.id },
  { name: 'type', label: 'Type', type: 'select', options: opt(['mikrotik', 'other']), value: n.type ?? 'mikrotik' },
  { name: 'vendor', label: 'Vendor', type: 'select', options: VENDOR_OPTIONS, value: n.vendor ?? 'mikrotik' },
  n.id
    ? { name: 'coa_port', label: 'CoA port', type: 'int', min: 1, max: 65535, value: n.coa_port }
    : { name: 'coa_port', label: "CoA port (empty: the vendor's)", type: 'int', min: 1, max: 65535 },
  { name: 'api_port', label: 'Router API port', type: 'int', min: 1, max: 65535, value: n.api_port },
  { name: 'api_username', label: 'Router API user', value: n.api_username },
  { name: 'api_password', label: 'Router API password (empty: keep)', type: 'password' },
  { name: 'description', label: 'Description', value: n.description },
];

export function NasPage() {
  const state = useLoad(() => allPages('/api/nas'), []);
  const reload = () => {
    forget('nas');
    state.reload();
  };
  return html`<section>
    <div class="page-head"><h1>${t('Access servers')}</h1>
      <${ActionDialog} label="New access server" fields=${nasFields()} run=${(v) => api('POST', '/api/nas', { body: v })} onDone=${reload} />
    </div>
    <${Loaded} state=${state}>${(rows) =>
      html`<${Table} rows=${rows} empty="No access server yet." columns=${[
        ['name', 'Name'],
        ['ip_address', 'Address'],
        ['type', 'Type'],
        ['vendor', 'Vendor'],
        ['coa_port', 'CoA port'],
        ['api_port', 'API port'],
        ['description', 'Description'],
        [
          'actions',
          'Actions',
          (n) => html`
        <${ActionDialog} label=${t('Edit {name}', { name: n.name })} fields=${nasFields(n)} run=${(v) => api('PUT', `/api/nas/${n.id}`, { body: v })} onDone=${reload} />
        <${ActionDialog} label=${t('Remove {name}', { name: n.name })} danger confirm="FreeRADIUS stops accepting this server." run=${() => api('DELETE', `/api/nas/${n.id}`)} onDone=${reload} />`,
        ],
      ]} />`}</${Loaded}>
  </section>`;
}

// ---- managers ---------------------------------------------------------------------------------

/**
 * Creating an admin and turning off another manager's two-factor sign-in ask an admin who has it on
 * for a current code of its own (docs/two-factor.md): a stolen token alone cannot do them.
 */
const ownCodeField = (name, required, hint) => ({ name, label: 'Your two-factor code', required, hint: t(hint) });

const permissionOptions = (permissions) =>
  permissions.map((p) => ({ value: p, label: p.replace('subscribers.', '').replace(/_/g, ' ') }));

/** A reseller's name in the resellers the console can read; its number when it is not among them. */
const resellerName = (rows, id) =>
  id === null || id === undefined ? '—' : (rows.find((r) => r.id === id)?.name ?? `#${id}`);

/** What an admin changes of another manager: its reseller, its permissions, whether it may sign in. */
const editFields = (m, d) => [
  ...(m.role === 'admin'
    ? []
    : [
        {
          name: 'reseller_id',
          label: 'Reseller',
          type: 'select',
          numeric: true,
          options: options(d.resellers),
          value: m.reseller_id,
          required: m.role === 'reseller',
        },
        {
          name: 'permissions',
          label: 'Permissions',
          type: 'checkboxes',
          value: m.permissions ?? [],
          options: permissionOptions(d.permissions),
        },
      ]),
  { name: 'active', label: 'Active (may sign in)', type: 'checkbox', value: m.active !== false },
];

/** A new password; an admin's asks for the caller's own two-factor code when it has it on. */
const passwordFields = (m, ownTwoFactor) => [
  { name: 'password', label: 'New password (8 or more)', type: 'password', required: true },
  ...(m.role === 'admin' && ownTwoFactor
    ? [ownCodeField('two_factor_code', true, 'The 6 digits your authenticator app shows, or a recovery code')]
    : []),
];

export function ManagersPage() {
  // The permissions are the API's own list (GET /api/permissions), so the console never offers a stale one.
  const state = useLoad(
    async () => ({
      rows: await allPages('/api/managers'),
      resellers: await allPages('/api/resellers'),
      permissions: (await api('GET', '/api/permissions')).data,
      ownTwoFactor: (await api('GET', '/api/auth/two-factor')).data.enabled,
    }),
    [],
  );
  const fields = (rs, permissions, ownTwoFactor) => [
    { name: 'username', label: 'Username', required: true },
    { name: 'password', label: 'Password (8 or more)', type: 'password', required: true },
    { name: 'role', label: 'Role', type: 'select', options: opt(['reseller', 'user', 'admin']), required: true },
    { name: 'reseller_id', label: 'Reseller', type: 'select', numeric: true, options: options(rs) },
    {
      name: 'permissions',
      label: 'Permissions (admins hold all)',
      type: 'checkboxes',
      value: ['subscribers.view'],
      options: permissionOptions(permissions),
    },
    ...(ownTwoFactor
      ? [
          ownCodeField(
            'two_factor_code',
            false,
            'Needed to create an admin: the 6 digits your authenticator app shows, or a recovery code',
          ),
        ]
      : []),
  ];
  return html`<section>
    <div class="page-head"><h1>${t('Managers')}</h1>
      <${Loaded} state=${state}>${(
        d,
      ) => html`<${ActionDialog} label="New manager" fields=${fields(d.resellers, d.permissions, d.ownTwoFactor)}
        run=${(v) => api('POST', '/api/managers', { body: v })} onDone=${() => {
          notify('Manager created');
          state.reload();
        }} />`}</${Loaded}>
    </div>
    <${Loaded} state=${state}>${(d) =>
      html`<${Table} rows=${d.rows} columns=${[
        ['username', 'Username'],
        ['role', 'Role'],
        ['reseller_id', 'Reseller', (m) => resellerName(d.resellers, m.reseller_id)],
        ['active', 'Active', (m) => t(m.active === false ? 'no' : 'yes')],
        ['permissions', 'Permissions', (m) => (m.permissions ?? []).join(', ')],
        ['two_factor', 'Two-factor sign-in', (m) => t(m.two_factor ? 'on' : 'off')],
        [
          'actions',
          'Actions',
          (m) =>
            m.id !== session.claims.managerId &&
            html`${
              // A lost phone: the admin turns it off, the manager signs in with its password and sets it up again.
              m.two_factor &&
              html`<${ActionDialog} label=${`Turn off two-factor for ${m.username}`}
              confirm=${t('They sign in with the password alone until they set it up again.')}
              fields=${d.ownTwoFactor ? [ownCodeField('code', true, 'The 6 digits your authenticator app shows, or a recovery code')] : []}
              run=${(v) => api('POST', '/api/auth/two-factor/disable', { body: { manager_id: m.id, ...v } })} onDone=${state.reload} />`
            }
            <${ActionDialog} label=${t('Edit {name}', { name: m.username })} fields=${editFields(m, d)}
              run=${(v) => api('PUT', `/api/managers/${m.id}`, { body: v })} onDone=${() => {
                notify(t('Manager {name} saved', { name: m.username }));
                state.reload();
              }} />
            <${ActionDialog} label=${t('Reset the password of {name}', { name: m.username })}
              confirm=${t('Their sessions end; they sign in with the new password.')}
              fields=${passwordFields(m, d.ownTwoFactor)}
              run=${(v) => api('PUT', `/api/managers/${m.id}`, { body: v })} onDone=${() => notify(t('Password of {name} reset', { name: m.username }))} />
            <${ActionDialog} label=${`Delete ${m.username}`} danger
        confirm="The account can no longer sign in." run=${() => api('DELETE', `/api/managers/${m.id}`)} onDone=${state.reload} />`,
        ],
      ]} />`}</${Loaded}>
  </section>`;
}

addTexts(
  {
    ar: {
      nt: 'NT-Password',
      cleartext: 'نص صريح',
      whatsapp: 'WhatsApp',
      telegram: 'Telegram',
      stripe: 'Stripe',
      reject: 'رفض',
      walled_garden: 'الحديقة المسوّرة',
      'New reseller': 'موزّع جديد',
      'Commissions of {name}': 'عمولات {name}',
      'Details of {name}': 'تفاصيل {name}',
      'Balance of {name}': 'رصيد {name}',
      'Credit or debit {name}': 'إضافة إلى رصيد {name} أو خصم منه',
      'The reseller balance changes through the ledger.': 'يتغيّر رصيد الموزّع عبر الدفتر.',
      'The amount moves from your own balance.': 'ينتقل المبلغ من رصيدك.',
      'Balance updated': 'حُدّث الرصيد',
      Balance: 'الرصيد',
      invoiced: 'المفوترة',
      'two letters; ar, fa, he and ur lay the console and documents out right to left':
        'حرفان؛ ar و fa و he و ur تعرض لوحة التحكم والمستندات من اليمين إلى اليسار',
      'one RADIUS pair a line, e.g. Mikrotik-Rate-Limit := "256k/256k"':
        'زوج RADIUS واحد في كل سطر، مثل Mikrotik-Rate-Limit := "256k/256k"',
      'comma-separated, e.g. 3, 1, 0': 'مفصولة بفواصل، مثل 3, 1, 0',
      'empty: never': 'فارغ: أبدًا',
      'set; leave empty to keep': 'معيّن؛ اتركه فارغًا للإبقاء عليه',
      'not set': 'غير معيّن',
      'Save settings': 'حفظ الإعدادات',
      'Nothing changed': 'لم يتغيّر شيء',
      'Settings saved': 'حُفظت الإعدادات',
    },
  },
  {
    allow_private_targets: ['Allow private addresses', 'السماح بالعناوين الخاصة'],
    accounting_interim_minutes: ['Accounting interim (minutes)', 'فاصل تحديث المحاسبة (دقائق)'],
    reconcile_minutes: ['Reconcile every (minutes, 0: never)', 'المطابقة كل (دقائق، 0: أبدًا)'],
    accounting_retention_months: ['Accounting retention (months)', 'مدة الاحتفاظ بالمحاسبة (أشهر)'],
    cards_reseller_charge: ["Cards' charge to the reseller", 'رسوم البطاقات على الموزّع'],
    payment_provider: ['Payment provider', 'مزوّد الدفع'],
    stripe_secret_key: ['Stripe secret key', 'المفتاح السري لـ Stripe'],
    stripe_webhook_secret: ['Stripe webhook secret', 'سر خطاف Stripe'],
    stripe_api_base_url: ['Stripe API base URL', 'عنوان URL الأساسي لـ API Stripe'],
    payment_currencies: ['Payment currencies', 'عملات الدفع'],
  },
);
