"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.TRANSACTION_TYPES = void 0;
exports.recordTransaction = recordTransaction;
const schema_1 = require("./db/schema");
exports.TRANSACTION_TYPES = [
    'invoice_payment',
    'wallet_credit',
    'wallet_debit',
    'reseller_credit',
    'reseller_debit',
    'renewal',
    'rename_fee',
    'refill_fee',
];
async function recordTransaction(tx, entry) {
    const [row] = await tx.insert(schema_1.transactions).values(entry).returning({ id: schema_1.transactions.id });
    return row.id;
}
//# sourceMappingURL=ledger.js.map