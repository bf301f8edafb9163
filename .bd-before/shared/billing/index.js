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
var __exportStar = (this && this.__exportStar) || function(m, exports) {
    for (var p in m) if (p !== "default" && !Object.prototype.hasOwnProperty.call(exports, p)) __createBinding(exports, m, p);
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.payFromWallet = exports.creditWallet = exports.lockSubscriber = exports.settleServiceChange = exports.quoteServiceChange = exports.recordPaymentUnlocked = exports.recordPayment = exports.payFifo = exports.applyPayment = exports.voidInvoices = exports.updatePendingInvoice = exports.readInvoiceForPayment = exports.lockPendingInvoices = exports.lockInvoice = exports.loadItems = exports.formatInvoiceNumber = exports.deleteInvoice = exports.createInvoices = exports.createInvoice = exports.checkTaxRate = exports.checkItems = exports.todayUtc = exports.addDays = exports.consolidateInvoices = void 0;
/**
 * Billing writes that take a transaction handle (`Tx`), shared by the billing service's actions and
 * by the subscribers unit (renewals, change of plan, add-balance). Amounts are integer minor units.
 * Lock order everywhere: the subscriber row, then its invoices by ascending id.
 * Errors are `ApiError`s with the spec's status and message; let them propagate.
 */
var consolidation_1 = require("./consolidation");
Object.defineProperty(exports, "consolidateInvoices", { enumerable: true, get: function () { return consolidation_1.consolidateInvoices; } });
var dates_1 = require("./dates");
Object.defineProperty(exports, "addDays", { enumerable: true, get: function () { return dates_1.addDays; } });
Object.defineProperty(exports, "todayUtc", { enumerable: true, get: function () { return dates_1.todayUtc; } });
var invoices_1 = require("./invoices");
Object.defineProperty(exports, "checkItems", { enumerable: true, get: function () { return invoices_1.checkItems; } });
Object.defineProperty(exports, "checkTaxRate", { enumerable: true, get: function () { return invoices_1.checkTaxRate; } });
Object.defineProperty(exports, "createInvoice", { enumerable: true, get: function () { return invoices_1.createInvoice; } });
Object.defineProperty(exports, "createInvoices", { enumerable: true, get: function () { return invoices_1.createInvoices; } });
Object.defineProperty(exports, "deleteInvoice", { enumerable: true, get: function () { return invoices_1.deleteInvoice; } });
Object.defineProperty(exports, "formatInvoiceNumber", { enumerable: true, get: function () { return invoices_1.formatInvoiceNumber; } });
Object.defineProperty(exports, "loadItems", { enumerable: true, get: function () { return invoices_1.loadItems; } });
Object.defineProperty(exports, "lockInvoice", { enumerable: true, get: function () { return invoices_1.lockInvoice; } });
Object.defineProperty(exports, "lockPendingInvoices", { enumerable: true, get: function () { return invoices_1.lockPendingInvoices; } });
Object.defineProperty(exports, "readInvoiceForPayment", { enumerable: true, get: function () { return invoices_1.readInvoiceForPayment; } });
Object.defineProperty(exports, "updatePendingInvoice", { enumerable: true, get: function () { return invoices_1.updatePendingInvoice; } });
Object.defineProperty(exports, "voidInvoices", { enumerable: true, get: function () { return invoices_1.voidInvoices; } });
var payments_1 = require("./payments");
Object.defineProperty(exports, "applyPayment", { enumerable: true, get: function () { return payments_1.applyPayment; } });
Object.defineProperty(exports, "payFifo", { enumerable: true, get: function () { return payments_1.payFifo; } });
var record_payment_1 = require("./record-payment");
Object.defineProperty(exports, "recordPayment", { enumerable: true, get: function () { return record_payment_1.recordPayment; } });
Object.defineProperty(exports, "recordPaymentUnlocked", { enumerable: true, get: function () { return record_payment_1.recordPaymentUnlocked; } });
var service_change_1 = require("./service-change");
Object.defineProperty(exports, "quoteServiceChange", { enumerable: true, get: function () { return service_change_1.quoteServiceChange; } });
Object.defineProperty(exports, "settleServiceChange", { enumerable: true, get: function () { return service_change_1.settleServiceChange; } });
var subscribers_1 = require("./subscribers");
Object.defineProperty(exports, "lockSubscriber", { enumerable: true, get: function () { return subscribers_1.lockSubscriber; } });
__exportStar(require("./types"), exports);
var wallet_1 = require("./wallet");
Object.defineProperty(exports, "creditWallet", { enumerable: true, get: function () { return wallet_1.creditWallet; } });
Object.defineProperty(exports, "payFromWallet", { enumerable: true, get: function () { return wallet_1.payFromWallet; } });
//# sourceMappingURL=index.js.map