"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.settingsUpdateSchema = exports.SETTING_KEYS = exports.SETTING_DEFS = void 0;
exports.isSecretSetting = isSecretSetting;
exports.loadSettings = loadSettings;
exports.publicView = publicView;
exports.saveSettings = saveSettings;
/**
 * System settings: one table of key -> JSON value. The definitions here are the only place that
 * knows the keys, their types (an ajv schema, also used by PUT /api/settings) and defaults.
 * Keys marked `secret` are encrypted at rest and never returned by reads.
 */
const drizzle_orm_1 = require("drizzle-orm");
const secrets_1 = require("./auth/secrets");
const schema_1 = require("./db/schema");
const paper_1 = require("./paper");
const text = (maxLength) => ({ type: 'string', maxLength });
exports.SETTING_DEFS = {
    currency: { schema: { type: 'string', pattern: '^[A-Z]{3}$' }, default: 'USD', description: 'System currency (ISO 4217)' },
    default_tax_rate: { schema: { type: 'number', minimum: 0, maximum: 100 }, default: 0, description: 'Percent applied when an invoice names no tax_rate' },
    default_due_days: { schema: { type: 'integer', minimum: 0, maximum: 365 }, default: 7, description: 'Days from issue to due date' },
    default_paper_size: { schema: { type: 'string', enum: paper_1.PAPER_NAMES }, default: 'A4', description: 'Paper of PDFs when the request names none' },
    commission_basis: { schema: { type: 'string', enum: ['paid', 'invoiced'] }, default: 'paid', description: 'Which invoices count towards total_commission' },
    invoice_prefix: { schema: { type: 'string', pattern: '^[A-Z0-9]{1,10}$' }, default: 'INV', description: 'Prefix of invoice numbers' },
    rename_fee: { schema: { type: 'number', minimum: 0, maximum: 1e9 }, default: 0, description: 'Charged per rename, in the system currency' },
    refill_fee: { schema: { type: 'number', minimum: 0, maximum: 1e9 }, default: 0, description: 'Charged per quota refill, in the system currency' },
    expiring_days: { schema: { type: 'integer', minimum: 1, maximum: 365 }, default: 7, description: 'Window of the `expiring` subscriber filter' },
    radius_password_mode: { schema: { type: 'string', enum: ['nt', 'cleartext'] }, default: 'nt', description: 'How subscriber passwords are written to radcheck' },
    language: { schema: { type: 'string', pattern: '^[a-z]{2}$' }, default: 'en', description: 'Language of documents (ar, fa, he, ur are laid out right-to-left)' },
    operator_name: { schema: text(200), default: 'Your ISP', description: 'Branding on documents' },
    operator_address: { schema: text(500), default: '', description: 'Branding on documents' },
    operator_phone: { schema: text(50), default: '', description: 'Branding on documents' },
    operator_email: { schema: text(200), default: '', description: 'Branding on documents' },
    operator_logo_url: { schema: text(2000), default: '', description: 'Logo on documents (http(s) or data: URL)' },
    how_to_pay: { schema: text(4000), default: '', description: 'How-to-pay block of documents' },
    messaging_provider: { schema: { type: 'string', enum: ['none', 'whatsapp', 'telegram'] }, default: 'none', description: 'Chat channel for invoice delivery' },
    whatsapp_access_token: { schema: text(1000), default: '', secret: true, description: 'WhatsApp Cloud API token' },
    whatsapp_phone_number_id: { schema: text(100), default: '', description: 'WhatsApp sender phone number id' },
    whatsapp_base_url: { schema: text(500), default: 'https://graph.facebook.com/v21.0', description: 'WhatsApp Cloud API base URL' },
    telegram_bot_token: { schema: text(500), default: '', secret: true, description: 'Telegram Bot API token' },
    telegram_base_url: { schema: text(500), default: 'https://api.telegram.org', description: 'Telegram Bot API base URL' },
    coa_max_in_flight_per_nas: { schema: { type: 'integer', minimum: 1, maximum: 1024 }, default: 64, description: 'CoA/Disconnect requests outstanding at once towards one access server; the rest queue' },
    coa_retransmits: { schema: { type: 'integer', minimum: 0, maximum: 5 }, default: 1, description: 'Retransmissions of an unanswered CoA/Disconnect request before the router-API fallback' },
};
const defs = exports.SETTING_DEFS;
exports.SETTING_KEYS = Object.keys(exports.SETTING_DEFS);
/** Body schema of PUT /api/settings: any subset of the keys; an unknown key is refused. */
exports.settingsUpdateSchema = {
    type: 'object',
    properties: Object.fromEntries(exports.SETTING_KEYS.map((k) => [k, defs[k].schema])),
    additionalProperties: { not: {} },
    minProperties: 1,
};
function isSecretSetting(key) {
    return defs[key].secret === true;
}
/** Every setting with its stored value or default; secrets decrypted (for the services' own use). */
async function loadSettings(db, keys = exports.SETTING_KEYS) {
    const rows = await db.select().from(schema_1.settings).where((0, drizzle_orm_1.inArray)(schema_1.settings.key, keys));
    const stored = new Map(rows.map((r) => [r.key, r.value]));
    const out = {};
    for (const key of exports.SETTING_KEYS) {
        const value = stored.has(key) ? stored.get(key) : defs[key].default;
        out[key] = isSecretSetting(key) && typeof value === 'string' && value ? (0, secrets_1.decrypt)(value) : value;
    }
    return out;
}
/** What GET /api/settings shows: secrets are replaced by whether they are set. */
function publicView(all) {
    const out = {};
    for (const key of exports.SETTING_KEYS) {
        out[key] = isSecretSetting(key) ? (all[key] ? '********' : '') : all[key];
    }
    return out;
}
async function saveSettings(db, changes) {
    const rows = Object.entries(changes).map(([key, value]) => ({
        key,
        value: isSecretSetting(key) && typeof value === 'string' && value ? (0, secrets_1.encrypt)(value) : value,
        updatedAt: new Date(),
    }));
    if (rows.length === 0)
        return;
    await db
        .insert(schema_1.settings)
        .values(rows)
        .onConflictDoUpdate({ target: schema_1.settings.key, set: { value: drizzle_orm_1.sql.raw('excluded.value'), updatedAt: new Date() } });
}
//# sourceMappingURL=settings.js.map