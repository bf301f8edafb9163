"use strict";
/**
 * Pure rules about subscribers: input normalisation (MAC, username, IPv4), clamps of the bulk
 * actions, date arithmetic of renewals, and the realm swap of a bulk rename. No I/O here.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.PRICE_MAX = exports.QUOTA_GB_MAX = exports.GB_BYTES = void 0;
exports.clamp = clamp;
exports.isValidUsername = isValidUsername;
exports.realmOf = realmOf;
exports.swapRealm = swapRealm;
exports.normaliseMac = normaliseMac;
exports.isIPv4 = isIPv4;
exports.ipv4ToInt = ipv4ToInt;
exports.intToIpv4 = intToIpv4;
exports.addDays = addDays;
exports.todayIso = todayIso;
exports.renewedExpiry = renewedExpiry;
exports.likePattern = likePattern;
/** One GB of quota, in bytes. Binary (GiB), as RouterOS counts it. */
exports.GB_BYTES = 1024 ** 3;
/** Bounds of the spec's section 8: quota and price clamps of the bulk actions. */
exports.QUOTA_GB_MAX = 10_000;
exports.PRICE_MAX = 10_000;
function clamp(value, min, max) {
    return Math.min(max, Math.max(min, value));
}
/** `name` or `name@realm`; letters, digits and `._-`, as PPPoE clients accept them. */
const USERNAME = /^[A-Za-z0-9._-]{1,64}(@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*)?$/;
function isValidUsername(username) {
    return username.length <= 128 && USERNAME.test(username);
}
function realmOf(username) {
    const at = username.indexOf('@');
    return at === -1 ? null : username.slice(at + 1);
}
/**
 * Bulk rename is suffix-only: `ali@old` with old_realm `old` becomes `ali@new`. A username without
 * that realm is not renamed (null).
 */
function swapRealm(username, oldRealm, newRealm) {
    if (realmOf(username) !== oldRealm)
        return null;
    return `${username.slice(0, username.length - oldRealm.length)}${newRealm}`;
}
/**
 * Any common MAC notation (`aa:bb:cc:dd:ee:ff`, `AA-BB-...`, `aabb.ccdd.eeff`, `aabbccddeeff`)
 * to `AA:BB:CC:DD:EE:FF`; null when it is not a MAC address.
 */
function normaliseMac(input) {
    const s = input.trim();
    const shapes = [
        /^([0-9a-f]{2})([:-])([0-9a-f]{2})\2([0-9a-f]{2})\2([0-9a-f]{2})\2([0-9a-f]{2})\2([0-9a-f]{2})$/i,
        /^([0-9a-f]{4})\.([0-9a-f]{4})\.([0-9a-f]{4})$/i,
        /^[0-9a-f]{12}$/i,
    ];
    if (!shapes.some((re) => re.test(s)))
        return null;
    const hex = s.replace(/[^0-9a-f]/gi, '').toUpperCase();
    return hex.match(/../g).join(':');
}
/** Dotted-quad IPv4 without leading zeros (which some parsers read as octal). */
function isIPv4(value) {
    const parts = value.split('.');
    return parts.length === 4 && parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255);
}
function ipv4ToInt(ip) {
    return ip.split('.').reduce((acc, p) => acc * 256 + Number(p), 0);
}
function intToIpv4(n) {
    return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}
/** `YYYY-MM-DD` plus `days` (may be negative), in UTC so no time zone shifts the date. */
function addDays(date, days) {
    const t = Date.parse(`${date}T00:00:00Z`) + days * 86_400_000;
    return new Date(t).toISOString().slice(0, 10);
}
function todayIso(now = new Date()) {
    return now.toISOString().slice(0, 10);
}
/**
 * A renewal extends from the later of today and the current expiry: an early renewal keeps the
 * unused days, a late one does not backdate the new period into days already lost.
 */
function renewedExpiry(expiryDate, today, durationDays) {
    return addDays(expiryDate > today ? expiryDate : today, durationDays);
}
/** `%` and `_` of a search term matched literally in ILIKE. */
function likePattern(term) {
    return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
//# sourceMappingURL=subscriber.js.map