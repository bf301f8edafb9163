/**
 * The settings page (GET/PUT /api/settings, admins): the settings grouped in sections, each saved
 * on its own (only the values that changed are sent), the language picked from the languages the
 * console has, and the logo uploaded from a file with a preview. The logo is sent as the `data:`
 * image the server keeps in `operator_logo_url` (at most 256 KB: PNG, JPEG, GIF or WebP), so no
 * document or browser ever fetches it from elsewhere. A setting no section names is shown under
 * "Other", so a new one is never out of reach.
 */
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { addTexts, fieldLabel, installedLanguages, language as pageLanguage, t } from './i18n.js';
import { PAPERS } from './invoices.js';
import { Form, html, Loaded, notify, useLoad } from './ui.js';

addTexts(
  {
    ar: {
      'Company and branding': 'الشركة والهوية',
      'Billing and tax': 'الفوترة والضريبة',
      'Lifecycle and reminders': 'دورة الاشتراك والتذكيرات',
      'Access and walled garden': 'الوصول والحديقة المسوّرة',
      Chat: 'المحادثة',
      Security: 'الأمان',
      'Self-care': 'الخدمة الذاتية للمشتركين',
      creation: 'عند الإنشاء',
      redemption: 'عند الاستخدام',
      '{ "huawei": "Huawei-PortalURL := \\"http://portal/\\"" }: one RADIUS pair a line per vendor':
        '{ "huawei": "Huawei-PortalURL := \\"http://portal/\\"" }: زوج RADIUS واحد في كل سطر لكل مورّد',
      'empty: "Direct subscribers", made on first use': 'فارغ: «المشتركون المباشرون»، يُنشأ عند أول استخدام',
      '[{ "gb": 5, "price": 2.5 }]: the data top-ups a subscriber may buy from the wallet':
        '[{ "gb": 5, "price": 2.5 }]: باقات البيانات الإضافية التي يشتريها المشترك من محفظته',
      Other: 'أخرى',
      'Save {section}': 'حفظ {section}',
      Logo: 'الشعار',
      'Logo (PNG, JPEG, GIF or WebP, at most 256 KB)': 'الشعار (PNG أو JPEG أو GIF أو WebP، بحد أقصى 256 كيلوبايت)',
      'No logo yet.': 'لا يوجد شعار بعد.',
      'Remove the logo': 'إزالة الشعار',
      'The logo as documents show it': 'الشعار كما يظهر في المستندات',
      'The logo is larger than 256 KB.': 'الشعار أكبر من 256 كيلوبايت.',
      'The logo must be a PNG, JPEG, GIF or WebP image.': 'يجب أن يكون الشعار صورة PNG أو JPEG أو GIF أو WebP.',
      'Settings saved': 'تم حفظ الإعدادات',
      'Nothing changed': 'لم يتغيّر شيء',
      'set; leave empty to keep': 'مضبوط؛ اتركه فارغًا للإبقاء عليه',
      'not set': 'غير مضبوط',
      'ar, fa, he and ur lay the console and documents out right to left':
        'العربية والفارسية والعبرية والأردية تعرض وحدة التحكم والمستندات من اليمين إلى اليسار',
      'comma-separated, e.g. USD, EUR; empty: any': 'مفصولة بفواصل، مثل USD, EUR؛ فارغ: أي عملة',
    },
  },
  {
    payment_provider: ['Online payment provider', 'مزوّد الدفع الإلكتروني'],
    default_country: ['Country of local phone numbers', 'بلد أرقام الهواتف المحلية'],
    default_reseller_id: ['Reseller of direct subscribers', 'موزّع المشتركين المباشرين'],
    self_care_enabled: ['Self-care portal on', 'تفعيل بوابة الخدمة الذاتية'],
    self_care_code_sign_in: ['Sign-in by a code sent by chat', 'تسجيل الدخول برمز يُرسل عبر المحادثة'],
    self_care_payments: ['Pay invoices online', 'دفع الفواتير إلكترونيًا'],
    self_care_renew: ['Renew', 'التجديد'],
    self_care_topup: ['Buy data top-ups', 'شراء بيانات إضافية'],
    self_care_redeem: ['Redeem cards', 'استخدام البطاقات'],
    self_care_change_plan: ['Change plan', 'تغيير الباقة'],
    self_care_password: ['Change password', 'تغيير كلمة المرور'],
    self_care_auto_renew: ['Turn auto-renew on or off', 'تشغيل التجديد التلقائي أو إيقافه'],
    self_care_data_topups: ['Data top-ups offered', 'باقات البيانات الإضافية المعروضة'],
    payment_currencies: ['Currencies paid online', 'العملات المدفوعة إلكترونيًا'],
    stripe_secret_key: ['Stripe secret key', 'المفتاح السري لـ Stripe'],
    stripe_webhook_secret: ['Stripe webhook secret', 'سر خطاف الويب لـ Stripe'],
    stripe_api_base_url: ['Stripe API address', 'عنوان واجهة Stripe'],
    cards_reseller_charge: ['Charge resellers for cards at', 'تحصيل ثمن البطاقات من الموزّعين عند'],
  },
);

const opt = (values) => values.map((v) => ({ value: v, label: v }));

/** The sections, in the order an operator sets up an installation. */
const SECTIONS = [
  [
    'Company and branding',
    [
      'operator_name',
      'operator_address',
      'operator_phone',
      'operator_email',
      'operator_logo_url',
      'language',
      'default_country',
    ],
  ],
  [
    'Billing and tax',
    [
      'currency',
      'default_reseller_id',
      'default_tax_rate',
      'default_due_days',
      'invoice_prefix',
      'default_paper_size',
      'how_to_pay',
      'commission_basis',
      'rename_fee',
      'refill_fee',
      'cards_reseller_charge',
    ],
  ],
  ['Lifecycle and reminders', ['expiring_days', 'reminders_enabled', 'reminder_days', 'suspend_overdue_after_days']],
  [
    'Access and walled garden',
    [
      'blocked_access',
      'walled_garden_attributes',
      'walled_garden_vendor_attributes',
      'radius_password_mode',
      'coa_max_in_flight_per_nas',
      'coa_retransmits',
      'accounting_interim_minutes',
      'reconcile_minutes',
      'accounting_retention_months',
    ],
  ],
  [
    'Chat',
    [
      'messaging_provider',
      'whatsapp_access_token',
      'whatsapp_phone_number_id',
      'whatsapp_base_url',
      'telegram_bot_token',
      'telegram_base_url',
    ],
  ],
  [
    'Payments',
    ['payment_provider', 'payment_currencies', 'stripe_secret_key', 'stripe_webhook_secret', 'stripe_api_base_url'],
  ],
  [
    'Self-care',
    [
      'self_care_enabled',
      'self_care_code_sign_in',
      'self_care_payments',
      'self_care_renew',
      'self_care_topup',
      'self_care_redeem',
      'self_care_change_plan',
      'self_care_password',
      'self_care_auto_renew',
      'self_care_data_topups',
    ],
  ],
  ['Security', ['require_two_factor', 'allow_private_targets']],
];

/** A language's own name ("العربية"), with its code. */
function languageName(code) {
  try {
    return `${new Intl.DisplayNames([code], { type: 'language' }).of(code)} (${code})`;
  } catch {
    return code;
  }
}

const SETTING_TYPES = {
  default_paper_size: { type: 'select', options: opt(PAPERS) },
  commission_basis: { type: 'select', options: opt(['paid', 'invoiced']) },
  cards_reseller_charge: { type: 'select', options: opt(['creation', 'redemption']) },
  radius_password_mode: { type: 'select', options: opt(['nt', 'cleartext']) },
  messaging_provider: { type: 'select', options: opt(['none', 'whatsapp', 'telegram']) },
  payment_provider: { type: 'select', options: opt(['none', 'stripe']) },
  how_to_pay: { type: 'textarea' },
  operator_address: { type: 'textarea' },
  default_due_days: { type: 'int' },
  expiring_days: { type: 'int' },
  whatsapp_access_token: { type: 'password', secret: true },
  telegram_bot_token: { type: 'password', secret: true },
  stripe_secret_key: { type: 'password', secret: true },
  stripe_webhook_secret: { type: 'password', secret: true },
  // A one-line input would join the pairs into one line, which the server refuses.
  walled_garden_attributes: {
    type: 'textarea',
    hint: 'one RADIUS pair a line, e.g. Mikrotik-Rate-Limit := "256k/256k"',
  },
  // A list of priced top-ups: edited as JSON, as the per-vendor garden is.
  self_care_data_topups: {
    type: 'textarea',
    json: true,
    hint: '[{ "gb": 5, "price": 2.5 }]: the data top-ups a subscriber may buy from the wallet',
  },
  // An object per vendor: edited as JSON, sent parsed (unparsable text goes as is, and the API's 400 says why).
  walled_garden_vendor_attributes: {
    type: 'textarea',
    json: true,
    hint: '{ "huawei": "Huawei-PortalURL := \\"http://portal/\\"" }: one RADIUS pair a line per vendor',
  },
  blocked_access: { type: 'select', options: opt(['reject', 'walled_garden']) },
  reminder_days: { type: 'ints', hint: 'comma-separated, e.g. 3, 1, 0' },
  payment_currencies: { type: 'words', hint: 'comma-separated, e.g. USD, EUR; empty: any' },
  suspend_overdue_after_days: { type: 'int', hint: 'empty: never' },
  default_reseller_id: { type: 'int', hint: 'empty: "Direct subscribers", made on first use' },
};

/** A setting's input by its stored value when SETTING_TYPES does not name one. */
const typeOf = (value) => (typeof value === 'boolean' ? 'checkbox' : typeof value === 'number' ? 'number' : 'text');
const sameValue = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const fromJson = (text) => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

function fieldOf(key, value) {
  if (key === 'language') {
    const codes = [...new Set([...installedLanguages(), value])];
    return {
      name: key,
      label: fieldLabel(key),
      type: 'select',
      required: true,
      value,
      options: codes.map((c) => ({ value: c, label: languageName(c) })),
      hint: t('ar, fa, he and ur lay the console and documents out right to left'),
    };
  }
  const kind = SETTING_TYPES[key] ?? {};
  const type = kind.type === 'words' ? 'text' : (kind.type ?? typeOf(value));
  return {
    name: key,
    label: fieldLabel(key),
    ...kind,
    type,
    required: type === 'select',
    value: kind.secret
      ? ''
      : kind.type === 'words'
        ? (value ?? []).join(', ')
        : kind.json
          ? JSON.stringify(value, null, 2)
          : value,
    hint: t(kind.secret ? (value ? 'set; leave empty to keep' : 'not set') : (kind.hint ?? '')) || undefined,
  };
}

/** A section's values as the settings' types: a comma list of words (empty: none) becomes an array. */
function typed(values, keys) {
  const out = { ...values };
  for (const key of keys) {
    if (SETTING_TYPES[key]?.json) out[key] = fromJson(out[key]);
    if (SETTING_TYPES[key]?.type === 'words')
      out[key] = String(out[key] ?? '')
        .split(/[\s,]+/)
        .filter(Boolean)
        .map((w) => w.toUpperCase());
  }
  return out;
}

const LOGO_TYPES = /^image\/(png|jpeg|gif|webp)$/;
const LOGO_MAX_BYTES = 256 * 1024;

const readAsDataUrl = (file) =>
  new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });

/** The logo file input and its preview; `logo` is the data: URL to save ('' removes it). */
function LogoPicker({ logo, onChange }) {
  const [error, setError] = useState(null);
  async function picked(e) {
    const file = e.currentTarget.files?.[0];
    setError(null);
    if (!file) return;
    if (!LOGO_TYPES.test(file.type)) return setError(t('The logo must be a PNG, JPEG, GIF or WebP image.'));
    if (file.size > LOGO_MAX_BYTES) return setError(t('The logo is larger than 256 KB.'));
    onChange(await readAsDataUrl(file));
  }
  return html`<div class="field logo">
    <label for="logo-file">${t('Logo (PNG, JPEG, GIF or WebP, at most 256 KB)')}</label>
    <input id="logo-file" type="file" accept="image/png,image/jpeg,image/gif,image/webp" onChange=${picked}
      aria-describedby=${error ? 'logo-error' : undefined} aria-invalid=${error ? 'true' : undefined} />
    ${error && html`<small id="logo-error" class="field-error">${error}</small>`}
    <div class="logo-preview">
      ${logo ? html`<img src=${logo} alt=${t('The logo as documents show it')} />` : html`<span class="muted">${t('No logo yet.')}</span>`}
    </div>
    ${logo && html`<button type="button" class="secondary" onClick=${() => onChange('')}>${t('Remove the logo')}</button>`}
  </div>`;
}

function Section({ title, keys, current, onSaved }) {
  const withLogo = keys.includes('operator_logo_url');
  const [logo, setLogo] = useState(current.operator_logo_url ?? '');
  const fields = keys.filter((k) => k in current && k !== 'operator_logo_url').map((k) => fieldOf(k, current[k]));
  const id = `settings-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return html`<section class="card settings-section" aria-labelledby=${id}>
    <h2 id=${id}>${t(title)}</h2>
    <${Form} className="form columns" fields=${fields} submitLabel=${t('Save {section}', { section: t(title).toLowerCase() })}
      onSubmit=${async (values) => {
        const next = typed(values, keys);
        if (withLogo) next.operator_logo_url = logo;
        const changed = Object.fromEntries(Object.entries(next).filter(([k, v]) => !sameValue(v, current[k])));
        if (Object.keys(changed).length === 0) return notify(t('Nothing changed'));
        await api('PUT', '/api/settings', { body: changed });
        notify(t('Settings saved'));
        onSaved(changed);
      }}>
      ${withLogo && html`<${LogoPicker} logo=${logo} onChange=${setLogo} />`}
    </${Form}>
  </section>`;
}

export function SettingsPage() {
  const state = useLoad(() => api('GET', '/api/settings'), []);
  // The page carries the language (its direction) and the operator's name (the header): a change
  // of either is shown by loading the page again.
  const saved = (changed) => {
    if (('language' in changed && changed.language !== pageLanguage) || 'operator_name' in changed) location.reload();
    else state.reload();
  };
  return html`<section>
    <h1>${t('Settings')}</h1>
    <${Loaded} state=${state}>${(res) => {
      const current = res.data;
      const named = new Set(SECTIONS.flatMap(([, keys]) => keys));
      const others = Object.keys(current).filter((k) => !named.has(k));
      const sections = others.length ? [...SECTIONS, ['Other', others]] : SECTIONS;
      return sections.map(
        ([title, keys]) =>
          html`<${Section} key=${title} title=${title} keys=${keys} current=${current} onSaved=${saved} />`,
      );
    }}</${Loaded}>
  </section>`;
}
