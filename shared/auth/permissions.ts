/**
 * The one list of permissions a manager can hold (spec section 2, "subscribers.*" per endpoint).
 * Policy, route declarations, the bulk table and manager validation take `Permission`, so a
 * misspelled name fails to compile; the console reads the list from `GET /api/permissions`.
 */
export const PERMISSIONS = [
  'subscribers.view',
  'subscribers.view_all',
  'subscribers.create',
  'subscribers.edit',
  'subscribers.delete',
  'subscribers.renew',
  'subscribers.add_days',
  'subscribers.change_service',
  /** A subscriber's own price (`price`, `override_price`): PUT and the bulk `set_price`. */
  'subscribers.set_price',
  'subscribers.inactivate',
  'subscribers.disconnect',
  'subscribers.reset_fup',
  'subscribers.reset_mac',
  'subscribers.rename',
  'subscribers.refill_quota',
  'subscribers.ping',
  'subscribers.torch',
  'subscribers.view_graph',
  'subscribers.transfer',
  /**
   * Invoice writes (docs/operators-first-day.md). The spec lets every admin and reseller-role
   * manager write invoices: a reseller-role manager naming none of these keeps that (all six); one
   * naming some holds only those. Other roles never write invoices, whatever they name.
   */
  'invoices.create',
  'invoices.edit',
  'invoices.pay',
  'invoices.consolidate',
  'invoices.send',
  'invoices.void',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export type InvoicePermission = Extract<Permission, `invoices.${string}`>;
export const INVOICE_PERMISSIONS: readonly InvoicePermission[] = PERMISSIONS.filter((p): p is InvoicePermission =>
  p.startsWith('invoices.'),
);

const known: ReadonlySet<string> = new Set(PERMISSIONS);

export function isPermission(name: string): name is Permission {
  return known.has(name);
}
