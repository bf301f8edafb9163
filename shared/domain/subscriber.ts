/**
 * Pure rules about subscribers: input normalisation (MAC, username, IPv4), clamps of the bulk
 * actions, date arithmetic of renewals, and the realm swap of a bulk rename. No I/O here.
 */

import { percentOf } from '../money';

/** One GB of quota, in bytes. Binary (GiB), as RouterOS counts it. */
export const GB_BYTES = 1024 ** 3;

/** Bounds of the spec's section 8: quota and price clamps of the bulk actions. */
export const QUOTA_GB_MAX = 10_000;
export const PRICE_MAX = 10_000;

export function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** `name` or `name@realm`; letters, digits and `._-`, as PPPoE clients accept them. */
const USERNAME = /^[A-Za-z0-9._-]{1,64}(@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*)?$/;

export function isValidUsername(username: string): boolean {
  return username.length <= 128 && USERNAME.test(username);
}

export function realmOf(username: string): string | null {
  const at = username.indexOf('@');
  return at === -1 ? null : username.slice(at + 1);
}

/**
 * Bulk rename is suffix-only: `ali@old` with old_realm `old` becomes `ali@new`. A username without
 * that realm is not renamed (null).
 */
export function swapRealm(username: string, oldRealm: string, newRealm: string): string | null {
  if (realmOf(username) !== oldRealm) return null;
  return `${username.slice(0, username.length - oldRealm.length)}${newRealm}`;
}

/**
 * Any common MAC notation (`aa:bb:cc:dd:ee:ff`, `AA-BB-...`, `aabb.ccdd.eeff`, `aabbccddeeff`)
 * to `AA:BB:CC:DD:EE:FF`; null when it is not a MAC address.
 */
export function normaliseMac(input: string): string | null {
  const s = input.trim();
  const shapes = [
    /^([0-9a-f]{2})([:-])([0-9a-f]{2})\2([0-9a-f]{2})\2([0-9a-f]{2})\2([0-9a-f]{2})\2([0-9a-f]{2})$/i,
    /^([0-9a-f]{4})\.([0-9a-f]{4})\.([0-9a-f]{4})$/i,
    /^[0-9a-f]{12}$/i,
  ];
  if (!shapes.some((re) => re.test(s))) return null;
  const hex = s.replace(/[^0-9a-f]/gi, '').toUpperCase();
  return hex.match(/../g)!.join(':');
}

/** Dotted-quad IPv4 without leading zeros (which some parsers read as octal). */
export function isIPv4(value: string): boolean {
  const parts = value.split('.');
  return parts.length === 4 && parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255);
}

export function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, p) => acc * 256 + Number(p), 0);
}

export function intToIpv4(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

/** `YYYY-MM-DD` plus `days` (may be negative), in UTC so no time zone shifts the date. */
export function addDays(date: string, days: number): string {
  const t = Date.parse(`${date}T00:00:00Z`) + days * 86_400_000;
  return new Date(t).toISOString().slice(0, 10);
}

export function todayIso(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/**
 * A renewal extends from the later of today and the current expiry: an early renewal keeps the
 * unused days, a late one does not backdate the new period into days already lost.
 */
export function renewedExpiry(expiryDate: string, today: string, durationDays: number): string {
  return addDays(expiryDate > today ? expiryDate : today, durationDays);
}

/**
 * What a renewal costs, in the plan's minor units: the subscriber's own price when it overrides the
 * plan's. Shared because billing shows it (the captive portal) and subscribers charges it.
 */
export function renewalPrice(s: { overridePrice: boolean; price: number | null }, plan: { price: number }): number {
  return s.overridePrice && s.price !== null ? s.price : plan.price;
}

/**
 * What a renewal's invoice will ask, in minor units: the renewal price plus the default tax, rounded
 * half-up as the invoice's own arithmetic does (the renewal invoice names no tax_rate, so it takes
 * `default_tax_rate`). The reseller balance is debited the price alone.
 */
export function renewalCharge(
  s: { overridePrice: boolean; price: number | null },
  plan: { price: number },
  taxRate: number | string,
): { price: number; taxAmount: number; total: number } {
  const price = renewalPrice(s, plan);
  const taxAmount = percentOf(price, taxRate);
  return { price, taxAmount, total: price + taxAmount };
}

/**
 * Whether the wallet pays a renewal's invoice whole: the wallet holds the system currency, which must
 * be the plan's, and at least `renewalCharge`'s total. The rule of every renewal the wallet pays
 * (self-care, an online renewal payment, a money card's or the sweep's auto-renew).
 */
export function walletCoversRenewal(
  s: { overridePrice: boolean; price: number | null; walletBalance: number },
  plan: { price: number; currency: string },
  settings: { currency: string; default_tax_rate: number | string },
): boolean {
  return (
    plan.currency === settings.currency && s.walletBalance >= renewalCharge(s, plan, settings.default_tax_rate).total
  );
}

/** `%` and `_` of a search term matched literally in ILIKE. */
export function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
