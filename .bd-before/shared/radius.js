"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.ATTR = exports.FUP_GROUP_PATTERN = exports.fupGroup = exports.planGroup = void 0;
exports.writePlanGroupReply = writePlanGroupReply;
exports.syncPlanMacRows = syncPlanMacRows;
/**
 * Names shared with FreeRADIUS: each plan is a RADIUS group whose reply attributes carry the
 * plan's pool and rate limit, so changing a plan changes every subscriber on it at next login.
 */
const drizzle_orm_1 = require("drizzle-orm");
const schema_1 = require("./db/schema");
const planGroup = (serviceId) => `plan_${serviceId}`;
exports.planGroup = planGroup;
/** The group of a plan's fair-use tier: its `Mikrotik-Rate-Limit` replaces the plan's and any user's. */
const fupGroup = (serviceId, level) => `plan_${serviceId}_fup${level}`;
exports.fupGroup = fupGroup;
/** Every tier group of every plan, as a LIKE pattern (`_` escaped). */
exports.FUP_GROUP_PATTERN = 'plan\\_%\\_fup_';
exports.ATTR = {
    framedPool: 'Framed-Pool',
    rateLimit: 'Mikrotik-Rate-Limit',
    framedIp: 'Framed-IP-Address',
    ntPassword: 'NT-Password',
    cleartextPassword: 'Cleartext-Password',
    callingStationId: 'Calling-Station-Id',
    authType: 'Auth-Type',
    fallThrough: 'Fall-Through',
};
/**
 * Group replies use `=` (add only when absent): FreeRADIUS applies the user's radreply first, so
 * a subscriber's own rate limit or static address wins over the plan's defaults. A fair-use tier's
 * group uses `:=`: a throttled subscriber gets the tier's rate whatever else applies.
 */
async function writePlanGroupReply(tx, serviceId, plan) {
    const group = (0, exports.planGroup)(serviceId);
    await tx.delete(schema_1.radgroupreply).where((0, drizzle_orm_1.or)((0, drizzle_orm_1.eq)(schema_1.radgroupreply.groupname, group), (0, drizzle_orm_1.like)(schema_1.radgroupreply.groupname, `plan\\_${serviceId}\\_fup_`)));
    const rows = [
        plan.poolName ? { groupname: group, attribute: exports.ATTR.framedPool, op: '=', value: plan.poolName } : undefined,
        plan.rateLimit ? { groupname: group, attribute: exports.ATTR.rateLimit, op: '=', value: plan.rateLimit } : undefined,
        // rlm_sql stops at the first group with reply rows unless it says Fall-Through: the tier group
        // (priority 0, read first) does, so the plan's group still adds its pool.
        ...(plan.fupTiers ?? []).flatMap((t) => [
            { groupname: (0, exports.fupGroup)(serviceId, t.level), attribute: exports.ATTR.rateLimit, op: ':=', value: t.rate_limit },
            { groupname: (0, exports.fupGroup)(serviceId, t.level), attribute: exports.ATTR.fallThrough, op: '=', value: 'Yes' },
        ]),
    ].filter((r) => r !== undefined);
    if (rows.length)
        await tx.insert(schema_1.radgroupreply).values(rows);
}
/**
 * A plan's `mac_binding` switched: its subscribers' Calling-Station-Id rows follow (on: the MACs
 * already stored are enforced at once; off: no row, any MAC logs in).
 */
async function syncPlanMacRows(tx, serviceId) {
    await tx.execute((0, drizzle_orm_1.sql) `
    delete from radcheck
     where attribute = ${exports.ATTR.callingStationId}
       and username = any(array(select username from subscribers where service_id = ${serviceId} and deleted_at is null))`);
    await tx.execute((0, drizzle_orm_1.sql) `
    insert into radcheck (username, attribute, op, value)
    select s.username, ${exports.ATTR.callingStationId}, '==', s.mac_address
      from subscribers s join services p on p.id = s.service_id
     where s.service_id = ${serviceId} and s.deleted_at is null and p.mac_binding and s.mac_address is not null`);
}
//# sourceMappingURL=radius.js.map