/**
 * Fair use (FUP): which tier a subscriber's usage puts it in. Pure; the usage service in
 * network-access applies the result (RADIUS group, CoA event). docs/freeradius.md has the rules.
 *
 * - Usage is download + upload bytes. 1 GB = 1024^3 bytes, as topup-data counts it.
 * - A tier `{ level, threshold_gb, rate_limit }` is reached when the month's usage passes
 *   threshold_gb plus the subscriber's top-up bytes (top-up data sits on top of the monthly quota).
 * - Using up the daily quota puts the subscriber at least in the first (lowest) tier until the day
 *   ends; using up the monthly quota (plus top-up) puts it in the last (highest) tier.
 * - A quota or threshold of 0 or null is "no limit".
 * - Without tiers there is no rate to drop to: the level still reports the quota state (1 while the
 *   daily quota is used up, 3 while the monthly one is), and a level above 0 on such a plan blocks
 *   access (shared/domain/access.ts: reason `quota`) until the counter resets, reset-fup, refill
 *   or topup-data.
 */

export const GIB = 1024 ** 3;

export type FupLevel = 0 | 1 | 2 | 3;

/** The levels a plan without tiers reports: its daily quota used up, its monthly one used up. */
export const TIERLESS_DAILY_LEVEL = 1;
export const TIERLESS_MONTHLY_LEVEL = 3;

export interface Tier {
  level: number;
  threshold_gb: number;
  rate_limit: string;
}

export interface FupUsage {
  dailyUsedBytes: number;
  monthlyUsedBytes: number;
  /** Top-up data bought on top of the monthly quota. */
  extraBytes: number;
}

export interface FupLimits {
  dailyQuotaGb: number | null;
  monthlyQuotaGb: number | null;
  tiers: readonly Tier[];
}

/** A limit in bytes, or null for "no limit" (null, 0, or below one byte). */
function bytes(gb: number | null): number | null {
  const b = gb === null ? 0 : Math.round(gb * GIB);
  return b > 0 ? b : null;
}

/** Tiers with a valid level (1..3), lowest level first. */
export function validTiers(tiers: readonly Tier[]): Tier[] {
  return tiers
    .filter((t) => Number.isInteger(t.level) && t.level >= 1 && t.level <= 3)
    .sort((a, b) => a.level - b.level);
}

export function fupLevel(usage: FupUsage, limits: FupLimits): FupLevel {
  const tiers = validTiers(limits.tiers);
  const extra = Math.max(0, usage.extraBytes);
  const daily = bytes(limits.dailyQuotaGb);
  const monthly = bytes(limits.monthlyQuotaGb);
  if (tiers.length === 0) {
    if (monthly !== null && usage.monthlyUsedBytes >= monthly + extra) return TIERLESS_MONTHLY_LEVEL;
    return daily !== null && usage.dailyUsedBytes >= daily ? TIERLESS_DAILY_LEVEL : 0;
  }
  let level = 0;
  for (const t of tiers) {
    const threshold = bytes(t.threshold_gb);
    if (threshold !== null && usage.monthlyUsedBytes >= threshold + extra) level = Math.max(level, t.level);
  }
  if (daily !== null && usage.dailyUsedBytes >= daily) level = Math.max(level, tiers[0].level);
  if (monthly !== null && usage.monthlyUsedBytes >= monthly + extra)
    level = Math.max(level, tiers[tiers.length - 1].level);
  return level as FupLevel;
}

/** The rate of a level: the tier's rate_limit, or null at level 0 (the plan's own rate applies). */
export function tierRate(tiers: readonly Tier[], level: number): string | null {
  if (level === 0) return null;
  return validTiers(tiers).find((t) => t.level === level)?.rate_limit ?? null;
}

/** A per-subscriber quota override wins over the plan's; numeric columns arrive as strings. */
export function effectiveQuotaGb(own: string | number | null, plan: string | number | null): number | null {
  const v = own ?? plan;
  return v === null ? null : Number(v);
}
