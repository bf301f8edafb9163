"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.lockSubscriber = lockSubscriber;
const drizzle_orm_1 = require("drizzle-orm");
const schema_1 = require("../db/schema");
const errors_1 = require("../errors");
/**
 * Locks a live subscriber row. Lock order for every billing write: subscriber first, then its
 * invoices by ascending id, so quick-pay, consolidation and wallet payments cannot deadlock.
 */
async function lockSubscriber(tx, id) {
    const [row] = await tx
        .select({ id: schema_1.subscribers.id, resellerId: schema_1.subscribers.resellerId, username: schema_1.subscribers.username, walletBalance: schema_1.subscribers.walletBalance })
        .from(schema_1.subscribers)
        .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.subscribers.id, id), (0, drizzle_orm_1.isNull)(schema_1.subscribers.deletedAt)))
        .for('update');
    if (!row)
        throw (0, errors_1.notFound)('subscriber not found');
    return row;
}
//# sourceMappingURL=subscribers.js.map