/**
 * Whether a subscriber may use the network, as billing decides it (docs/lifecycle.md). Pure: the
 * SQL twin that the writers and the sweep run over sets of rows is `blockedReasonSql` in
 * shared/access/blocked.ts, and test/integration/lifecycle-access.test.ts holds both to the same
 * table of cases.
 *
 * - `inactive` (an operator's decision) is not a block: it is always a reject.
 * - blocked, in this order of precedence: `expired` (expiry_date before today), `quota` (a quota
 *   used up on a plan with no fair-use tier to drop to: fup_level > 0 without tiers), `overdue`
 *   (an invoice overdue for more than `suspend_overdue_after_days`, when that setting is set).
 */
export const BLOCKED_REASONS = ['expired', 'quota', 'overdue'] as const;
export type BlockedReason = (typeof BLOCKED_REASONS)[number];

export const BLOCKED_ACCESS_MODES = ['reject', 'walled_garden'] as const;
export type BlockedAccessMode = (typeof BLOCKED_ACCESS_MODES)[number];

export interface AccessFacts {
  expiryDate: string;
  today: string;
  fupLevel: number;
  planHasTiers: boolean;
  /** Days the oldest overdue invoice is past its due date (0 when none). */
  overdueDays: number;
}

export function blockedReason(f: AccessFacts, suspendOverdueAfterDays: number | null): BlockedReason | null {
  if (f.expiryDate < f.today) return 'expired';
  if (f.fupLevel > 0 && !f.planHasTiers) return 'quota';
  if (suspendOverdueAfterDays !== null && f.overdueDays > suspendOverdueAfterDays) return 'overdue';
  return null;
}

/** The group FreeRADIUS puts a blocked subscriber in, instead of its plan's groups. */
export const BLOCKED_GROUP = 'billing_blocked';

export const DEFAULT_GARDEN_ATTRIBUTES =
  'Mikrotik-Address-List := "billing-blocked"\nMikrotik-Rate-Limit := "256k/256k"';

export interface RadiusPair {
  attribute: string;
  op: string;
  value: string;
}

const PAIR = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(:=|\+=|==|=)\s*(?:"((?:[^"\\]|\\.)*)"|([^\s"]+))\s*$/;

/**
 * Reply attributes a garden may carry: RFC 2865/2869/3162 replies a router acts on and MikroTik's
 * vendor attributes (FreeRADIUS's dictionary.mikrotik). FreeRADIUS refuses every blocked login when
 * a group row names an attribute its dictionary lacks, so a typo is a 400 here instead.
 */
const GARDEN_ATTRIBUTES = new Set(
  [
    'Framed-IP-Address',
    'Framed-IP-Netmask',
    'Framed-Pool',
    'Framed-Route',
    'Framed-MTU',
    'Framed-Protocol',
    'Framed-IPv6-Prefix',
    'Framed-IPv6-Pool',
    'Delegated-IPv6-Prefix',
    'Filter-Id',
    'Class',
    'Service-Type',
    'Session-Timeout',
    'Idle-Timeout',
    'Reply-Message',
    'Acct-Interim-Interval',
    'Port-Limit',
    'Mikrotik-Recv-Limit',
    'Mikrotik-Xmit-Limit',
    'Mikrotik-Group',
    'Mikrotik-Rate-Limit',
    'Mikrotik-Realm',
    'Mikrotik-Host-IP',
    'Mikrotik-Mark-Id',
    'Mikrotik-Advertise-URL',
    'Mikrotik-Advertise-Interval',
    'Mikrotik-Recv-Limit-Gigawords',
    'Mikrotik-Xmit-Limit-Gigawords',
    'Mikrotik-Total-Limit',
    'Mikrotik-Total-Limit-Gigawords',
    'Mikrotik-Address-List',
    'Mikrotik-Delegated-IPv6-Pool',
    'Mikrotik-DHCP-Option-Set',
    'Mikrotik-Switching-Filter',
  ].map((a) => a.toLowerCase()),
);

/**
 * A subscriber's own addresses, written from its row: in a group's rows (a plan's template, the
 * garden) one value would go to everybody in the group and override each one's own.
 */
const SUBSCRIBER_ADDRESS_ATTRIBUTES = new Set(
  ['Framed-IP-Address', 'Framed-IPv6-Address', 'Framed-IPv6-Prefix', 'Delegated-IPv6-Prefix'].map((a) =>
    a.toLowerCase(),
  ),
);

/** A value rlm_sql would read as a quoted string (and run, in backticks) rather than as it is. */
export const wrappedWhole = (value: string): boolean =>
  value.length > 1 && /^["'`]/.test(value) && value[0] === value[value.length - 1];

/**
 * Why a pair an operator wrote cannot go into the group rows FreeRADIUS reads, or null. rlm_sql
 * expands a value wrapped whole in backticks (and strips a whole in quotes, which may then be one),
 * so such a value would run whatever it names at every login; `%{` is refused with them so that no
 * value of ours is ever an expansion.
 */
export function groupPairProblem(attribute: string, value: string): string | null {
  if (SUBSCRIBER_ADDRESS_ATTRIBUTES.has(attribute.toLowerCase()))
    return `${attribute} is each subscriber's own: set it on the subscriber, not for a group`;
  if (wrappedWhole(value) || value.includes('`') || value.includes('%{'))
    return `${attribute}: ${JSON.stringify(value)} would be expanded by FreeRADIUS (a backtick, %{ or a value wrapped in quotes)`;
  return null;
}

/**
 * Parses the walled garden's reply attributes, one `Attribute op value` a line (blank lines
 * skipped). Throws naming the first bad line, so a setting that FreeRADIUS could not use is a 400;
 * `stored`: a setting saved before groupPairProblem's rule, whose refused pairs are left out.
 */
export function parseRadiusPairs(text: string, stored = false): RadiusPair[] {
  const pairs: RadiusPair[] = [];
  const lines = text.split(/\r?\n/);
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    const m = PAIR.exec(line);
    if (!m) throw new Error(`line ${i + 1} is not a RADIUS pair (Attribute := "value"): ${line.trim().slice(0, 80)}`);
    if (!GARDEN_ATTRIBUTES.has(m[1].toLowerCase())) throw new Error(`line ${i + 1}: unknown attribute ${m[1]}`);
    const value = m[3] !== undefined ? m[3].replace(/\\(.)/g, '$1') : m[4];
    const problem = groupPairProblem(m[1], value);
    if (problem && stored) continue;
    if (problem) throw new Error(`line ${i + 1}: ${problem}`);
    pairs.push({ attribute: m[1], op: m[2], value });
  }
  return pairs;
}
