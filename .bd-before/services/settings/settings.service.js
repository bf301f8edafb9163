"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.settingsService = void 0;
const policy_1 = require("../../shared/auth/policy");
const client_1 = require("../../shared/db/client");
const errors_1 = require("../../shared/errors");
const money_1 = require("../../shared/money");
const settings_1 = require("../../shared/settings");
const schemas_1 = require("../../shared/http/schemas");
const settings_2 = require("../../shared/settings");
exports.settingsService = {
    name: 'settings',
    actions: {
        get: {
            rest: 'GET /api/settings',
            http: {
                auth: 'jwt',
                access: 'admin',
                summary: 'All system settings (secrets masked)',
                tag: 'settings',
                errors: schemas_1.adminErrors,
            },
            async handler(ctx) {
                (0, policy_1.requireAdmin)(ctx.meta.auth);
                return { data: (0, settings_1.publicView)(await (0, settings_1.loadSettings)((0, client_1.db)())) };
            },
        },
        update: {
            rest: 'PUT /api/settings',
            http: {
                auth: 'jwt',
                access: 'admin',
                summary: 'Change any subset of the settings; unknown keys or wrong types are 400',
                tag: 'settings',
                body: settings_2.settingsUpdateSchema,
                errors: schemas_1.adminErrors,
            },
            async handler(ctx) {
                (0, policy_1.requireAdmin)(ctx.meta.auth);
                const changes = ctx.params;
                if (typeof changes.currency === 'string' && !(0, money_1.isCurrency)(changes.currency)) {
                    throw (0, errors_1.badRequest)('currency must be an ISO 4217 code');
                }
                await (0, settings_1.saveSettings)((0, client_1.db)(), changes);
                return { data: (0, settings_1.publicView)(await (0, settings_1.loadSettings)((0, client_1.db)())) };
            },
        },
    },
};
//# sourceMappingURL=settings.service.js.map