"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.setStaticIp = exports.setService = exports.setReseller = exports.setPrice = exports.refill = exports.resetMac = exports.softDelete = exports.resetFup = exports.disable = exports.enable = exports.disconnect = exports.renew = exports.REASON = void 0;
exports.lockInScope = lockInScope;
exports.setQuota = setQuota;
exports.checkServiceLimits = checkServiceLimits;
exports.rename = rename;
/**
 * Every subscriber action as one set-based operation over a batch of locked rows. The single
 * action routes run an operation over one id and turn its failure into an HTTP error; bulk-action
 * runs the same operation over batches, so both behave identically and a batch of thousands costs
 * a handful of statements rather than thousands of round trips.
 */
const drizzle_orm_1 = require("drizzle-orm");
const policy_1 = require("../../shared/auth/policy");
const schema_1 = require("../../shared/db/schema");
const subscriber_1 = require("../../shared/domain/subscriber");
const fup_rate_1 = require("../../shared/fup-rate");
const money_1 = require("../../shared/money");
const errors_1 = require("../../shared/errors");
const billing_1 = require("../../shared/billing");
const outbox_1 = require("./outbox");
const radius_rows_1 = require("./radius-rows");
const subscriber_view_1 = require("./subscriber-view");
const intArray = (ids) => (0, drizzle_orm_1.sql) `${drizzle_orm_1.sql.param(ids)}::int[]`;
const done = (failed = [], extra = new Map()) => ({ failed, extra });
const idsOf = (rows) => rows.map((r) => r.id);
exports.REASON = {
    notFound: 'subscriber not found',
    outOfScope: 'out of scope',
    insufficient: 'insufficient reseller balance',
    renewedToday: 'already renewed today',
    ipUsed: 'static_ip already used',
    poolExhausted: 'pool has no free address',
    noLimit: 'reseller has no service limit for this plan',
    limitReached: 'reseller service limit reached for this plan',
    usernameTaken: 'username already exists',
};
/**
 * Locks the live rows of `ids` (ascending, the order every writer uses) and splits off those that
 * do not exist or lie outside the caller's write scope.
 */
async function lockInScope(tx, scope, ids) {
    const rows = await tx.select().from(schema_1.subscribers)
        .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.inArray)(schema_1.subscribers.id, ids), (0, drizzle_orm_1.isNull)(schema_1.subscribers.deletedAt)))
        .orderBy((0, drizzle_orm_1.asc)(schema_1.subscribers.id))
        .for('update');
    const resellerIds = [...new Set(rows.map((r) => r.resellerId))];
    const allowed = resellerIds.length === 0
        ? new Set()
        : new Set((await tx.select({ id: schema_1.resellers.id }).from(schema_1.resellers)
            .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.inArray)(schema_1.resellers.id, resellerIds), (0, policy_1.inScope)(scope, schema_1.resellers.id)))).map((r) => r.id));
    const found = new Set(rows.map((r) => r.id));
    const failed = ids.filter((id) => !found.has(id)).map((id) => ({ id, status: 404, reason: exports.REASON.notFound }));
    const kept = [];
    for (const r of rows) {
        if (allowed.has(r.resellerId))
            kept.push(r);
        else
            failed.push({ id: r.id, status: 403, reason: exports.REASON.outOfScope });
    }
    return { rows: kept, failed };
}
/**
 * Debits each owning reseller for its subscribers (reseller rows locked in id order after the
 * subscriber rows), one ledger row per charge. A reseller whose balance runs out fails the rest of
 * its charges: the ones in id order that still fit are made.
 */
async function chargeResellers(env, charges, type) {
    const transactionIds = new Map();
    if (charges.length === 0)
        return { charged: [], failed: [], transactionIds };
    const ids = [...new Set(charges.map((c) => c.row.resellerId))].sort((a, b) => a - b);
    const locked = await env.tx.select().from(schema_1.resellers).where((0, drizzle_orm_1.inArray)(schema_1.resellers.id, ids)).orderBy((0, drizzle_orm_1.asc)(schema_1.resellers.id)).for('update');
    const balance = new Map(locked.map((r) => [r.id, r.balance]));
    const currency = new Map(locked.map((r) => [r.id, r.currency]));
    const charged = [];
    const failed = [];
    for (const c of charges) {
        const have = balance.get(c.row.resellerId) ?? 0;
        if (currency.get(c.row.resellerId) !== c.currency) {
            failed.push({ id: c.row.id, status: 409, reason: `reseller balance is not in ${c.currency}` });
        }
        else if (have < c.amount) {
            failed.push({ id: c.row.id, status: 402, reason: exports.REASON.insufficient });
        }
        else {
            balance.set(c.row.resellerId, have - c.amount);
            charged.push(c);
        }
    }
    if (charged.length === 0)
        return { charged: [], failed, transactionIds };
    const touched = [...new Set(charged.map((c) => c.row.resellerId))];
    await env.tx.execute((0, drizzle_orm_1.sql) `
    update resellers r set balance = v.balance, updated_at = now()
      from unnest(${intArray(touched)}, ${drizzle_orm_1.sql.param(touched.map((id) => balance.get(id)))}::bigint[]) as v(id, balance)
     where r.id = v.id`);
    // Ledger sign: a reseller debit is negative (ledger.ts: money debited is negative).
    const res = await env.tx.execute((0, drizzle_orm_1.sql) `
    insert into transactions (type, amount, currency, subscriber_id, username, reseller_id, created_by)
    select ${type}, -c.amount, c.currency, c.subscriber_id, c.username, c.reseller_id, ${env.auth.managerId}
      from unnest(${drizzle_orm_1.sql.param(charged.map((c) => c.amount))}::bigint[], ${drizzle_orm_1.sql.param(charged.map((c) => c.currency))}::text[],
                  ${intArray(charged.map((c) => c.row.id))}, ${drizzle_orm_1.sql.param(charged.map((c) => c.row.username))}::text[],
                  ${intArray(charged.map((c) => c.row.resellerId))}) as c(amount, currency, subscriber_id, username, reseller_id)
    returning id, subscriber_id`);
    for (const r of res.rows)
        transactionIds.set(Number(r.subscriber_id), Number(r.id));
    return { charged: charged.map((c) => c.row), failed, transactionIds };
}
// ------------------------------------------------------------------ operations
const renew = async (env, rows) => {
    const failed = [];
    const plans = await (0, subscriber_view_1.plansById)(env.tx, rows.map((r) => r.serviceId));
    const charges = [];
    for (const r of rows) {
        if (r.lastRenewedOn === env.today)
            failed.push({ id: r.id, status: 409, reason: exports.REASON.renewedToday });
        else {
            const plan = plans.get(r.serviceId);
            charges.push({ row: r, amount: (0, subscriber_view_1.renewalPrice)(r, plan), currency: plan.currency });
        }
    }
    const { charged, failed: unpaid, transactionIds } = await chargeResellers(env, charges, 'renewal');
    failed.push(...unpaid);
    const extra = new Map();
    if (charged.length === 0)
        return done(failed, extra);
    const ids = idsOf(charged);
    await env.tx.execute((0, drizzle_orm_1.sql) `
    update subscribers s
       set expiry_date = greatest(s.expiry_date, ${env.today}::date) + p.duration_days,
           last_renewed_on = ${env.today}::date,
           daily_quota_used = 0, monthly_quota_used = 0, extra_quota_bytes = 0, fup_level = 0,
           updated_at = now()
      from services p
     where p.id = s.service_id and s.id = any(${intArray(ids)})`);
    await (0, radius_rows_1.syncAccessRows)(env.tx, ids, env.today);
    await (0, outbox_1.queueDisconnect)(env.tx, charged, 'renew');
    // One numbering bump and two multi-row inserts for the whole batch, in id order like the charges.
    const records = await (0, billing_1.createInvoices)(env.tx, charged.map((r) => {
        const plan = plans.get(r.serviceId);
        return {
            subscriberId: r.id,
            resellerId: r.resellerId,
            items: [{ description: `Renewal: ${plan.name} (${plan.durationDays} days)`, qty: 1, unitPrice: (0, subscriber_view_1.renewalPrice)(r, plan) }],
            currency: plan.currency,
            kind: 'renewal',
            createdBy: env.auth.managerId,
        };
    }));
    for (const [i, r] of charged.entries()) {
        const { invoice } = records[i];
        // The wallet pays first when it holds credit; an empty wallet (most subscribers) costs no statement.
        const paid = r.walletBalance > 0 ? await (0, billing_1.payFromWallet)(env.tx, { invoiceId: invoice.id, createdBy: env.auth.managerId }) : { applied: 0 };
        extra.set(r.id, {
            transaction_id: transactionIds.get(r.id),
            invoice_id: invoice.id,
            invoice_number: invoice.invoiceNumber,
            wallet_applied: (0, money_1.fromMinor)(paid.applied, invoice.currency),
        });
    }
    return done(failed, extra);
};
exports.renew = renew;
const disconnect = async (env, rows) => {
    await (0, outbox_1.queueDisconnect)(env.tx, rows, 'disconnect');
    return done();
};
exports.disconnect = disconnect;
function setStatus(status) {
    return async (env, rows) => {
        const changed = rows.filter((r) => r.status !== status);
        if (changed.length === 0)
            return done();
        await env.tx.update(schema_1.subscribers).set({ status, updatedAt: (0, drizzle_orm_1.sql) `now()` }).where((0, drizzle_orm_1.inArray)(schema_1.subscribers.id, idsOf(changed)));
        await (0, radius_rows_1.syncAccessRows)(env.tx, idsOf(changed), env.today);
        if (status === 'inactive')
            await (0, outbox_1.queueDisconnect)(env.tx, changed, 'disable');
        return done();
    };
}
exports.enable = setStatus('active');
exports.disable = setStatus('inactive');
/** Back to full speed: the tier group goes and the live session gets the plain rate by CoA. */
async function liftFup(env, rows) {
    const throttled = idsOf(rows.filter((r) => r.fupLevel > 0));
    await (0, fup_rate_1.writeFupMembership)(env.tx, throttled);
    await (0, fup_rate_1.queueRateLimit)(env.tx, throttled);
}
const resetFup = async (env, rows) => {
    await env.tx.update(schema_1.subscribers).set({ dailyQuotaUsed: 0, fupLevel: 0, updatedAt: (0, drizzle_orm_1.sql) `now()` }).where((0, drizzle_orm_1.inArray)(schema_1.subscribers.id, idsOf(rows)));
    await liftFup(env, rows);
    return done();
};
exports.resetFup = resetFup;
const softDelete = async (env, rows) => {
    await env.tx.update(schema_1.subscribers).set({ deletedAt: (0, drizzle_orm_1.sql) `now()`, updatedAt: (0, drizzle_orm_1.sql) `now()` }).where((0, drizzle_orm_1.inArray)(schema_1.subscribers.id, idsOf(rows)));
    await (0, radius_rows_1.removeAccessRows)(env.tx, rows.map((r) => r.username));
    await (0, outbox_1.queueDisconnect)(env.tx, rows, 'delete');
    return done();
};
exports.softDelete = softDelete;
const resetMac = async (env, rows) => {
    await env.tx.update(schema_1.subscribers).set({ macAddress: null, updatedAt: (0, drizzle_orm_1.sql) `now()` }).where((0, drizzle_orm_1.inArray)(schema_1.subscribers.id, idsOf(rows)));
    await (0, radius_rows_1.syncAccessRows)(env.tx, idsOf(rows), env.today);
    return done();
};
exports.resetMac = resetMac;
const refill = async (env, rows) => {
    const fee = feeMinor(env.settings.refill_fee, env.settings.currency);
    let ok = rows;
    const failed = [];
    if (fee > 0) {
        const res = await chargeResellers(env, rows.map((row) => ({ row, amount: fee, currency: env.settings.currency })), 'refill_fee');
        ok = res.charged;
        failed.push(...res.failed);
    }
    if (ok.length) {
        await env.tx.update(schema_1.subscribers)
            .set({ dailyQuotaUsed: 0, monthlyQuotaUsed: 0, fupLevel: 0, updatedAt: (0, drizzle_orm_1.sql) `now()` })
            .where((0, drizzle_orm_1.inArray)(schema_1.subscribers.id, idsOf(ok)));
        await liftFup(env, ok);
    }
    return done(failed);
};
exports.refill = refill;
/** A fee setting is a decimal in the system currency; rounding it to the minor unit is the operator's intent. */
function feeMinor(fee, currency) {
    try {
        return (0, money_1.toMinor)(fee, currency);
    }
    catch {
        return (0, money_1.toMinor)(Number(fee.toFixed(2)), currency);
    }
}
function setQuota(column) {
    return async (env, rows, payload) => {
        const gb = String((0, subscriber_1.clamp)(payload.gb, 0, subscriber_1.QUOTA_GB_MAX));
        const set = column === 'daily' ? { dailyQuotaGb: gb } : { monthlyQuotaGb: gb };
        await env.tx.update(schema_1.subscribers).set({ ...set, updatedAt: (0, drizzle_orm_1.sql) `now()` }).where((0, drizzle_orm_1.inArray)(schema_1.subscribers.id, idsOf(rows)));
        return done();
    };
}
const setPrice = async (env, rows, payload) => {
    const price = (0, subscriber_1.clamp)(payload.price, 0, subscriber_1.PRICE_MAX);
    const plans = await (0, subscriber_view_1.plansById)(env.tx, rows.map((r) => r.serviceId));
    const failed = [];
    const byPrice = new Map();
    for (const r of rows) {
        const currency = plans.get(r.serviceId).currency;
        let minor;
        try {
            minor = (0, money_1.toMinor)(price, currency);
        }
        catch {
            failed.push({ id: r.id, status: 400, reason: `price has more decimal places than ${currency} allows` });
            continue;
        }
        byPrice.set(minor, [...(byPrice.get(minor) ?? []), r.id]);
    }
    for (const [minor, ids] of byPrice) {
        await env.tx.update(schema_1.subscribers)
            .set({ price: minor, overridePrice: payload.override_price, updatedAt: (0, drizzle_orm_1.sql) `now()` })
            .where((0, drizzle_orm_1.inArray)(schema_1.subscribers.id, ids));
    }
    return done(failed);
};
exports.setPrice = setPrice;
const setReseller = async (env, rows, payload) => {
    await env.tx.update(schema_1.subscribers).set({ resellerId: payload.reseller_id, updatedAt: (0, drizzle_orm_1.sql) `now()` }).where((0, drizzle_orm_1.inArray)(schema_1.subscribers.id, idsOf(rows)));
    return done();
};
exports.setReseller = setReseller;
/**
 * Checks the owning resellers' service limits for `plan` when `rows` move onto it (rows already on
 * it are not counted twice). Limit rows are locked so concurrent moves cannot overfill a cap.
 */
async function checkServiceLimits(tx, rows, planId) {
    const resellerIds = [...new Set(rows.map((r) => r.resellerId))].sort((a, b) => a - b);
    if (resellerIds.length === 0)
        return { ok: [], failed: [] };
    const limits = await tx.select().from(schema_1.resellerServiceLimits)
        .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.resellerServiceLimits.serviceId, planId), (0, drizzle_orm_1.inArray)(schema_1.resellerServiceLimits.resellerId, resellerIds)))
        .orderBy((0, drizzle_orm_1.asc)(schema_1.resellerServiceLimits.resellerId))
        .for('update');
    const capped = limits.filter((l) => l.maxSubscribers !== null).map((l) => l.resellerId);
    const counts = new Map();
    if (capped.length) {
        const res = await tx.execute((0, drizzle_orm_1.sql) `
      select reseller_id, count(*)::int as n from subscribers
       where service_id = ${planId} and deleted_at is null and reseller_id = any(${intArray(capped)})
       group by reseller_id`);
        for (const r of res.rows)
            counts.set(Number(r.reseller_id), Number(r.n));
    }
    const limitOf = new Map(limits.map((l) => [l.resellerId, l.maxSubscribers]));
    const ok = [];
    const failed = [];
    for (const r of rows) {
        if (!limitOf.has(r.resellerId)) {
            failed.push({ id: r.id, status: 403, reason: exports.REASON.noLimit });
            continue;
        }
        const max = limitOf.get(r.resellerId);
        const n = counts.get(r.resellerId) ?? 0;
        if (max !== null && max !== undefined && r.serviceId !== planId) {
            if (n >= max) {
                failed.push({ id: r.id, status: 403, reason: exports.REASON.limitReached });
                continue;
            }
            counts.set(r.resellerId, n + 1);
        }
        ok.push(r);
    }
    return { ok, failed };
}
/**
 * Moves rows onto `plan`. With charge_difference each move is priced by the billing unit's quote
 * (taken before the move, from the current plan) and settled after it: an invoice for the net due
 * or a wallet credit for a net refund.
 */
const setService = async (env, rows, payload) => {
    const { plan } = payload;
    const { ok, failed } = await checkServiceLimits(env.tx, rows, plan.id);
    const quotes = new Map();
    const moving = [];
    for (const r of ok.filter((row) => row.serviceId !== plan.id)) {
        if (payload.charge_difference) {
            try {
                quotes.set(r.id, await (0, billing_1.quoteServiceChange)(env.tx, { subscriberId: r.id, newServiceId: plan.id, today: env.today, serviceField: 'service_id' }));
            }
            catch (err) {
                if (!(err instanceof errors_1.ApiError))
                    throw err;
                failed.push({ id: r.id, status: err.code, reason: err.message });
                continue;
            }
        }
        moving.push(r);
    }
    if (moving.length === 0)
        return done(failed);
    const ids = idsOf(moving);
    // A new plan means a new pool: the stored address goes so the next login draws from it.
    await env.tx.update(schema_1.subscribers)
        .set({ serviceId: plan.id, staticIp: null, updatedAt: (0, drizzle_orm_1.sql) `now()` })
        .where((0, drizzle_orm_1.inArray)(schema_1.subscribers.id, ids));
    await (0, radius_rows_1.syncAccessRows)(env.tx, ids, env.today);
    await (0, outbox_1.queueDisconnect)(env.tx, moving, 'service_change');
    const extra = new Map();
    for (const [id, quote] of quotes) {
        const settled = await (0, billing_1.settleServiceChange)(env.tx, quote, { createdBy: env.auth.managerId });
        extra.set(id, {
            net_amount_due: (0, money_1.fromMinor)(quote.netAmountDue, quote.currency),
            invoice_id: settled.invoice?.invoice.id ?? null,
            wallet_transaction_id: settled.walletCredit?.transactionId ?? null,
        });
    }
    return done(failed, extra);
};
exports.setService = setService;
/** Serialises static address assignment: two batches drawing from one pool never pick the same address. */
async function lockAddressAssignment(tx) {
    await tx.execute((0, drizzle_orm_1.sql) `select pg_advisory_xact_lock(hashtext('subscribers.static_ip'))`);
}
/** Addresses held by a live subscriber other than `except`, or in another username's reply rows. */
async function takenAddresses(tx, candidates, except) {
    const res = await tx.execute((0, drizzle_orm_1.sql) `
    select host(s.static_ip) as ip from subscribers s
     where s.deleted_at is null and s.static_ip = any(${drizzle_orm_1.sql.param(candidates)}::inet[]) and s.id <> all(${intArray(idsOf(except))})
    union
    select r.value from radreply r
     where r.attribute = 'Framed-IP-Address' and r.value = any(${drizzle_orm_1.sql.param(candidates)}::text[])
       and r.username <> all(${drizzle_orm_1.sql.param(except.map((e) => e.username))}::text[])`);
    return new Set(res.rows.map((r) => r.ip));
}
const setStaticIp = async (env, rows, payload) => {
    await lockAddressAssignment(env.tx);
    const failed = [];
    const assigned = [];
    if (payload.ip !== undefined) {
        const taken = await takenAddresses(env.tx, [payload.ip], rows);
        const [first, ...rest] = rows;
        if (taken.has(payload.ip))
            failed.push({ id: first.id, status: 409, reason: exports.REASON.ipUsed });
        else
            assigned.push({ row: first, ip: payload.ip });
        // One address, one subscriber: the others of the batch cannot share it.
        for (const r of rest)
            failed.push({ id: r.id, status: 409, reason: exports.REASON.ipUsed });
    }
    else {
        const res = await env.tx.execute((0, drizzle_orm_1.sql) `
      with pool as (select range_start, range_end from ip_pools where name = ${payload.pool_name}),
      candidates as (
        select (p.range_start + g)::inet as a from pool p, generate_series(0::bigint, p.range_end - p.range_start) g
      )
      select host(c.a) as ip from candidates c
       where not exists (select 1 from subscribers s where s.static_ip = c.a and s.deleted_at is null)
         and not exists (select 1 from radreply r where r.attribute = 'Framed-IP-Address' and r.value = host(c.a))
       order by c.a
       limit ${rows.length}`);
        rows.forEach((row, i) => {
            const ip = res.rows[i]?.ip;
            if (ip)
                assigned.push({ row, ip });
            else
                failed.push({ id: row.id, status: 409, reason: exports.REASON.poolExhausted });
        });
    }
    if (assigned.length) {
        await env.tx.execute((0, drizzle_orm_1.sql) `
      update subscribers s set static_ip = v.ip, updated_at = now()
        from unnest(${intArray(assigned.map((a) => a.row.id))}, ${drizzle_orm_1.sql.param(assigned.map((a) => a.ip))}::inet[]) as v(id, ip)
       where s.id = v.id`);
        const ids = assigned.map((a) => a.row.id);
        await (0, radius_rows_1.syncAccessRows)(env.tx, ids, env.today);
        await (0, outbox_1.queueDisconnect)(env.tx, assigned.map((a) => a.row), 'static_ip');
    }
    return done(failed);
};
exports.setStaticIp = setStaticIp;
/**
 * Renames each row to `newName(row)` (null: not renamed, with `skipReason`) in every record that
 * carries the username, charging the rename fee per subscriber when one is configured.
 */
function rename(newName, skipReason) {
    return async (env, rows) => {
        const failed = [];
        const wanted = [];
        const claimed = new Set();
        for (const row of rows) {
            const to = newName(row);
            if (to === null)
                failed.push({ id: row.id, status: 400, reason: skipReason });
            else if (!(0, subscriber_1.isValidUsername)(to))
                failed.push({ id: row.id, status: 400, reason: 'new_username is not a valid username' });
            else if (to === row.username)
                continue;
            else if (claimed.has(to))
                failed.push({ id: row.id, status: 409, reason: exports.REASON.usernameTaken });
            else {
                claimed.add(to);
                wanted.push({ row, to });
            }
        }
        if (wanted.length === 0)
            return done(failed);
        const existing = await env.tx.select({ username: schema_1.subscribers.username }).from(schema_1.subscribers)
            .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.inArray)(schema_1.subscribers.username, wanted.map((w) => w.to)), (0, drizzle_orm_1.isNull)(schema_1.subscribers.deletedAt)));
        const taken = new Set(existing.map((e) => e.username));
        let free = wanted.filter((w) => {
            if (!taken.has(w.to))
                return true;
            failed.push({ id: w.row.id, status: 409, reason: exports.REASON.usernameTaken });
            return false;
        });
        const fee = feeMinor(env.settings.rename_fee, env.settings.currency);
        if (fee > 0 && free.length) {
            const res = await chargeResellers(env, free.map((w) => ({ row: w.row, amount: fee, currency: env.settings.currency })), 'rename_fee');
            const paid = new Set(idsOf(res.charged));
            free = free.filter((w) => paid.has(w.row.id));
            failed.push(...res.failed);
        }
        if (free.length === 0)
            return done(failed);
        await env.tx.execute((0, drizzle_orm_1.sql) `
      update subscribers s set username = v.new_name, updated_at = now()
        from unnest(${intArray(free.map((w) => w.row.id))}, ${drizzle_orm_1.sql.param(free.map((w) => w.to))}::text[]) as v(id, new_name)
       where s.id = v.id`);
        // The fee rows were written under the old name; renameAccessRows moves them with the rest.
        await (0, radius_rows_1.renameAccessRows)(env.tx, free.map((w) => ({ id: w.row.id, from: w.row.username, to: w.to })));
        await (0, outbox_1.queueDisconnect)(env.tx, free.map((w) => w.row), 'rename');
        return done(failed);
    };
}
//# sourceMappingURL=operations.js.map