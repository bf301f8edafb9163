"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.UNIT_NAMES = exports.UNITS = void 0;
exports.schemasFor = schemasFor;
const auth_service_1 = require("../services/auth/auth.service");
const billing_1 = require("../services/billing");
const gateway_1 = require("../services/gateway");
const managers_service_1 = require("../services/managers/managers.service");
const network_access_1 = require("../services/network-access");
const notifier_1 = require("../services/notifier");
const pdf_renderer_1 = require("../services/pdf-renderer");
const plans_service_1 = require("../services/plans/plans.service");
const resellers_service_1 = require("../services/resellers/resellers.service");
const settings_service_1 = require("../services/settings/settings.service");
const subscribers_1 = require("../services/subscribers");
exports.UNITS = {
    gateway: gateway_1.gatewaySchemas,
    billing: () => billing_1.billingSchemas,
    // Subscribers and the reference data they stand on: identity, resellers, plans, settings.
    subscribers: () => [...subscribers_1.subscribersSchemas, auth_service_1.authService, managers_service_1.managersService, resellers_service_1.resellersService, plans_service_1.plansService, settings_service_1.settingsService],
    'network-access': () => network_access_1.networkAccessSchemas,
    'pdf-renderer': () => pdf_renderer_1.pdfRendererSchemas,
    notifier: () => notifier_1.notifierSchemas,
};
exports.UNIT_NAMES = Object.keys(exports.UNITS);
function schemasFor(units) {
    const chosen = units ?? exports.UNIT_NAMES;
    const unknown = chosen.filter((u) => !exports.UNITS[u]);
    if (unknown.length)
        throw new Error(`unknown service(s) in SERVICES: ${unknown.join(', ')} (known: ${exports.UNIT_NAMES.join(', ')})`);
    return chosen.flatMap((u) => exports.UNITS[u]());
}
//# sourceMappingURL=units.js.map