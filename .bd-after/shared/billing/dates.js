"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.todayUtc = todayUtc;
exports.addDays = addDays;
/** Billing dates are ISO `YYYY-MM-DD` strings in UTC (the operator's books close on UTC days). */
function todayUtc(now = new Date()) {
    return now.toISOString().slice(0, 10);
}
function addDays(date, days) {
    const d = new Date(`${date}T00:00:00Z`);
    d.setUTCDate(d.getUTCDate() + days);
    return d.toISOString().slice(0, 10);
}
//# sourceMappingURL=dates.js.map