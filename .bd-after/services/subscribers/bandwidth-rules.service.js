"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.bandwidthRulesService = void 0;
exports.ruleView = ruleView;
exports.permanentRateLimit = permanentRateLimit;
/**
 * Per-subscriber bandwidth overrides: `{ id, direction: upload|download|both, rate_kbps,
 * start_time, end_time ('HH:MM' or null), days ([0..6], 0 = Sunday, or null = every day),
 * priority (1 highest .. 8) }`.
 *
 * The RADIUS reply side: rules without a time window are always in force, so the winning upload
 * and download rules (lowest priority number, then newest) are written as the subscriber's
 * `Mikrotik-Rate-Limit` radreply (`<upload>k/<download>k`, the router's rx/tx order); a direction
 * without a rule keeps the plan's half (or 0 = unlimited). Rules with a time window cannot be
 * expressed in a static reply: they are stored and listed, and applying them at the window's edges
 * is network-access's job (CoA), triggered by the same outbox event as every change.
 */
const drizzle_orm_1 = require("drizzle-orm");
const policy_1 = require("../../shared/auth/policy");
const client_1 = require("../../shared/db/client");
const schema_1 = require("../../shared/db/schema");
const errors_1 = require("../../shared/errors");
const schemas_1 = require("../../shared/http/schemas");
const radius_1 = require("../../shared/radius");
const outbox_1 = require("./outbox");
const schemas_2 = require("../../shared/http/schemas");
const subscriber_schemas_1 = require("./subscriber-schemas");
function ruleView(r) {
    return {
        id: r.id,
        subscriber_id: r.subscriberId,
        direction: r.direction,
        rate_kbps: r.rateKbps,
        start_time: r.startTime,
        end_time: r.endTime,
        days: r.days,
        priority: r.priority,
        created_at: (0, schemas_1.isoTimestamp)(r.createdAt),
    };
}
/** The permanent rate limit from the rules, or null when no permanent rule exists. */
function permanentRateLimit(rules, planRateLimit) {
    const permanent = rules
        .filter((r) => r.startTime === null && r.endTime === null && (r.days === null || r.days.length === 7))
        .sort((a, b) => a.priority - b.priority || b.id - a.id);
    const pick = (dir) => permanent.find((r) => r.direction === dir || r.direction === 'both');
    const up = pick('upload');
    const down = pick('download');
    if (!up && !down)
        return null;
    const [planUp = '0', planDown = '0'] = (planRateLimit ?? '').split(' ')[0].split('/');
    return `${up ? `${up.rateKbps}k` : planUp || '0'}/${down ? `${down.rateKbps}k` : planDown || '0'}`;
}
/** A time window needs both ends; a window may wrap midnight (22:00-06:00). */
function checkWindow(start, end) {
    if ((start === null) !== (end === null))
        throw (0, errors_1.badRequest)(start === null ? 'start_time is required with end_time' : 'end_time is required with start_time');
    if (start !== null && start === end)
        throw (0, errors_1.badRequest)('end_time must differ from start_time');
}
async function writeRateReply(tx, subscriberId) {
    const [sub] = await tx.select({ id: schema_1.subscribers.id, username: schema_1.subscribers.username, serviceId: schema_1.subscribers.serviceId })
        .from(schema_1.subscribers).where((0, drizzle_orm_1.eq)(schema_1.subscribers.id, subscriberId));
    const [plan] = await tx.select({ rateLimit: schema_1.services.rateLimit }).from(schema_1.services).where((0, drizzle_orm_1.eq)(schema_1.services.id, sub.serviceId));
    const rules = await tx.select().from(schema_1.bandwidthRules).where((0, drizzle_orm_1.eq)(schema_1.bandwidthRules.subscriberId, subscriberId));
    await tx.delete(schema_1.radreply).where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.radreply.username, sub.username), (0, drizzle_orm_1.eq)(schema_1.radreply.attribute, radius_1.ATTR.rateLimit)));
    const value = permanentRateLimit(rules, plan?.rateLimit ?? null);
    if (value)
        await tx.insert(schema_1.radreply).values({ username: sub.username, attribute: radius_1.ATTR.rateLimit, op: ':=', value });
    await (0, outbox_1.queueDisconnect)(tx, [sub], 'bandwidth_rules');
}
async function subscriberInScope(auth, id, access) {
    const [row] = await (0, client_1.db)().select({ resellerId: schema_1.subscribers.resellerId }).from(schema_1.subscribers)
        .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.subscribers.id, id), (0, drizzle_orm_1.isNull)(schema_1.subscribers.deletedAt)));
    await (0, policy_1.assertRecordInScope)((0, client_1.db)(), auth, access, row?.resellerId, 'subscriber not found');
}
/** Locks the subscriber row first (the order every subscriber write uses), then the rule. */
async function lockRule(tx, subscriberId, ruleId) {
    await tx.select({ id: schema_1.subscribers.id }).from(schema_1.subscribers).where((0, drizzle_orm_1.eq)(schema_1.subscribers.id, subscriberId)).for('update');
    const [rule] = await tx.select().from(schema_1.bandwidthRules)
        .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.bandwidthRules.id, ruleId), (0, drizzle_orm_1.eq)(schema_1.bandwidthRules.subscriberId, subscriberId))).for('update');
    if (!rule)
        throw (0, errors_1.notFound)('bandwidth rule not found');
    return rule;
}
const ruleErrors = { 403: 'not authorized', 404: 'subscriber not found, or bandwidth rule not found' };
/** The rule id comes from the path (`/:rule_id`) or the body (`rule_id`); both routes share it. */
async function updateRule(ctx) {
    const auth = (0, policy_1.requirePermission)(ctx.meta.auth, 'subscribers.edit');
    const p = ctx.params;
    await subscriberInScope(auth, p.id, 'write');
    const rule = await (0, client_1.db)().transaction(async (tx) => {
        const current = await lockRule(tx, p.id, p.rule_id);
        checkWindow(p.start_time === undefined ? current.startTime : p.start_time, p.end_time === undefined ? current.endTime : p.end_time);
        const [updated] = await tx.update(schema_1.bandwidthRules).set({
            direction: p.direction ?? current.direction,
            rateKbps: p.rate_kbps ?? current.rateKbps,
            startTime: p.start_time === undefined ? current.startTime : p.start_time,
            endTime: p.end_time === undefined ? current.endTime : p.end_time,
            days: p.days === undefined ? current.days : p.days,
            priority: p.priority ?? current.priority,
            updatedAt: new Date(),
        }).where((0, drizzle_orm_1.eq)(schema_1.bandwidthRules.id, current.id)).returning();
        await writeRateReply(tx, p.id);
        return updated;
    });
    return { data: ruleView(rule) };
}
async function removeRule(ctx) {
    const auth = (0, policy_1.requirePermission)(ctx.meta.auth, 'subscribers.edit');
    const p = ctx.params;
    await subscriberInScope(auth, p.id, 'write');
    await (0, client_1.db)().transaction(async (tx) => {
        const current = await lockRule(tx, p.id, p.rule_id);
        await tx.delete(schema_1.bandwidthRules).where((0, drizzle_orm_1.eq)(schema_1.bandwidthRules.id, current.id));
        await writeRateReply(tx, p.id);
    });
    return { data: { id: p.rule_id, deleted: true } };
}
exports.bandwidthRulesService = {
    name: 'bandwidthRules',
    actions: {
        list: {
            rest: 'GET /api/subscribers/:id/bandwidth-rules',
            http: {
                auth: 'jwt',
                access: 'subscribers.view',
                summary: 'The subscriber\'s bandwidth-rule overrides',
                tag: 'subscribers',
                params: (0, schemas_2.idParams)(),
                errors: { 403: 'not authorized', 404: 'subscriber not found' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requirePermission)(ctx.meta.auth, 'subscribers.view');
                await subscriberInScope(auth, ctx.params.id, 'read');
                const rows = await (0, client_1.db)().select().from(schema_1.bandwidthRules).where((0, drizzle_orm_1.eq)(schema_1.bandwidthRules.subscriberId, ctx.params.id)).orderBy((0, drizzle_orm_1.asc)(schema_1.bandwidthRules.priority), (0, drizzle_orm_1.asc)(schema_1.bandwidthRules.id));
                return { data: rows.map(ruleView) };
            },
        },
        create: {
            rest: 'POST /api/subscribers/:id/bandwidth-rules',
            http: {
                auth: 'jwt',
                access: 'subscribers.edit',
                summary: 'Add a bandwidth rule (direction, rate_kbps, optional time window and days, priority)',
                tag: 'subscribers',
                success: 201,
                params: (0, schemas_2.idParams)(),
                body: subscriber_schemas_1.ruleCreateBody,
                errors: { 403: 'not authorized', 404: 'subscriber not found' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requirePermission)(ctx.meta.auth, 'subscribers.edit');
                const p = ctx.params;
                await subscriberInScope(auth, p.id, 'write');
                checkWindow(p.start_time ?? null, p.end_time ?? null);
                const rule = await (0, client_1.db)().transaction(async (tx) => {
                    await tx.select({ id: schema_1.subscribers.id }).from(schema_1.subscribers).where((0, drizzle_orm_1.eq)(schema_1.subscribers.id, p.id)).for('update');
                    const [inserted] = await tx.insert(schema_1.bandwidthRules).values({
                        subscriberId: p.id, direction: p.direction, rateKbps: p.rate_kbps,
                        startTime: p.start_time ?? null, endTime: p.end_time ?? null, days: p.days ?? null, priority: p.priority ?? 8,
                    }).returning();
                    await writeRateReply(tx, p.id);
                    return inserted;
                });
                return { data: ruleView(rule) };
            },
        },
        update: {
            rest: 'PUT /api/subscribers/:id/bandwidth-rules',
            http: {
                auth: 'jwt',
                access: 'subscribers.edit',
                summary: 'Update the rule named by rule_id in the body',
                tag: 'subscribers',
                params: (0, schemas_2.idParams)(),
                body: subscriber_schemas_1.ruleUpdateBody,
                errors: ruleErrors,
            },
            handler: updateRule,
        },
        updateOne: {
            rest: 'PUT /api/subscribers/:id/bandwidth-rules/:rule_id',
            http: {
                auth: 'jwt',
                access: 'subscribers.edit',
                summary: 'Update one rule (rule id in the path)',
                tag: 'subscribers',
                params: subscriber_schemas_1.ruleParams,
                body: { ...subscriber_schemas_1.ruleUpdateBody, required: [], minProperties: 1 },
                errors: ruleErrors,
            },
            handler: updateRule,
        },
        remove: {
            rest: 'DELETE /api/subscribers/:id/bandwidth-rules',
            http: {
                auth: 'jwt',
                access: 'subscribers.edit',
                summary: 'Delete the rule named by rule_id in the body',
                tag: 'subscribers',
                params: (0, schemas_2.idParams)(),
                body: subscriber_schemas_1.ruleDeleteBody,
                errors: ruleErrors,
            },
            handler: removeRule,
        },
        removeOne: {
            rest: 'DELETE /api/subscribers/:id/bandwidth-rules/:rule_id',
            http: {
                auth: 'jwt',
                access: 'subscribers.edit',
                summary: 'Delete one rule (rule id in the path)',
                tag: 'subscribers',
                params: subscriber_schemas_1.ruleParams,
                errors: ruleErrors,
            },
            handler: removeRule,
        },
    },
};
//# sourceMappingURL=bandwidth-rules.service.js.map