"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.RevocationList = void 0;
/**
 * Revoked token ids, kept in memory so the check costs nothing per request. Filled from the
 * token_blacklist table at start and on a timer (so a missed event heals), and at once from the
 * `auth.revoked` broadcast that logout emits to every gateway.
 */
class RevocationList {
    revoked = new Map();
    add(jti, exp) {
        this.revoked.set(jti, exp);
    }
    has(jti) {
        return this.revoked.has(jti);
    }
    /** Entries past their token's expiry can go: the token is refused as expired anyway. */
    prune(nowSeconds = Math.floor(Date.now() / 1000)) {
        for (const [jti, exp] of this.revoked)
            if (exp < nowSeconds)
                this.revoked.delete(jti);
    }
}
exports.RevocationList = RevocationList;
//# sourceMappingURL=revocations.js.map