"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.Lru = void 0;
/**
 * A bounded map that drops the least recently used entry first. A Map iterates in insertion order,
 * so re-inserting on each hit keeps the least recent first. `maxEntries` 0 keeps nothing.
 */
class Lru {
    maxEntries;
    entries = new Map();
    constructor(maxEntries) {
        this.maxEntries = maxEntries;
    }
    get(key) {
        const value = this.entries.get(key);
        if (value !== undefined) {
            this.entries.delete(key);
            this.entries.set(key, value);
        }
        return value;
    }
    set(key, value) {
        if (this.maxEntries === 0)
            return;
        this.entries.delete(key);
        if (this.entries.size >= this.maxEntries)
            this.entries.delete(this.entries.keys().next().value);
        this.entries.set(key, value);
    }
    delete(key) {
        this.entries.delete(key);
    }
    get size() {
        return this.entries.size;
    }
}
exports.Lru = Lru;
//# sourceMappingURL=lru.js.map