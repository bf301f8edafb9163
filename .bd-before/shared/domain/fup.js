"use strict";
/**
 * Fair use (FUP): which tier a subscriber's usage puts it in. Pure; the usage service in
 * network-access applies the result (RADIUS group, CoA event). docs/freeradius.md has the rules.
 *
 * - Usage is download + upload bytes. 1 GB = 1024^3 bytes, as topup-data counts it.
 * - A tier `{ level, threshold_gb, rate_limit }` is reached when the month's usage passes
 *   threshold_gb plus the subscriber's top-up bytes (top-up data sits on top of the monthly quota).
 * - Using up the daily quota puts the subscriber at least in the first (lowest) tier until the day
 *   ends; using up the monthly quota (plus top-up) puts it in the last (highest) tier.
 * - A quota or threshold of 0 or null is "no limit". Without tiers there is no rate to drop to, so
 *   quotas only count and the level stays 0.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.GIB = void 0;
exports.validTiers = validTiers;
exports.fupLevel = fupLevel;
exports.tierRate = tierRate;
exports.effectiveQuotaGb = effectiveQuotaGb;
exports.GIB = 1024 ** 3;
/** A limit in bytes, or null for "no limit" (null, 0, or below one byte). */
function bytes(gb) {
    const b = gb === null ? 0 : Math.round(gb * exports.GIB);
    return b > 0 ? b : null;
}
/** Tiers with a valid level (1..3), lowest level first. */
function validTiers(tiers) {
    return tiers.filter((t) => Number.isInteger(t.level) && t.level >= 1 && t.level <= 3).sort((a, b) => a.level - b.level);
}
function fupLevel(usage, limits) {
    const tiers = validTiers(limits.tiers);
    if (tiers.length === 0)
        return 0;
    const extra = Math.max(0, usage.extraBytes);
    let level = 0;
    for (const t of tiers) {
        const threshold = bytes(t.threshold_gb);
        if (threshold !== null && usage.monthlyUsedBytes >= threshold + extra)
            level = Math.max(level, t.level);
    }
    const daily = bytes(limits.dailyQuotaGb);
    if (daily !== null && usage.dailyUsedBytes >= daily)
        level = Math.max(level, tiers[0].level);
    const monthly = bytes(limits.monthlyQuotaGb);
    if (monthly !== null && usage.monthlyUsedBytes >= monthly + extra)
        level = Math.max(level, tiers[tiers.length - 1].level);
    return level;
}
/** The rate of a level: the tier's rate_limit, or null at level 0 (the plan's own rate applies). */
function tierRate(tiers, level) {
    if (level === 0)
        return null;
    return validTiers(tiers).find((t) => t.level === level)?.rate_limit ?? null;
}
/** A per-subscriber quota override wins over the plan's; numeric columns arrive as strings. */
function effectiveQuotaGb(own, plan) {
    const v = own ?? plan;
    return v === null ? null : Number(v);
}
//# sourceMappingURL=fup.js.map