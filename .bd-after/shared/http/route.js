"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.rawJsonEnvelope = rawJsonEnvelope;
exports.isRawJson = isRawJson;
/** `{ "success": true, "data": <dataJson>, ...rest }` without parsing `dataJson`. */
function rawJsonEnvelope(dataJson, rest = {}) {
    let body = `{"success":true,"data":${dataJson}`;
    for (const [key, value] of Object.entries(rest))
        body += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
    return { $rawJson: `${body}}` };
}
function isRawJson(result) {
    return typeof result?.$rawJson === 'string';
}
//# sourceMappingURL=route.js.map