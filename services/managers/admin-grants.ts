/**
 * Which manager changes hand out a lasting admin sign-in: a new admin, a promotion to admin, or a
 * new password for an admin. They outlive the token or key that made them, so they need a fresh
 * second factor of the caller and are refused to API keys (docs/two-factor.md).
 */
import type { Role } from '../../shared/auth/claims';

export function grantsAdminSignIn(current: Role | undefined, next: Role, newPassword: boolean): boolean {
  if (next !== 'admin') return false;
  return current !== 'admin' || newPassword;
}
