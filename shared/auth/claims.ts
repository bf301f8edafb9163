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
}
