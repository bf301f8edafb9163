"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.DISCONNECT_EVENT = void 0;
exports.queueDisconnect = queueDisconnect;
/**
 * Router side effects of subscriber changes, written to the outbox in the caller's transaction
 * (ARCHITECTURE section 5): network-access turns each row into a CoA Disconnect-Request after
 * commit. One event for every case; a PPPoE client redials at once, so a disconnect is also how a
 * renewal, a new plan or a new static address takes effect ("disconnect and reconnect").
 */
const drizzle_orm_1 = require("drizzle-orm");
exports.DISCONNECT_EVENT = 'subscriber.disconnect';
/** `username` is the name the live session runs under (the old one for a rename). */
async function queueDisconnect(tx, targets, reason) {
    if (targets.length === 0)
        return;
    await tx.execute((0, drizzle_orm_1.sql) `
    insert into outbox (event, payload)
    select ${exports.DISCONNECT_EVENT}, jsonb_build_object('subscriber_id', t.id, 'username', t.username, 'reason', ${reason}::text)
      from unnest(${drizzle_orm_1.sql.param(targets.map((t) => t.id))}::int[], ${drizzle_orm_1.sql.param(targets.map((t) => t.username))}::text[]) as t(id, username)`);
}
//# sourceMappingURL=outbox.js.map