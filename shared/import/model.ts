/**
 * The source-independent import model (docs/import.md). A source (CSV, daloRADIUS, phpnuxbill)
 * reads its own shapes into these records; the writer (`writer.ts`) knows nothing of the sources.
 * Amounts are decimal strings as the source stored them (no float arithmetic on the way in); dates
 * are `YYYY-MM-DD`. Records are keyed by what identifies them in the source: plans and resellers by
 * name, subscribers by username (kept exactly), history rows by the source's own id.
 */
import type { SessionReader } from './sessions';

export const SOURCES = ['csv', 'daloradius', 'phpnuxbill'] as const;
export type SourceName = (typeof SOURCES)[number];

/** `service_limits`: the (reseller, plan) pairs an imported reseller needs to sell its subscribers' plans. */
export type Entity = 'plans' | 'resellers' | 'service_limits' | 'subscribers' | 'history' | 'sessions' | 'routers';

export interface ImportPlan {
  name: string;
  /** Price of one period, decimal string. */
  price: string;
  durationDays: number;
  rateLimit: string | null;
  /** The source bound subscribers of this plan to their MAC (daloRADIUS Calling-Station-Id checks). */
  macBinding: boolean;
}

export interface ImportReseller {
  name: string;
}

/**
 * A FreeRADIUS check attribute and its value as stored. `Cleartext-Password` (or the older
 * `User-Password`) is a readable password; any other attribute is a hash FreeRADIUS accepts,
 * written back unchanged.
 */
export interface ImportPassword {
  attribute: string;
  value: string;
}

export interface ImportSubscriber {
  username: string;
  password: ImportPassword | null;
  plan: string | null;
  reseller: string | null;
  fullName: string | null;
  phone: string | null;
  address: string | null;
  notes: string | null;
  /** Last day of paid service, `YYYY-MM-DD`; null when the source has none. */
  expiry: string | null;
  staticIp: string | null;
  mac: string | null;
  /** Prepaid balance, decimal string; null or '0' when none. */
  balance: string | null;
  active: boolean;
}

/** One past charge: imported as a paid (or partly paid) invoice with its payment. */
export interface ImportHistory {
  /** The source's id of the row, unique within the source. */
  key: string;
  username: string;
  /** `YYYY-MM-DD`. */
  date: string;
  /** What was charged, decimal string. */
  amount: string;
  /** What was paid of it, decimal string (usually equal to `amount`). */
  paid: string;
  method: string | null;
  description: string;
  /** The source's own reference (its invoice number, a receipt), kept in the notes. */
  reference: string | null;
}

/**
 * The source's history rows in batches, read again on every iteration and in the same order each
 * time: the writer reads them twice (a pass that plans the whole set, then one that writes it batch
 * by batch), so the history is never held in memory whole (docs/import.md, "Sixth round").
 */
export interface HistoryReader {
  batches(size: number): AsyncIterable<ImportHistory[]>;
}

/** A source without history. */
export const NO_HISTORY: HistoryReader = {
  async *batches() {},
};

/** A record the source could not turn into the model, reported as skipped with the reason. */
export interface SourceIssue {
  entity: Entity;
  key: string;
  reason: string;
}

export interface ImportData {
  source: SourceName;
  plans: ImportPlan[];
  resellers: ImportReseller[];
  subscribers: ImportSubscriber[];
  history: HistoryReader;
  /** Accounting sessions, read in chunks while they are written (null: the source keeps none). */
  sessions: SessionReader | null;
  /** Rows read by entity (a source may read more than it turns into records). */
  read: Partial<Record<Entity, number>>;
  issues: SourceIssue[];
}

/** Password attributes FreeRADIUS's pap module accepts as the known good password. */
export const CLEARTEXT_ATTRIBUTES = ['Cleartext-Password', 'User-Password'];
export const HASH_ATTRIBUTES = [
  'NT-Password',
  'LM-Password',
  'MD5-Password',
  'SMD5-Password',
  'SHA-Password',
  'SHA1-Password',
  'SSHA-Password',
  'SSHA1-Password',
  'SHA2-Password',
  'SHA2-224-Password',
  'SHA2-256-Password',
  'SHA2-384-Password',
  'SHA2-512-Password',
  'SSHA2-224-Password',
  'SSHA2-256-Password',
  'SSHA2-384-Password',
  'SSHA2-512-Password',
  'Crypt-Password',
  'Password-With-Header',
];
export const PASSWORD_ATTRIBUTES = [...CLEARTEXT_ATTRIBUTES, ...HASH_ATTRIBUTES];

/** `attribute` spelled as FreeRADIUS spells it, or null when it holds no password. */
export function passwordAttribute(attribute: string): string | null {
  const a = attribute.trim().toLowerCase();
  return PASSWORD_ATTRIBUTES.find((p) => p.toLowerCase() === a) ?? null;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * A date as sources write it, to `YYYY-MM-DD`: ISO (`2025-01-31`, `2025-01-31 10:00:00`),
 * FreeRADIUS's Expiration (`Jan 31 2025`, `Jan 31 2025 00:00:00`, `31 Jan 2025`). Null when unreadable
 * or a zero date (`0000-00-00`).
 */
export function parseSourceDate(value: unknown): string | null {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString().slice(0, 10);
  if (typeof value !== 'string') return null;
  const s = value.trim();
  let m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T].*)?$/.exec(s);
  if (m) return valid(Number(m[1]), Number(m[2]), Number(m[3]));
  m = /^([A-Za-z]{3})[a-z]*\.? +(\d{1,2}),? +(\d{4})(?: .*)?$/.exec(s);
  if (m) return valid(Number(m[3]), MONTHS.indexOf(m[1].toLowerCase()) + 1, Number(m[2]));
  m = /^(\d{1,2})[ -]([A-Za-z]{3})[a-z]*[ -](\d{4})(?: .*)?$/.exec(s);
  if (m) return valid(Number(m[3]), MONTHS.indexOf(m[2].toLowerCase()) + 1, Number(m[1]));
  m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(s);
  if (m) return valid(Number(m[3]), Number(m[2]), Number(m[1]));
  return null;
}

function valid(y: number, mo: number, d: number): string | null {
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31) return null;
  const iso = `${String(y).padStart(4, '0')}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
  return new Date(`${iso}T00:00:00Z`).toISOString().slice(0, 10) === iso ? iso : null;
}

/** Trimmed text, or null when empty. */
export function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const s = String(value).trim();
  return s === '' ? null : s;
}
