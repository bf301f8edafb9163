/**
 * System settings: one table of key -> JSON value. The definitions here are the only place that
 * knows the keys, their types (an ajv schema, also used by PUT /api/settings) and defaults.
 * Keys marked `secret` are encrypted at rest and never returned by reads.
 */
import { inArray, sql } from 'drizzle-orm';
import { decrypt, encrypt } from './auth/secrets';
import { db as poolDb, type DbOrTx } from './db/client';
import { settings as settingsTable } from './db/schema';
import type { JsonSchema } from './http/route';
import { BLOCKED_ACCESS_MODES, DEFAULT_GARDEN_ATTRIBUTES, type BlockedAccessMode } from './domain/access';
import { PAPER_NAMES } from './paper';
import { SUFFIXED_VENDORS } from './vendors/profiles';

interface SettingDef {
  schema: JsonSchema;
  default: unknown;
  secret?: boolean;
  description: string;
}

/** Largest logo image kept in operator_logo_url (bytes, before base64). */
export const LOGO_MAX_BYTES = 256 * 1024;

const text = (maxLength: number): JsonSchema => ({ type: 'string', maxLength });

export const SETTING_DEFS = {
  currency: {
    schema: { type: 'string', pattern: '^[A-Z]{3}$' },
    default: 'USD',
    description: 'System currency (ISO 4217)',
  },
  default_country: {
    schema: { type: 'string', pattern: '^[A-Z]{2}$' },
    default: 'IQ',
    description:
      'Country (ISO 3166 alpha-2) of phone numbers written without a country code: phones are stored in E.164 from it',
  },
  default_reseller_id: {
    schema: { type: ['integer', 'null'], minimum: 1, maximum: 2147483647 },
    default: null as number | null,
    description:
      'Reseller of the subscribers an admin or operator staff creates without reseller_id; "Direct subscribers" is created the first time one is needed (docs/operators-first-day.md)',
  },
  default_tax_rate: {
    schema: { type: 'number', minimum: 0, maximum: 100 },
    default: 0,
    description: 'Percent applied when an invoice names no tax_rate',
  },
  default_due_days: {
    schema: { type: 'integer', minimum: 0, maximum: 365 },
    default: 7,
    description: 'Days from issue to due date',
  },
  default_paper_size: {
    schema: { type: 'string', enum: PAPER_NAMES },
    default: 'A4',
    description: 'Paper of PDFs when the request names none',
  },
  commission_basis: {
    schema: { type: 'string', enum: ['paid', 'invoiced'] },
    default: 'paid',
    description: 'Which invoices count towards total_commission',
  },
  invoice_prefix: {
    schema: { type: 'string', pattern: '^[A-Z0-9]{1,10}$' },
    default: 'INV',
    description: 'Prefix of invoice numbers',
  },
  rename_fee: {
    schema: { type: 'number', minimum: 0, maximum: 1e9 },
    default: 0,
    description: 'Charged per rename, in the system currency',
  },
  refill_fee: {
    schema: { type: 'number', minimum: 0, maximum: 1e9 },
    default: 0,
    description: 'Charged per quota refill, in the system currency',
  },
  expiring_days: {
    schema: { type: 'integer', minimum: 1, maximum: 365 },
    default: 7,
    description: 'Window of the `expiring` subscriber filter',
  },
  radius_password_mode: {
    schema: { type: 'string', enum: ['nt', 'cleartext'] },
    default: 'nt',
    description: 'How subscriber passwords are written to radcheck',
  },
  language: {
    schema: { type: 'string', pattern: '^[a-z]{2}$' },
    default: 'en',
    description: 'Language of documents (ar, fa, he, ur are laid out right-to-left)',
  },
  operator_name: { schema: text(200), default: 'Your ISP', description: 'Branding on documents' },
  operator_address: { schema: text(500), default: '', description: 'Branding on documents' },
  operator_phone: { schema: text(50), default: '', description: 'Branding on documents' },
  operator_email: { schema: text(200), default: '', description: 'Branding on documents' },
  operator_logo_url: {
    // A data: URL up to LOGO_MAX_BYTES, base64; an http(s) URL is fetched once and stored as one.
    schema: text(Math.ceil((LOGO_MAX_BYTES * 4) / 3) + 100),
    default: '',
    description:
      'Logo on documents: a data:image URL, or an http(s) URL the server fetches once (address policy) and keeps as data',
  },
  how_to_pay: { schema: text(4000), default: '', description: 'How-to-pay block of documents' },
  messaging_provider: {
    schema: { type: 'string', enum: ['none', 'whatsapp', 'telegram'] },
    default: 'none',
    description: 'Chat channel for invoice delivery',
  },
  whatsapp_access_token: { schema: text(1000), default: '', secret: true, description: 'WhatsApp Cloud API token' },
  whatsapp_phone_number_id: { schema: text(100), default: '', description: 'WhatsApp sender phone number id' },
  whatsapp_base_url: {
    schema: text(500),
    default: 'https://graph.facebook.com/v21.0',
    description: 'WhatsApp Cloud API base URL',
  },
  telegram_bot_token: { schema: text(500), default: '', secret: true, description: 'Telegram Bot API token' },
  allow_private_targets: {
    schema: { type: 'boolean' },
    default: false,
    description:
      'Let the server call loopback, private or reserved addresses (chat provider URLs, the logo fetch); off: public addresses only',
  },
  telegram_base_url: {
    schema: text(500),
    default: 'https://api.telegram.org',
    description: 'Telegram Bot API base URL',
  },
  coa_max_in_flight_per_nas: {
    schema: { type: 'integer', minimum: 1, maximum: 1024 },
    default: 64,
    description: 'CoA/Disconnect requests outstanding at once towards one access server; the rest queue',
  },
  coa_retransmits: {
    schema: { type: 'integer', minimum: 0, maximum: 5 },
    default: 1,
    description: 'Retransmissions of an unanswered CoA/Disconnect request before the router-API fallback',
  },
  accounting_interim_minutes: {
    schema: { type: 'integer', minimum: 1, maximum: 1440 },
    default: 5,
    description:
      'Accounting Interim-Update interval of the access servers; a session silent for 2 x this + 1 minutes is closed as Stale-Session',
  },
  reconcile_minutes: {
    schema: { type: 'integer', minimum: 0, maximum: 10080 },
    default: 0,
    description: 'Compare each access server with API credentials against accounting every N minutes (0 = never)',
  },
  accounting_retention_months: {
    schema: { type: 'integer', minimum: 0, maximum: 1200 },
    default: 13,
    description:
      'Closed accounting sessions (radacct) that ended before the first day of the month this many months back are deleted (0 = keep for ever)',
  },
  blocked_access: {
    schema: { type: 'string', enum: [...BLOCKED_ACCESS_MODES] },
    default: 'reject' as BlockedAccessMode,
    description:
      'What a blocked subscriber (expired, quota used up, suspended) gets: Access-Reject, or Access-Accept into the walled garden',
  },
  walled_garden_attributes: {
    schema: text(4000),
    default: DEFAULT_GARDEN_ATTRIBUTES,
    description: 'RADIUS reply pairs of the walled garden, one `Attribute := "value"` a line',
  },
  walled_garden_vendor_attributes: {
    schema: {
      type: 'object',
      properties: Object.fromEntries(SUFFIXED_VENDORS.map((v) => [v, text(4000)])),
      additionalProperties: false,
    },
    default: {} as Record<string, string>,
    description:
      "The walled garden's reply pairs for a NAS of another vendor than MikroTik, per vendor (walled_garden_attributes is MikroTik's); a vendor left out gets its profile's default",
  },
  reminders_enabled: {
    schema: { type: 'boolean' },
    default: false,
    description: 'Send expiry reminders through the chat provider',
  },
  reminder_days: {
    schema: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 60 }, maxItems: 10, uniqueItems: true },
    default: [3, 1, 0] as number[],
    description: 'Days before expiry a reminder goes out (0 = on the last day)',
  },
  suspend_overdue_after_days: {
    schema: { type: ['integer', 'null'], minimum: 0, maximum: 365 },
    default: null as number | null,
    description: 'Block a subscriber whose invoice is overdue for more than this many days (null = never)',
  },
  cards_reseller_charge: {
    schema: { type: 'string', enum: ['creation', 'redemption'] },
    default: 'creation',
    description:
      "When a reseller's card batch is charged to its balance: all at creation, or each card as it is redeemed",
  },
  require_two_factor: {
    schema: { type: 'boolean' },
    default: false,
    description:
      'Every manager signs in with a TOTP code; one without two-factor sign-in gets a token that can only set it up (docs/two-factor.md)',
  },
  payment_provider: {
    schema: { type: 'string', enum: ['none', 'stripe'] },
    default: 'none',
    description: 'Online payment provider of the receipt and portal "Pay" buttons (docs/payments.md)',
  },
  stripe_secret_key: { schema: text(500), default: '', secret: true, description: 'Stripe secret API key' },
  stripe_webhook_secret: {
    schema: text(500),
    default: '',
    secret: true,
    description: 'Stripe webhook signing secret (whsec_...)',
  },
  stripe_api_base_url: {
    schema: text(500),
    default: 'https://api.stripe.com',
    description: 'Stripe API base URL (a local double in tests)',
  },
  payment_currencies: {
    schema: { type: 'array', items: { type: 'string', pattern: '^[A-Z]{3}$' }, maxItems: 50, uniqueItems: true },
    default: [] as string[],
    description: 'Currencies the provider may charge (empty: any); an invoice in another has no Pay button',
  },
  self_care_enabled: {
    schema: { type: 'boolean' },
    default: true,
    description: 'Subscribers sign in at /my with their PPPoE username and password (docs/self-care.md)',
  },
  self_care_code_sign_in: {
    schema: { type: 'boolean' },
    default: false,
    description: 'Self-care also signs in with a one-time code sent to the phone over the chat channel',
  },
  self_care_payments: {
    schema: { type: 'boolean' },
    default: true,
    description: 'Self-care: pay invoices online through the payment provider',
  },
  self_care_renew: { schema: { type: 'boolean' }, default: true, description: 'Self-care: renew early' },
  self_care_topup: {
    schema: { type: 'boolean' },
    default: true,
    description: 'Self-care: buy a data top-up of self_care_data_topups from the wallet',
  },
  self_care_redeem: { schema: { type: 'boolean' }, default: true, description: 'Self-care: redeem a recharge card' },
  self_care_change_plan: {
    schema: { type: 'boolean' },
    default: true,
    description: 'Self-care: move to a plan marked self_service',
  },
  self_care_password: {
    schema: { type: 'boolean' },
    default: true,
    description: 'Self-care: change the PPPoE password',
  },
  self_care_auto_renew: {
    schema: { type: 'boolean' },
    default: true,
    description: 'Self-care: turn auto-renew on or off',
  },
  self_care_data_topups: {
    schema: {
      type: 'array',
      maxItems: 20,
      items: {
        type: 'object',
        properties: {
          gb: { type: 'number', exclusiveMinimum: 0, maximum: 100000 },
          price: { type: 'number', minimum: 0, maximum: 1e9 },
        },
        required: ['gb', 'price'],
        additionalProperties: false,
      },
    },
    default: [] as { gb: number; price: number }[],
    description:
      'Data top-ups a subscriber may buy in self-care, priced in the system currency and paid from the wallet',
  },
} satisfies Record<string, SettingDef>;

export type SettingKey = keyof typeof SETTING_DEFS;
type Widen<T> = T extends string ? string : T extends number ? number : T;
export type Settings = { [K in SettingKey]: Widen<(typeof SETTING_DEFS)[K]['default']> };

const defs = SETTING_DEFS as Record<SettingKey, SettingDef>;
export const SETTING_KEYS = Object.keys(SETTING_DEFS) as SettingKey[];

/** Body schema of PUT /api/settings: any subset of the keys; an unknown key is refused. */
export const settingsUpdateSchema: JsonSchema = {
  type: 'object',
  properties: Object.fromEntries(SETTING_KEYS.map((k) => [k, defs[k].schema])),
  additionalProperties: { not: {} },
  minProperties: 1,
};

export function isSecretSetting(key: SettingKey): boolean {
  return defs[key].secret === true;
}

/** Every setting with its stored value or default; secrets decrypted (for the services' own use). */
export async function loadSettings(db: DbOrTx, keys: SettingKey[] = SETTING_KEYS): Promise<Settings> {
  const rows = await db.select().from(settingsTable).where(inArray(settingsTable.key, keys));
  const stored = new Map(rows.map((r) => [r.key, r.value]));
  const out: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    const value = stored.has(key) ? stored.get(key) : defs[key].default;
    out[key] = isSecretSetting(key) && typeof value === 'string' && value ? decrypt(value) : value;
  }
  return out as Settings;
}

/**
 * The settings a request checks on every call (self-care's switches, the operator's contact), kept
 * in this process's memory so a request costs no settings read. A change through PUT /api/settings
 * is seen at once by the process that made it (forgetCachedSettings after the commit) and by the
 * others when `settings.changed` reaches them (their services call forgetCachedSettings); anything
 * else that writes the table (a restore, the default reseller) is seen within CACHE_MS. Secrets are
 * never cached: they are read where they are used.
 */
const CACHE_MS = 5_000;
let cacheGeneration = 0;
let cacheBornAt = 0;
let cached = new Map<SettingKey, unknown>();

/** Drops the cached settings; a load under way when it happens is not kept either. */
export function forgetCachedSettings(): void {
  cacheGeneration++;
  cacheBornAt = Date.now();
  cached = new Map();
}

/** `keys` (no secret among them) from the cache, the missing ones read and kept. */
export async function cachedSettings<K extends SettingKey>(keys: K[]): Promise<Pick<Settings, K>> {
  if (Date.now() - cacheBornAt > CACHE_MS) forgetCachedSettings();
  const out: Partial<Record<K, unknown>> = {};
  const missing: K[] = [];
  for (const k of keys) {
    if (cached.has(k)) out[k] = cached.get(k);
    else missing.push(k);
  }
  if (missing.length) {
    if (missing.some(isSecretSetting)) throw new Error(`secret settings are not cached: ${missing.join(', ')}`);
    const generation = cacheGeneration;
    // The pool, never a transaction: what is kept must be committed.
    const loaded = await loadSettings(poolDb(), missing);
    // Read before a change committed: it answers this request but is not kept for the next ones.
    const keep = generation === cacheGeneration;
    for (const k of missing) {
      out[k] = loaded[k];
      if (keep) cached.set(k, loaded[k]);
    }
  }
  return out as Pick<Settings, K>;
}

/** What GET /api/settings shows: secrets are replaced by whether they are set. */
export function publicView(all: Settings): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    out[key] = isSecretSetting(key) ? (all[key] ? '********' : '') : all[key];
  }
  return out;
}

export async function saveSettings(db: DbOrTx, changes: Partial<Record<SettingKey, unknown>>): Promise<void> {
  const rows = Object.entries(changes).map(([key, value]) => ({
    key,
    // A JSON null (suspend_overdue_after_days: never) is stored as such: the column is NOT NULL.
    value:
      value === null
        ? sql`'null'::jsonb`
        : isSecretSetting(key as SettingKey) && typeof value === 'string' && value
          ? encrypt(value)
          : value,
    updatedAt: new Date(),
  }));
  if (rows.length === 0) return;
  await db
    .insert(settingsTable)
    .values(rows)
    .onConflictDoUpdate({
      target: settingsTable.key,
      set: { value: sql.raw('excluded.value'), updatedAt: new Date() },
    });
}
