"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.networkAccessSchemas = void 0;
const nas_service_1 = require("./nas.service");
const network_access_service_1 = require("./network-access.service");
const relay_service_1 = require("./relay.service");
const usage_service_1 = require("./usage/usage.service");
/**
 * Everything that talks to routers: the access-server registry (FreeRADIUS `nas`), CoA and the
 * router API on subscribers' sessions, the outbox relay that feeds it events, usage and fair use.
 */
exports.networkAccessSchemas = [nas_service_1.nasService, network_access_service_1.networkAccessService, relay_service_1.outboxRelayService, (0, usage_service_1.createUsageService)()];
//# sourceMappingURL=index.js.map