/**
 * The signed-in manager: the token and what its claims allow. The token lives in sessionStorage:
 * it survives a reload of the tab (an operator reloads often) and is gone when the tab closes; the
 * page's CSP allows only our own scripts, which is what keeps it from other code. Sign-out revokes
 * it on the server too.
 */
import { t } from './i18n.js';

const KEY = 'isp-billing.console.token';
const listeners = new Set();

function decode(token) {
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const json = decodeURIComponent(
      [...atob(part)].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join(''),
    );
    const claims = JSON.parse(json);
    return {
      managerId: Number(claims.sub),
      role: claims.role,
      resellerId: Number.isInteger(claims.reseller_id) ? claims.reseller_id : null,
      permissions: Array.isArray(claims.permissions) ? claims.permissions : [],
      exp: claims.exp,
      /** A token that may only set up two-factor sign-in (setting require_two_factor). */
      enrolOnly: claims.enrol_only === true,
    };
  } catch {
    return null;
  }
}

function stored() {
  const token = sessionStorage.getItem(KEY);
  const claims = token ? decode(token) : null;
  return claims && claims.exp * 1000 > Date.now() ? { token, claims } : { token: null, claims: null };
}

export const session = {
  ...stored(),
  /** Why the last session ended, shown on the sign-in page. */
  notice: null,

  start(token) {
    sessionStorage.setItem(KEY, token);
    Object.assign(this, { token, claims: decode(token), notice: null });
    listeners.forEach((l) => l());
  },
  end(notice = null) {
    sessionStorage.removeItem(KEY);
    Object.assign(this, { token: null, claims: null, notice });
    listeners.forEach((l) => l());
  },
  expire() {
    this.end(t('Your session has ended. Please sign in again.'));
  },
  onChange(listener) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },

  get role() {
    return this.claims?.role;
  },
  get isAdmin() {
    return this.role === 'admin';
  },
  /** Invoice writes and reseller-owned records: admin or reseller. */
  get isAdminOrReseller() {
    return this.role === 'admin' || this.role === 'reseller';
  },
  /** The API's rule: admins hold every permission; others the ones their token names. */
  can(permission) {
    return this.isAdmin || (this.claims?.permissions ?? []).includes(permission);
  },
  /**
   * An invoice write (`invoices.pay`...), as the API decides it: admin; a reseller-role token that
   * names it, or names no `invoices.*` at all (the spec's default); no other role.
   */
  canInvoice(permission) {
    if (this.isAdmin) return true;
    if (this.role !== 'reseller') return false;
    const named = (this.claims?.permissions ?? []).filter((p) => p.startsWith('invoices.'));
    return named.length === 0 || named.includes(permission);
  },
};
