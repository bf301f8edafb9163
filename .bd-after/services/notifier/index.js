"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.notifierSchemas = void 0;
const notifier_service_1 = require("./notifier.service");
/** Chat delivery of invoice PDFs, retries and the delivery log (docs/documents.md). */
exports.notifierSchemas = [(0, notifier_service_1.createNotifierService)()];
//# sourceMappingURL=index.js.map