/**
 * Fields of `PUT /api/subscribers/:id` that another action governs: changing one needs that
 * action's permission on top of `subscribers.edit`, so the PUT cannot do what /add-days,
 * /change-service, /rename, a transfer or a price change would refuse (issue 43). A field sent with
 * its current value changes nothing and needs nothing more: the console sends its whole form.
 */
import type { Permission } from '../../shared/auth/permissions';
import { fromMinor } from '../../shared/money';
import type { UpdateSubscriberInput } from './subscriber-schemas';
import type { SubscriberRow } from './subscriber-view';

export const GOVERNED_FIELDS = {
  username: 'subscribers.rename',
  reseller_id: 'subscribers.transfer',
  expiry_date: 'subscribers.add_days',
  service_id: 'subscribers.change_service',
  price: 'subscribers.set_price',
  override_price: 'subscribers.set_price',
} as const satisfies Partial<Record<keyof UpdateSubscriberInput, Permission>>;

type GovernedField = keyof typeof GOVERNED_FIELDS;

/** The rule as the OpenAPI document states it: `expiry_date: subscribers.add_days; price or override_price: ...`. */
export function governedFieldsText(): string {
  const byPermission = new Map<Permission, string[]>();
  for (const [field, permission] of Object.entries(GOVERNED_FIELDS)) {
    byPermission.set(permission, [...(byPermission.get(permission) ?? []), field]);
  }
  return [...byPermission].map(([permission, fields]) => `${fields.join(' or ')}: ${permission}`).join('; ');
}

/** The governed fields `body` changes; the stored price is compared in its plan's `currency`. */
function changedGovernedFields(body: UpdateSubscriberInput, current: SubscriberRow, currency: string): GovernedField[] {
  const differs: Record<GovernedField, boolean> = {
    username: body.username !== current.username,
    reseller_id: body.reseller_id !== current.resellerId,
    expiry_date: body.expiry_date !== current.expiryDate,
    service_id: body.service_id !== current.serviceId,
    price: body.price !== (current.price === null ? null : fromMinor(current.price, currency)),
    override_price: body.override_price !== current.overridePrice,
  };
  return (Object.keys(differs) as GovernedField[]).filter((f) => body[f] !== undefined && differs[f]);
}

/** The permissions, beyond `subscribers.edit`, that `body` needs; each named once, in field order. */
export function permissionsToUpdate(
  body: UpdateSubscriberInput,
  current: SubscriberRow,
  currency: string,
): Permission[] {
  return [...new Set(changedGovernedFields(body, current, currency).map((f) => GOVERNED_FIELDS[f]))];
}
