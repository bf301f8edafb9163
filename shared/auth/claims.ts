export const ROLES = ['admin', 'reseller', 'user'] as const;
export type Role = (typeof ROLES)[number];

/** Who is calling, as the gateway verified it from the JWT; travels in `ctx.meta.auth`. */
export interface Auth {
  managerId: number;
  role: Role;
  resellerId: number | null;
  permissions: string[];
  jti: string;
  exp: number;
  /** Set when the caller is an API key (docs/security.md): the key's id; role and permissions are the key's. */
  keyId?: number;
  /** The client address the gateway saw (audit trail). */
  ip?: string;
  /** How the token's sign-in was proved (`pwd`, `otp`: docs/two-factor.md); absent for API keys and older tokens. */
  amr?: string[];
  /** A token that may only set up two-factor sign-in (setting require_two_factor): other routes answer 403. */
  enrolOnly?: boolean;
  /**
   * Set when a subscriber acts through self-care (docs/self-care.md): the operators' use case runs
   * for that one subscriber, and its audit row names the subscriber as actor.
   */
  subscriberId?: number;
}

/**
 * The installation acting by itself (the lifecycle sweep, a renewal an online payment or a card paid
 * for): admin scope, named by `jti`. `managerId` null (the system) or the operator it is recorded
 * as: ledger rows, invoices and payments carry it as `created_by` (plain nullable integers);
 * `Auth.managerId` is typed for callers with a token.
 */
export function systemAuth(jti: string, managerId: number | null = null): Auth {
  return { managerId: managerId as number, role: 'admin', resellerId: null, permissions: [], jti, exp: 0 };
}

/**
 * A subscriber acting on its own account through self-care (docs/self-care.md). The self-care
 * service alone builds it, always for the signed-in subscriber's own id, and hands it to the
 * operators' use cases with that id only: the scope is the one subscriber, enforced by self-care;
 * the use case records the subscriber as the actor.
 */
export function subscriberActor(subscriberId: number, jti: string, ip?: string): Auth {
  return {
    managerId: null as unknown as number,
    role: 'admin',
    resellerId: null,
    permissions: [],
    jti,
    exp: 0,
    subscriberId,
    ...(ip ? { ip } : {}),
  };
}
