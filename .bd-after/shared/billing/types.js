"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.INVOICE_KINDS = exports.PAYMENT_METHODS = void 0;
exports.PAYMENT_METHODS = ['cash', 'card', 'bank', 'wallet', 'prepaid_card', 'other'];
/** Why an invoice exists; stored in `invoices.kind`. */
exports.INVOICE_KINDS = ['manual', 'renewal', 'service_change', 'consolidated'];
//# sourceMappingURL=types.js.map