"use strict";
var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    var desc = Object.getOwnPropertyDescriptor(m, k);
    if (!desc || ("get" in desc ? !m.__esModule : desc.writable || desc.configurable)) {
      desc = { enumerable: true, get: function() { return m[k]; } };
    }
    Object.defineProperty(o, k2, desc);
}) : (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    o[k2] = m[k];
}));
var __setModuleDefault = (this && this.__setModuleDefault) || (Object.create ? (function(o, v) {
    Object.defineProperty(o, "default", { enumerable: true, value: v });
}) : function(o, v) {
    o["default"] = v;
});
var __importStar = (this && this.__importStar) || (function () {
    var ownKeys = function(o) {
        ownKeys = Object.getOwnPropertyNames || function (o) {
            var ar = [];
            for (var k in o) if (Object.prototype.hasOwnProperty.call(o, k)) ar[ar.length] = k;
            return ar;
        };
        return ownKeys(o);
    };
    return function (mod) {
        if (mod && mod.__esModule) return mod;
        var result = {};
        if (mod != null) for (var k = ownKeys(mod), i = 0; i < k.length; i++) if (k[i] !== "default") __createBinding(result, mod, k[i]);
        __setModuleDefault(result, mod);
        return result;
    };
})();
Object.defineProperty(exports, "__esModule", { value: true });
exports.subscribersService = void 0;
/**
 * Subscribers: records (list, read, create, update, delete) and the single actions of spec 4.2.
 * Each single action runs the same set-based operation as its bulk counterpart (operations.ts)
 * over one locked row, then answers with the updated subscriber.
 */
const drizzle_orm_1 = require("drizzle-orm");
const policy_1 = require("../../shared/auth/policy");
const secrets_1 = require("../../shared/auth/secrets");
const client_1 = require("../../shared/db/client");
const errors_1 = require("../../shared/db/errors");
const schema_1 = require("../../shared/db/schema");
const billing_1 = require("../../shared/billing");
const subscriber_1 = require("../../shared/domain/subscriber");
const errors_2 = require("../../shared/errors");
const context_1 = require("../../shared/http/context");
const money_1 = require("../../shared/money");
const settings_1 = require("../../shared/settings");
const ops = __importStar(require("./operations"));
const outbox_1 = require("./outbox");
const views_1 = require("../../shared/views");
const radius_rows_1 = require("./radius-rows");
const subscriber_list_1 = require("./subscriber-list");
const subscriber_view_1 = require("./subscriber-view");
const subscriber_schemas_1 = require("./subscriber-schemas");
const schemas_1 = require("../../shared/http/schemas");
const NOT_FOUND = 'subscriber not found';
async function loadRow(id, live = true) {
    const [row] = await (0, client_1.db)().select().from(schema_1.subscribers)
        .where(live ? (0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.subscribers.id, id), (0, drizzle_orm_1.isNull)(schema_1.subscribers.deletedAt)) : (0, drizzle_orm_1.eq)(schema_1.subscribers.id, id));
    return row;
}
/** The row, after the policy's 404 / 403 rule for the caller and the kind of access. */
async function rowInScope(auth, id, access) {
    const row = await loadRow(id);
    await (0, policy_1.assertRecordInScope)((0, client_1.db)(), auth, access, row?.resellerId, NOT_FOUND);
    return row;
}
async function livePlan(db_, id) {
    const [plan] = await db_.select().from(schema_1.services).where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.services.id, id), (0, drizzle_orm_1.isNull)(schema_1.services.deletedAt)));
    if (!plan)
        throw (0, errors_2.badRequest)('service_id not found');
    return plan;
}
async function viewOf(row) {
    const plans = await (0, subscriber_view_1.plansById)((0, client_1.db)(), [row.serviceId]);
    return (0, subscriber_view_1.subscriberView)(row, plans.get(row.serviceId)?.currency ?? (await (0, settings_1.loadSettings)((0, client_1.db)(), ['currency'])).currency);
}
function checkUsername(username, field = 'username') {
    if (!(0, subscriber_1.isValidUsername)(username))
        throw (0, errors_2.badRequest)(`${field} must be name or name@realm (letters, digits and . _ -)`);
}
function macOrBadRequest(mac) {
    if (mac === undefined || mac === null || mac === '')
        return mac === '' ? null : mac;
    const normal = (0, subscriber_1.normaliseMac)(mac);
    if (!normal)
        throw (0, errors_2.badRequest)('mac_address must be a MAC address such as AA:BB:CC:DD:EE:FF');
    return normal;
}
function ipOrBadRequest(ip) {
    if (ip === undefined || ip === null || ip === '')
        return ip === '' ? null : ip;
    if (!(0, subscriber_1.isIPv4)(ip))
        throw (0, errors_2.badRequest)('static_ip must be an IPv4 address');
    return ip;
}
function priceOrBadRequest(price, currency) {
    if (price === undefined || price === null)
        return price;
    try {
        return (0, money_1.toMinor)(price, currency);
    }
    catch {
        throw (0, errors_2.badRequest)(`price has more decimal places than ${currency} allows`);
    }
}
/** Same rule as bulk set_static_ip: free among live subscribers and in no other username's reply rows. */
async function assertAddressFree(tx, ip, self) {
    await tx.execute((0, drizzle_orm_1.sql) `select pg_advisory_xact_lock(hashtext('subscribers.static_ip'))`);
    const res = await tx.execute((0, drizzle_orm_1.sql) `
    select 1 from subscribers where deleted_at is null and static_ip = ${ip}::inet and id <> ${self?.id ?? 0}
    union all
    select 1 from radreply where attribute = 'Framed-IP-Address' and value = ${ip} and username <> ${self?.username ?? ''}
    limit 1`);
    if (res.rows.length)
        throw (0, errors_2.conflict)(ops.REASON.ipUsed);
}
function uniqueConflict(err) {
    if ((0, errors_1.isUniqueViolation)(err)) {
        const text = JSON.stringify(err, Object.getOwnPropertyNames(err)) + String(err.cause);
        throw (0, errors_2.conflict)(text.includes('static_ip') ? ops.REASON.ipUsed : ops.REASON.usernameTaken);
    }
    throw err;
}
function throwFailure(f) {
    throw new errors_2.ApiError(f.status, f.reason);
}
/**
 * One subscriber through an operation: the policy decides 404/403, then the row is locked and the
 * operation's own failure (402, 409...) becomes the HTTP error.
 */
async function runSingle(ctx, permission, op, payload) {
    const auth = (0, policy_1.requirePermission)(ctx.meta.auth, permission);
    await rowInScope(auth, ctx.params.id, 'write');
    const scope = await (0, policy_1.scopeFor)((0, client_1.db)(), auth, 'write');
    const settings = await (0, settings_1.loadSettings)((0, client_1.db)());
    const today = (0, subscriber_1.todayIso)();
    const extra = await (0, client_1.db)().transaction(async (tx) => {
        const locked = await ops.lockInScope(tx, scope, [ctx.params.id]);
        if (locked.failed.length)
            throwFailure(locked.failed[0]);
        const result = await op({ tx, auth, today, settings }, locked.rows, payload);
        if (result.failed.length)
            throwFailure(result.failed[0]);
        return result.extra.get(ctx.params.id) ?? {};
    });
    const row = await loadRow(ctx.params.id, false);
    return { data: { ...(await viewOf(row)), ...extra } };
}
/** A `POST /api/subscribers/:id/<path>` action with no body: one operation under one permission. */
const simpleAction = (path, permission, op, summary, errors = {}) => ({
    rest: `POST /api/subscribers/:id/${path}`,
    http: {
        auth: 'jwt', access: permission, summary, tag: 'subscribers', params: (0, schemas_1.idParams)(), body: schemas_1.emptyBody,
        errors: { 403: 'not authorized', 404: 'subscriber not found', ...errors },
    },
    async handler(ctx) {
        return runSingle(ctx, permission, op, {});
    },
});
exports.subscribersService = {
    name: 'subscribers',
    actions: {
        list: {
            rest: 'GET /api/subscribers',
            http: {
                auth: 'jwt',
                access: 'subscribers.view',
                summary: 'List subscribers in scope with filters, search and sort',
                tag: 'subscribers',
                query: subscriber_schemas_1.listQuery,
                errors: { 403: 'Permission denied, or reseller_id outside the caller\'s tree' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requirePermission)(ctx.meta.auth, 'subscribers.view');
                return (0, subscriber_list_1.listSubscribers)(auth, ctx.params);
            },
        },
        get: {
            rest: 'GET /api/subscribers/:id',
            http: {
                auth: 'jwt',
                access: 'subscribers.view',
                summary: 'One subscriber with service, reseller, counters, password and daily_breakdown',
                tag: 'subscribers',
                params: (0, schemas_1.idParams)(),
                errors: { 403: 'not authorized', 404: 'subscriber not found' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requirePermission)(ctx.meta.auth, 'subscribers.view');
                const row = await rowInScope(auth, ctx.params.id, 'read');
                const [plan] = await (0, client_1.db)().select().from(schema_1.services).where((0, drizzle_orm_1.eq)(schema_1.services.id, row.serviceId));
                const [reseller] = await (0, client_1.db)().select().from(schema_1.resellers).where((0, drizzle_orm_1.eq)(schema_1.resellers.id, row.resellerId));
                const since = (0, subscriber_1.addDays)((0, subscriber_1.todayIso)(), -30);
                const usage = await (0, client_1.db)().select({ date: schema_1.dailyUsage.date, downloadBytes: schema_1.dailyUsage.downloadBytes })
                    .from(schema_1.dailyUsage)
                    .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.dailyUsage.subscriberId, row.id), (0, drizzle_orm_1.gte)(schema_1.dailyUsage.date, since)))
                    .orderBy((0, drizzle_orm_1.asc)(schema_1.dailyUsage.date));
                const view = (0, subscriber_view_1.subscriberView)(row, plan.currency);
                const effective = (own, planned) => (own ?? planned) === null ? null : Number(own ?? planned);
                return {
                    data: {
                        ...view,
                        service: (0, views_1.planView)(plan),
                        reseller: (0, views_1.resellerView)(reseller),
                        counters: {
                            daily_quota_used: row.dailyQuotaUsed,
                            monthly_quota_used: row.monthlyQuotaUsed,
                            daily_quota_gb: effective(row.dailyQuotaGb, plan.dailyQuotaGb),
                            monthly_quota_gb: effective(row.monthlyQuotaGb, plan.monthlyQuotaGb),
                            extra_quota_bytes: row.extraQuotaBytes,
                            fup_level: row.fupLevel,
                            wallet_balance: view.wallet_balance,
                        },
                    },
                    password: (0, secrets_1.decrypt)(row.passwordEnc),
                    daily_breakdown: usage.map((u) => ({ date: u.date, download_bytes: u.downloadBytes })),
                };
            },
        },
        create: {
            rest: 'POST /api/subscribers',
            http: {
                auth: 'jwt',
                access: 'subscribers.create',
                summary: 'Create a subscriber with its FreeRADIUS rows',
                tag: 'subscribers',
                success: 201,
                body: subscriber_schemas_1.createBody,
                errors: { 400: 'service_id not found, or a field is invalid', 403: 'reseller has no service limit for this plan', 409: 'username already exists, or static_ip already used' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requirePermission)(ctx.meta.auth, 'subscribers.create');
                const p = ctx.params;
                checkUsername(p.username);
                const mac = macOrBadRequest(p.mac_address);
                const staticIp = ipOrBadRequest(p.static_ip);
                const plan = await livePlan((0, client_1.db)(), p.service_id);
                const price = priceOrBadRequest(p.price, plan.currency);
                const resellerId = await (0, policy_1.targetReseller)((0, client_1.db)(), auth, p.reseller_id);
                const settings = await (0, settings_1.loadSettings)((0, client_1.db)());
                const today = (0, subscriber_1.todayIso)();
                try {
                    const row = await (0, client_1.db)().transaction(async (tx) => {
                        const [taken] = await tx.select({ id: schema_1.subscribers.id }).from(schema_1.subscribers)
                            .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.subscribers.username, p.username), (0, drizzle_orm_1.isNull)(schema_1.subscribers.deletedAt)));
                        if (taken)
                            throw (0, errors_2.conflict)(ops.REASON.usernameTaken);
                        const probe = { id: 0, resellerId, serviceId: 0 };
                        const limits = await ops.checkServiceLimits(tx, [probe], plan.id);
                        if (limits.failed.length)
                            throw (0, errors_2.forbidden)(limits.failed[0].reason);
                        if (staticIp)
                            await assertAddressFree(tx, staticIp);
                        const [inserted] = await tx.insert(schema_1.subscribers).values({
                            username: p.username,
                            passwordEnc: (0, secrets_1.encrypt)(p.password),
                            fullName: p.full_name ?? null,
                            phone: p.phone ?? null,
                            macAddress: mac ?? null,
                            serviceId: plan.id,
                            resellerId,
                            staticIp: staticIp ?? null,
                            region: p.region ?? null,
                            building: p.building ?? null,
                            address: p.address ?? null,
                            nationality: p.nationality ?? null,
                            country: p.country ?? null,
                            notes: p.notes ?? null,
                            price: price ?? null,
                            overridePrice: p.override_price ?? false,
                            expiryDate: p.expiry_date ?? (0, subscriber_1.addDays)(today, plan.durationDays),
                        }).returning();
                        await (0, radius_rows_1.writePasswordRow)(tx, inserted.username, p.password, settings.radius_password_mode);
                        await (0, radius_rows_1.syncAccessRows)(tx, [inserted.id], today);
                        return inserted;
                    });
                    return { data: (0, subscriber_view_1.subscriberView)(row, plan.currency) };
                }
                catch (err) {
                    return uniqueConflict(err);
                }
            },
        },
        update: {
            rest: 'PUT /api/subscribers/:id',
            http: {
                auth: 'jwt',
                access: 'subscribers.edit (username change: subscribers.rename; reseller_id: subscribers.transfer)',
                summary: 'Update any subset of the create fields; unknown fields are dropped',
                tag: 'subscribers',
                params: (0, schemas_1.idParams)(),
                body: subscriber_schemas_1.updateBody,
                dropUnknown: true,
                errors: { 400: 'service_id not found, or a field is invalid', 403: 'not authorized', 404: 'subscriber not found', 409: 'username already exists, or static_ip already used' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requirePermission)(ctx.meta.auth, 'subscribers.edit');
                const p = ctx.params;
                const current = await rowInScope(auth, p.id, 'write');
                if (p.username !== undefined && p.username !== current.username) {
                    (0, policy_1.requirePermission)(auth, 'subscribers.rename');
                    checkUsername(p.username);
                }
                const mac = macOrBadRequest(p.mac_address);
                const staticIp = ipOrBadRequest(p.static_ip);
                const newPlan = p.service_id !== undefined && p.service_id !== current.serviceId ? await livePlan((0, client_1.db)(), p.service_id) : undefined;
                const currency = newPlan?.currency ?? (await (0, subscriber_view_1.plansById)((0, client_1.db)(), [current.serviceId])).get(current.serviceId).currency;
                const price = priceOrBadRequest(p.price, currency);
                let resellerId;
                if (p.reseller_id !== undefined && p.reseller_id !== current.resellerId) {
                    (0, policy_1.requirePermission)(auth, 'subscribers.transfer');
                    resellerId = await (0, policy_1.targetReseller)((0, client_1.db)(), auth, p.reseller_id);
                }
                const settings = await (0, settings_1.loadSettings)((0, client_1.db)());
                const today = (0, subscriber_1.todayIso)();
                const scope = await (0, policy_1.scopeFor)((0, client_1.db)(), auth, 'write');
                try {
                    await (0, client_1.db)().transaction(async (tx) => {
                        const locked = await ops.lockInScope(tx, scope, [p.id]);
                        if (locked.failed.length)
                            throwFailure(locked.failed[0]);
                        const env = { tx, auth, today, settings };
                        let row = locked.rows[0];
                        if (newPlan) {
                            const result = await ops.setService(env, [row], { plan: newPlan, charge_difference: false });
                            if (result.failed.length)
                                throwFailure(result.failed[0]);
                        }
                        const set = {};
                        const keep = (k) => p[k] !== undefined;
                        if (keep('full_name'))
                            set.fullName = p.full_name;
                        if (keep('phone'))
                            set.phone = p.phone;
                        if (mac !== undefined)
                            set.macAddress = mac;
                        if (keep('expiry_date'))
                            set.expiryDate = p.expiry_date;
                        if (keep('region'))
                            set.region = p.region;
                        if (keep('building'))
                            set.building = p.building;
                        if (keep('address'))
                            set.address = p.address;
                        if (keep('nationality'))
                            set.nationality = p.nationality;
                        if (keep('country'))
                            set.country = p.country;
                        if (keep('notes'))
                            set.notes = p.notes;
                        if (price !== undefined)
                            set.price = price;
                        if (keep('override_price'))
                            set.overridePrice = p.override_price;
                        if (resellerId !== undefined)
                            set.resellerId = resellerId;
                        if (keep('password'))
                            set.passwordEnc = (0, secrets_1.encrypt)(p.password);
                        const addressChanged = staticIp !== undefined && staticIp !== row.staticIp;
                        if (addressChanged) {
                            if (staticIp)
                                await assertAddressFree(tx, staticIp, row);
                            set.staticIp = staticIp;
                        }
                        if (Object.keys(set).length) {
                            [row] = await tx.update(schema_1.subscribers).set({ ...set, updatedAt: (0, drizzle_orm_1.sql) `now()` }).where((0, drizzle_orm_1.eq)(schema_1.subscribers.id, row.id)).returning();
                        }
                        if (p.username !== undefined && p.username !== row.username) {
                            const renamed = await ops.rename(() => p.username, 'new_username is invalid')(env, [row], {});
                            if (renamed.failed.length)
                                throwFailure(renamed.failed[0]);
                        }
                        if (p.password !== undefined) {
                            const [fresh] = await tx.select({ username: schema_1.subscribers.username }).from(schema_1.subscribers).where((0, drizzle_orm_1.eq)(schema_1.subscribers.id, row.id));
                            await (0, radius_rows_1.writePasswordRow)(tx, fresh.username, p.password, settings.radius_password_mode);
                        }
                        await (0, radius_rows_1.syncAccessRows)(tx, [row.id], today);
                        if (addressChanged && !newPlan)
                            await (0, outbox_1.queueDisconnect)(tx, [row], 'static_ip');
                    });
                }
                catch (err) {
                    return uniqueConflict(err);
                }
                return { data: await viewOf((await loadRow(p.id))) };
            },
        },
        remove: {
            rest: 'DELETE /api/subscribers/:id',
            http: {
                auth: 'jwt',
                access: 'subscribers.delete',
                summary: 'Soft delete: the username becomes reusable and the FreeRADIUS rows are removed',
                tag: 'subscribers',
                params: (0, schemas_1.idParams)(),
                errors: { 403: 'not authorized', 404: 'subscriber not found' },
            },
            async handler(ctx) {
                return runSingle(ctx, 'subscribers.delete', ops.softDelete, {});
            },
        },
        removePermanently: {
            rest: 'DELETE /api/subscribers/:id/permanent',
            http: {
                auth: 'jwt',
                access: 'admin',
                summary: 'Hard delete: everything but the ledger, invoices and accounting history',
                tag: 'subscribers',
                params: (0, schemas_1.idParams)(),
                errors: { 403: 'Not an admin', 404: 'subscriber not found' },
            },
            async handler(ctx) {
                (0, policy_1.requireAdmin)(ctx.meta.auth);
                const row = await loadRow(ctx.params.id, false);
                if (!row)
                    throw (0, errors_2.notFound)(NOT_FOUND);
                await (0, client_1.db)().transaction(async (tx) => {
                    const [locked] = await tx.select().from(schema_1.subscribers).where((0, drizzle_orm_1.eq)(schema_1.subscribers.id, row.id)).for('update');
                    if (!locked)
                        throw (0, errors_2.notFound)(NOT_FOUND);
                    // A soft-deleted row's username may already belong to a new subscriber: its rows stay.
                    if (locked.deletedAt === null) {
                        await tx.delete(schema_1.radcheck).where((0, drizzle_orm_1.eq)(schema_1.radcheck.username, locked.username));
                        await tx.delete(schema_1.radreply).where((0, drizzle_orm_1.eq)(schema_1.radreply.username, locked.username));
                        await tx.delete(schema_1.radusergroup).where((0, drizzle_orm_1.eq)(schema_1.radusergroup.username, locked.username));
                        await (0, outbox_1.queueDisconnect)(tx, [locked], 'delete');
                    }
                    await tx.delete(schema_1.dailyUsage).where((0, drizzle_orm_1.eq)(schema_1.dailyUsage.subscriberId, locked.id));
                    await tx.delete(schema_1.bandwidthRules).where((0, drizzle_orm_1.eq)(schema_1.bandwidthRules.subscriberId, locked.id));
                    await tx.delete(schema_1.walletEntries).where((0, drizzle_orm_1.eq)(schema_1.walletEntries.subscriberId, locked.id));
                    await tx.delete(schema_1.subscribers).where((0, drizzle_orm_1.eq)(schema_1.subscribers.id, locked.id));
                    await tx.insert(schema_1.auditLog).values({
                        managerId: (0, context_1.authOf)(ctx).managerId, action: 'subscriber.delete_permanent', entity: 'subscriber', entityId: locked.id,
                        details: { username: locked.username },
                    });
                });
                return { data: { id: row.id, deleted: true } };
            },
        },
        renew: simpleAction('renew', 'subscribers.renew', ops.renew, 'Charge the reseller, extend expiry by the plan duration, reset counters, create the renewal invoice, reconnect', { 402: 'insufficient reseller balance', 409: 'already renewed today' }),
        resetFup: simpleAction('reset-fup', 'subscribers.reset_fup', ops.resetFup, 'Daily quota counter and FUP tier to 0 (monthly untouched)'),
        resetMac: simpleAction('reset-mac', 'subscribers.reset_mac', ops.resetMac, 'Clear the bound MAC so the next connection rebinds'),
        activate: simpleAction('activate', 'subscribers.inactivate', ops.enable, 'Status active'),
        deactivate: simpleAction('deactivate', 'subscribers.inactivate', ops.disable, 'Status inactive; FreeRADIUS refuses it; disconnect queued'),
        refill: simpleAction('refill', 'subscribers.refill_quota', ops.refill, 'Reset daily and monthly counters; charge the refill fee to the reseller', { 402: 'insufficient reseller balance' }),
        rename: {
            rest: 'POST /api/subscribers/:id/rename',
            http: {
                auth: 'jwt',
                access: 'subscribers.rename',
                summary: 'Change the username everywhere it is stored; charges the rename fee to the reseller',
                tag: 'subscribers',
                params: (0, schemas_1.idParams)(),
                body: subscriber_schemas_1.renameBody,
                errors: { 400: 'new_username is invalid', 402: 'insufficient reseller balance', 403: 'not authorized', 404: 'subscriber not found', 409: 'username already exists' },
            },
            async handler(ctx) {
                checkUsername(ctx.params.new_username, 'new_username');
                return runSingle(ctx, 'subscribers.rename', ops.rename(() => ctx.params.new_username, 'new_username is invalid'), {});
            },
        },
        addDays: {
            rest: 'POST /api/subscribers/:id/add-days',
            http: {
                auth: 'jwt',
                access: 'subscribers.add_days',
                summary: 'Extend expiry_date without a payment (audited with the reason)',
                tag: 'subscribers',
                params: (0, schemas_1.idParams)(),
                body: subscriber_schemas_1.addDaysBody,
                errors: { 403: 'not authorized', 404: 'subscriber not found' },
            },
            async handler(ctx) {
                const { days, reason } = ctx.params;
                const addDaysOp = async (env, rows) => {
                    const [row] = rows;
                    const expiry = (0, subscriber_1.addDays)(row.expiryDate, days);
                    await env.tx.update(schema_1.subscribers).set({ expiryDate: expiry, updatedAt: (0, drizzle_orm_1.sql) `now()` }).where((0, drizzle_orm_1.eq)(schema_1.subscribers.id, row.id));
                    await (0, radius_rows_1.syncAccessRows)(env.tx, [row.id], env.today);
                    await env.tx.insert(schema_1.auditLog).values({
                        managerId: env.auth.managerId, action: 'subscriber.add_days', entity: 'subscriber', entityId: row.id,
                        details: { days, reason, from: row.expiryDate, to: expiry },
                    });
                    return { failed: [], extra: new Map() };
                };
                return runSingle(ctx, 'subscribers.add_days', addDaysOp, {});
            },
        },
        changeService: {
            rest: 'POST /api/subscribers/:id/change-service',
            http: {
                auth: 'jwt',
                access: 'subscribers.change_service',
                summary: 'Move to another plan; with charge_difference, invoice the prorated net due or credit the wallet',
                tag: 'subscribers',
                params: (0, schemas_1.idParams)(),
                body: subscriber_schemas_1.changeServiceBody,
                errors: { 400: 'service_id not found', 403: 'not authorized, or reseller has no service limit for this plan', 404: 'subscriber not found' },
            },
            async handler(ctx) {
                (0, policy_1.requirePermission)(ctx.meta.auth, 'subscribers.change_service');
                await rowInScope((0, context_1.authOf)(ctx), ctx.params.id, 'write');
                const plan = await livePlan((0, client_1.db)(), ctx.params.service_id);
                return runSingle(ctx, 'subscribers.change_service', ops.setService, {
                    plan, charge_difference: ctx.params.charge_difference ?? false,
                });
            },
        },
        changeServicePrice: {
            rest: 'GET /api/subscribers/:id/calculate-change-service-price',
            http: {
                auth: 'jwt',
                access: 'subscribers.change_service',
                summary: 'Prorated price of a plan change, without committing',
                tag: 'subscribers',
                params: (0, schemas_1.idParams)(),
                query: subscriber_schemas_1.changePriceQuery,
                errors: { 400: 'service_id not found', 403: 'not authorized', 404: 'subscriber not found' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requirePermission)(ctx.meta.auth, 'subscribers.change_service');
                const row = await rowInScope(auth, ctx.params.id, 'write');
                const q = await (0, billing_1.quoteServiceChange)((0, client_1.db)(), { subscriberId: row.id, newServiceId: ctx.params.service_id, today: (0, subscriber_1.todayIso)(), serviceField: 'service_id' });
                const money = (v) => (0, money_1.fromMinor)(v, q.currency);
                return {
                    data: {
                        subscriber_id: row.id,
                        current_service_id: q.oldServiceId,
                        service_id: q.newServiceId,
                        currency: q.currency,
                        days_remaining: q.daysRemaining,
                        old_unused_credit: money(q.oldUnusedCredit),
                        new_service_charge: money(q.newServiceCharge),
                        net_amount_due: money(q.netAmountDue),
                    },
                };
            },
        },
        topupData: {
            rest: 'POST /api/subscribers/:id/topup-data',
            http: {
                auth: 'jwt',
                access: 'subscribers.refill_quota',
                summary: 'Add extra GB on top of the monthly FUP quota',
                tag: 'subscribers',
                params: (0, schemas_1.idParams)(),
                body: subscriber_schemas_1.topupBody,
                errors: { 403: 'not authorized', 404: 'subscriber not found' },
            },
            async handler(ctx) {
                const bytes = Math.round(ctx.params.gb * subscriber_1.GB_BYTES);
                const topup = async (env, rows) => {
                    await env.tx.update(schema_1.subscribers)
                        .set({ extraQuotaBytes: (0, drizzle_orm_1.sql) `${schema_1.subscribers.extraQuotaBytes} + ${bytes}`, fupPending: true, updatedAt: (0, drizzle_orm_1.sql) `now()` })
                        .where((0, drizzle_orm_1.eq)(schema_1.subscribers.id, rows[0].id));
                    return { failed: [], extra: new Map([[rows[0].id, { added_bytes: bytes }]]) };
                };
                return runSingle(ctx, 'subscribers.refill_quota', topup, {});
            },
        },
        addBalance: {
            rest: 'POST /api/subscribers/:id/add-balance',
            http: {
                auth: 'jwt',
                access: 'subscribers.refill_quota',
                summary: 'Credit the subscriber\'s prepaid wallet',
                tag: 'subscribers',
                params: (0, schemas_1.idParams)(),
                body: subscriber_schemas_1.addBalanceBody,
                errors: { 400: 'amount has too many decimals', 403: 'not authorized', 404: 'subscriber not found' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requirePermission)(ctx.meta.auth, 'subscribers.refill_quota');
                await rowInScope(auth, ctx.params.id, 'write');
                const { currency } = await (0, settings_1.loadSettings)((0, client_1.db)(), ['currency']);
                let amount;
                try {
                    amount = (0, money_1.toMinor)(ctx.params.amount, currency);
                }
                catch {
                    throw (0, errors_2.badRequest)(`amount has more decimal places than ${currency} allows`);
                }
                const credit = async (env, rows) => {
                    const credit = await (0, billing_1.creditWallet)(env.tx, { subscriberId: rows[0].id, amount, currency, reason: 'add-balance', createdBy: env.auth.managerId });
                    return { failed: [], extra: new Map([[rows[0].id, { transaction_id: credit.transactionId }]]) };
                };
                return runSingle(ctx, 'subscribers.refill_quota', credit, {});
            },
        },
    },
};
//# sourceMappingURL=subscribers.service.js.map