"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.gatewaySchemas = void 0;
const console_service_1 = require("./console.service");
const gateway_service_1 = require("./gateway.service");
const gatewaySchemas = () => [(0, gateway_service_1.createGatewayService)(), (0, console_service_1.createConsoleService)()];
exports.gatewaySchemas = gatewaySchemas;
//# sourceMappingURL=index.js.map