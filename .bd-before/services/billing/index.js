"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.billingSchemas = void 0;
const documents_service_1 = require("./documents.service");
const invoices_service_1 = require("./invoices.service");
/** Invoices, payments, the ledger, wallet credit, commissions and proration (issue: billing). */
exports.billingSchemas = [invoices_service_1.invoicesService, documents_service_1.documentsService];
//# sourceMappingURL=index.js.map