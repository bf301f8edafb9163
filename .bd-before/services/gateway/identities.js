"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.IdentityCache = void 0;
exports.loadIdentity = loadIdentity;
const client_1 = require("../../shared/db/client");
class IdentityCache {
    load;
    maxAgeMs;
    maxEntries;
    entries = new Map();
    constructor(load, maxAgeMs = 1000, maxEntries = 10_000) {
        this.load = load;
        this.maxAgeMs = maxAgeMs;
        this.maxEntries = maxEntries;
    }
    /** Concurrent requests of one manager share one load; a failed load is not kept. */
    get(id, now = Date.now()) {
        const hit = this.entries.get(id);
        if (hit && now - hit.at < this.maxAgeMs)
            return hit.value;
        this.entries.delete(id);
        if (this.entries.size >= this.maxEntries)
            this.entries.delete(this.entries.keys().next().value);
        const entry = { at: now, value: this.load(id) };
        this.entries.set(id, entry);
        entry.value.catch(() => {
            if (this.entries.get(id) === entry)
                this.entries.delete(id);
        });
        return entry.value;
    }
    invalidate(id) {
        this.entries.delete(id);
    }
}
exports.IdentityCache = IdentityCache;
const IDENTITY = {
    name: 'gateway_manager_identity',
    text: `select id, active, role, reseller_id as "resellerId", permissions, token_version as "tokenVersion"
           from managers where id = $1`,
};
async function loadIdentity(id) {
    const { rows } = await (0, client_1.pgPool)().query({ ...IDENTITY, values: [id] });
    return rows[0] ?? null;
}
//# sourceMappingURL=identities.js.map