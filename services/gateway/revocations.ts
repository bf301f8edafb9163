/**
 * Revoked token ids, kept in memory so the check costs nothing per request. Filled from the
 * token_blacklist table at start and on a timer (so a missed event heals), and at once from the
 * `auth.revoked` broadcast that logout emits to every gateway.
 */
export class RevocationList {
  private readonly revoked = new Map<string, number>();

  add(jti: string, exp: number): void {
    this.revoked.set(jti, exp);
  }

  has(jti: string): boolean {
    return this.revoked.has(jti);
  }

  /** Entries past their token's expiry can go: the token is refused as expired anyway. */
  prune(nowSeconds = Math.floor(Date.now() / 1000)): void {
    for (const [jti, exp] of this.revoked) if (exp < nowSeconds) this.revoked.delete(jti);
  }
}
