/**
 * Vendor profiles (issue 41): for the subscribers of a NAS of a given `vendor`, which reply
 * attributes carry a plan's rate and each fair-use tier, how a rate change reaches a live session,
 * which attributes identify a session in a Disconnect or CoA request, the default CoA port and the
 * walled garden's attributes. Pure: shared/radius.ts writes the profiles' rows, network-access
 * builds its CoA packets from them. Attribute names are FreeRADIUS's (dictionary.ts).
 */
import { parseTemplate, type ReplyPair } from './pairs';
import { kbps, parseRate, rateTextExpands } from './rate';

export const VENDORS = ['mikrotik', 'accel-ppp', 'cisco', 'juniper', 'huawei', 'nokia', 'generic'] as const;
export type Vendor = (typeof VENDORS)[number];
export const DEFAULT_VENDOR: Vendor = 'mikrotik';

export const isVendor = (v: unknown): v is Vendor =>
  typeof v === 'string' && (VENDORS as readonly string[]).includes(v);

/**
 * How a new rate reaches a live session: a CoA-Request carrying the rate's attributes (`coa`), a
 * CoA-Request that deactivates the rate's service and activates it again with the new parameters
 * (`reactivate`), or a Disconnect-Request, the session coming back with the new rate (`disconnect`).
 */
export type RateChange = 'coa' | 'reactivate' | 'disconnect';

/** Which of the open accounting row's attributes go into a Disconnect or CoA request. */
export interface SessionIdentity {
  userName: boolean;
  acctSessionId: boolean;
  framedIp: boolean;
}

export interface VendorProfile {
  vendor: Vendor;
  /** Reply pairs carrying `rate` (a plan's or a tier's rate string); [] when the vendor has none. */
  rate(rate: string): Omit<ReplyPair, 'op'>[];
  rateChange: RateChange;
  /** The attributes of the CoA-Request that sets `rate` on a live session (`coa` and `reactivate`). */
  coaRate(rate: string): Omit<ReplyPair, 'op'>[];
  identity: SessionIdentity;
  coaPort: number;
  /** The walled garden's replies by default (a template, one pair a line). */
  garden: string;
  /**
   * The attribute naming the NAS's pool for a delegated prefix (a plan's `delegated_ipv6_pool`):
   * the vendor's own where it has one, else RFC 6911's. The WAN pool (`framed_ipv6_pool`) is RFC
   * 3162's Framed-IPv6-Pool on every vendor.
   */
  delegatedIpv6Pool: string;
}

const ALL: SessionIdentity = { userName: true, acctSessionId: true, framedIp: true };
const BY_SESSION_ID: SessionIdentity = { userName: false, acctSessionId: true, framedIp: false };
const RFC_COA_PORT = 3799;
const STANDARD_DELEGATED_POOL = 'Delegated-IPv6-Prefix-Pool';
/** The walled garden's rate, as MikroTik's default garden has it. */
const GARDEN_RATE = '256k/256k';
/** The service a Juniper dynamic profile defines with two parameters: download, upload (bit/s). */
export const JUNIPER_RATE_SERVICE = 'billing-rate';

const pair = (attribute: string, value: string | number) => ({ attribute, value: String(value) });
const lines = (pairs: { attribute: string; value: string }[]) =>
  pairs.map((p) => `${p.attribute} := ${JSON.stringify(p.value)}`).join('\n');

function accelPppRate(rate: string) {
  const r = parseRate(rate);
  // accel-ppp's shaper (attr=Filter-Id): "down/up" in kbit/s.
  return [pair('Filter-Id', `${kbps(r.downBps)}/${kbps(r.upBps)}`)];
}

function ciscoRate(rate: string) {
  const r = parseRate(rate);
  // ISG: policy maps configured on the router, named after the rate (docs/network-access.md).
  return [
    pair('Cisco-AVPair', `ip:sub-qos-policy-in=billing-up-${kbps(r.upBps)}k`),
    pair('Cisco-AVPair', `ip:sub-qos-policy-out=billing-down-${kbps(r.downBps)}k`),
  ];
}

function juniperRate(rate: string) {
  const r = parseRate(rate);
  return [pair('ERX-Service-Activate:1', `${JUNIPER_RATE_SERVICE}(${r.downBps},${r.upBps})`)];
}

/** Huawei's rates are 32-bit integers of bit/s: a faster rate is sent as the largest it can say (4.29 Gbit/s). */
const uint32 = (n: number) => Math.min(n, 4294967295);

function huaweiRate(rate: string) {
  const r = parseRate(rate);
  // Input is what the BRAS receives from the user (upload).
  return [
    pair('Huawei-Input-Average-Rate', uint32(r.upBps)),
    pair('Huawei-Input-Peak-Rate', uint32(r.peakUpBps)),
    pair('Huawei-Output-Average-Rate', uint32(r.downBps)),
    pair('Huawei-Output-Peak-Rate', uint32(r.peakDownBps)),
  ];
}

function nokiaRate(rate: string) {
  const r = parseRate(rate);
  // Egress aggregate rate (download) and the sla-profile's ingress queue 1 (upload), kbit/s.
  return [
    pair('Alc-Subscriber-QoS-Override', `e:r:rate=${kbps(r.downBps)}`),
    pair('Alc-Subscriber-QoS-Override', `i:q:1:pir=${kbps(r.upBps)}`),
  ];
}

export const PROFILES: Record<Vendor, VendorProfile> = {
  mikrotik: {
    vendor: 'mikrotik',
    rate: (rate) => [pair('Mikrotik-Rate-Limit', rate)],
    rateChange: 'coa',
    coaRate: (rate) => [pair('Mikrotik-Rate-Limit', rate)],
    identity: ALL,
    coaPort: RFC_COA_PORT,
    garden: `Mikrotik-Address-List := "billing-blocked"\nMikrotik-Rate-Limit := "${GARDEN_RATE}"`,
    delegatedIpv6Pool: 'Mikrotik-Delegated-IPv6-Pool',
  },
  'accel-ppp': {
    vendor: 'accel-ppp',
    rate: accelPppRate,
    rateChange: 'coa',
    coaRate: accelPppRate,
    // accel-ppp finds a session by any of them.
    identity: ALL,
    coaPort: RFC_COA_PORT,
    garden: lines([...accelPppRate(GARDEN_RATE), pair('Framed-Pool', 'billing-blocked')]),
    delegatedIpv6Pool: STANDARD_DELEGATED_POOL,
  },
  cisco: {
    vendor: 'cisco',
    rate: ciscoRate,
    rateChange: 'coa',
    coaRate: ciscoRate,
    identity: BY_SESSION_ID,
    // IOS XE's `aaa server radius dynamic-author` listens on 1700 unless told otherwise.
    coaPort: 1700,
    // An ISG service with an L4-redirect to the portal, activated at login (Cisco-Account-Info "A<service>").
    garden: lines([pair('Cisco-Account-Info', 'Abilling-garden')]),
    delegatedIpv6Pool: STANDARD_DELEGATED_POOL,
  },
  juniper: {
    vendor: 'juniper',
    rate: juniperRate,
    rateChange: 'reactivate',
    coaRate: (rate) => [pair('ERX-Service-Deactivate', JUNIPER_RATE_SERVICE), ...juniperRate(rate)],
    identity: BY_SESSION_ID,
    coaPort: RFC_COA_PORT,
    garden: lines([pair('ERX-Service-Activate:1', 'billing-garden')]),
    delegatedIpv6Pool: 'ERX-IPv6-Delegated-Pool-Name',
  },
  huawei: {
    vendor: 'huawei',
    rate: huaweiRate,
    rateChange: 'coa',
    coaRate: huaweiRate,
    identity: { userName: true, acctSessionId: true, framedIp: false },
    coaPort: RFC_COA_PORT,
    garden: lines([...huaweiRate(GARDEN_RATE), pair('Huawei-PortalURL', 'http://portal.example/portal')]),
    delegatedIpv6Pool: STANDARD_DELEGATED_POOL,
  },
  nokia: {
    vendor: 'nokia',
    rate: nokiaRate,
    rateChange: 'coa',
    coaRate: nokiaRate,
    identity: BY_SESSION_ID,
    coaPort: RFC_COA_PORT,
    // An SLA profile with the redirect policy, configured on the router.
    garden: lines([pair('Alc-SLA-Prof-Str', 'billing-garden')]),
    delegatedIpv6Pool: 'Alc-Delegated-IPv6-Pool',
  },
  generic: {
    vendor: 'generic',
    rate: () => [],
    rateChange: 'disconnect',
    coaRate: () => [],
    identity: ALL,
    coaPort: RFC_COA_PORT,
    // A pool the router keeps behind its own redirect.
    garden: lines([pair('Framed-Pool', 'billing-blocked')]),
    delegatedIpv6Pool: STANDARD_DELEGATED_POOL,
  },
};

/** The vendors FreeRADIUS gives their own group rows (`<group>@<vendor>`); MikroTik keeps the plain groups. */
export const SUFFIXED_VENDORS = VENDORS.filter((v) => v !== DEFAULT_VENDOR);

/** The group of `group` (a plan's, a tier's, the garden's) for a NAS of `vendor`. */
export const vendorGroup = (group: string, vendor: Vendor): string =>
  vendor === DEFAULT_VENDOR ? group : `${group}@${vendor}`;

/**
 * A rate's pairs for a vendor, or none when the rate string is not one the profiles can read: the
 * plans API admits only readable ones, but an imported plan may carry any MikroTik text, which then
 * reaches MikroTik alone (its plain group has the text as it is), unless FreeRADIUS would expand it.
 */
function ratePairs(vendor: Vendor, rate: string): Omit<ReplyPair, 'op'>[] {
  if (rateTextExpands(rate)) return [];
  try {
    return PROFILES[vendor].rate(rate);
  } catch {
    return [];
  }
}

/** A plan's rows for one vendor: its rate (op `=`, the subscriber's own rows win), pool and the operator's template. */
export function planPairs(
  vendor: Vendor,
  plan: { poolName: string | null; rateLimit: string | null; template?: string },
): ReplyPair[] {
  return [
    ...(plan.poolName ? [{ attribute: 'Framed-Pool', op: '=', value: plan.poolName }] : []),
    ...(plan.rateLimit ? ratePairs(vendor, plan.rateLimit).map((p) => ({ ...p, op: '=' })) : []),
    ...(plan.template ? parseTemplate(plan.template, true) : []),
  ];
}

/** A fair-use tier's rows for one vendor: its rate with `:=` (it replaces the plan's whatever else applies). */
export function tierPairs(vendor: Vendor, rateLimit: string): ReplyPair[] {
  return ratePairs(vendor, rateLimit).map((p) => ({ ...p, op: ':=' }));
}

/** Checks a plan's per-vendor templates; throws naming the vendor, the line and the attribute at fault. */
export function checkVendorTemplates(templates: Record<string, string>): void {
  for (const [vendor, text] of Object.entries(templates)) {
    if (!isVendor(vendor)) throw new Error(`unknown vendor ${vendor} (one of ${VENDORS.join(', ')})`);
    try {
      parseTemplate(text);
    } catch (err) {
      throw new Error(`${vendor}: ${(err as Error).message}`, { cause: err });
    }
  }
}
