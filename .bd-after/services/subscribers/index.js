"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.subscribersSchemas = void 0;
const bandwidth_rules_service_1 = require("./bandwidth-rules.service");
const bulk_service_1 = require("./bulk.service");
const subscribers_service_1 = require("./subscribers.service");
/** `/api/subscribers`: records, single and bulk actions, bandwidth rules. */
exports.subscribersSchemas = [subscribers_service_1.subscribersService, bulk_service_1.subscriberBulkService, bandwidth_rules_service_1.bandwidthRulesService];
//# sourceMappingURL=index.js.map