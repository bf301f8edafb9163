/**
 * PUT /api/subscribers/:id: any subset of the create fields. A changed field that another action
 * governs needs that action's permission too (governed-fields.ts); a new plan or static address
 * rewrites the FreeRADIUS rows and disconnects, like the single actions that do the same.
 */
import { eq, sql } from 'drizzle-orm';
import { changedFields, recordAudit } from '../../../shared/audit';
import type { Auth } from '../../../shared/auth/claims';
import { recordInScope, requirePermission, scopeFor, targetReseller } from '../../../shared/auth/policy';
import { encrypt } from '../../../shared/auth/secrets';
import { db, type Tx } from '../../../shared/db/client';
import { subscribers } from '../../../shared/db/schema';
import { todayIso } from '../../../shared/domain/subscriber';
import type { IdPath } from '../../../shared/http/schemas';
import { loadSettings } from '../../../shared/settings';
import { assertAddressFree, assertPrefixFree, uniqueConflict } from '../conflicts';
import {
  checkUsername,
  ipOrBadRequest,
  ipv6PrefixOrBadRequest,
  macOrBadRequest,
  type Ipv6Field,
} from '../field-checks';
import { permissionsToUpdate } from '../governed-fields';
import * as ops from '../operations';
import { assignPlanPrefixes, releasePrefix } from '../../../shared/access/ipv6-pools';
import { queueDisconnect } from '../../../shared/access/outbox';
import { kickChanged, syncAccessRows, writePasswordRow } from '../../../shared/access/radius-rows';
import type { UpdateSubscriberInput } from '../subscriber-schemas';
import { loadRow, viewOf } from '../subscriber-rows';
import { plansById, type SubscriberRow } from '../subscriber-view';
import { errorOf, fail, failure } from '../../../shared/failures';
import { moneyField } from '../../../shared/money';
import { normaliseOptionalPhone } from '../../../shared/phone';

type Columns = Partial<typeof subscribers.$inferInsert>;

/** The plain columns the body sets; the checked ones (MAC, price, reseller, address) come in `checked`. */
function columnChanges(p: UpdateSubscriberInput, checked: Columns, country: string): Columns {
  const set: Columns = { ...checked };
  if (p.full_name !== undefined) set.fullName = p.full_name;
  if (p.phone !== undefined) set.phone = normaliseOptionalPhone(p.phone, country);
  if (p.expiry_date !== undefined) set.expiryDate = p.expiry_date;
  if (p.region !== undefined) set.region = p.region;
  if (p.building !== undefined) set.building = p.building;
  if (p.address !== undefined) set.address = p.address;
  if (p.nationality !== undefined) set.nationality = p.nationality;
  if (p.country !== undefined) set.country = p.country;
  if (p.notes !== undefined) set.notes = p.notes;
  if (p.override_price !== undefined) set.overridePrice = p.override_price;
  if (p.auto_renew !== undefined) set.autoRenew = p.auto_renew;
  if (p.password !== undefined) set.passwordEnc = encrypt(p.password);
  return set;
}

/**
 * What the body changes against `row` (plan, price in the plan's currency, reseller), and the
 * permissions those changes need. Called on the row locked in the transaction: a plan, price or
 * reseller changed by another request since the pre-lock read is compared as it now is.
 */
async function governedChanges(tx: Tx, auth: Auth, p: UpdateSubscriberInput, row: SubscriberRow) {
  // The plans held shared: a plan's change of currency, which refuses one while own prices are on
  // the plan, waits for this PUT, so the price is read in the currency the plan keeps.
  const moving = p.service_id !== undefined && p.service_id !== row.serviceId ? p.service_id : undefined;
  const held = await ops.plansHeld(tx, moving === undefined ? [row.serviceId] : [row.serviceId, moving]);
  const { currency } = held.get(row.serviceId)!;
  for (const permission of permissionsToUpdate(p, row, currency)) requirePermission(auth, permission);
  if (p.username !== undefined && p.username !== row.username) checkUsername(p.username);
  const newPlan = moving === undefined ? undefined : held.get(moving);
  if (moving !== undefined && (!newPlan || newPlan.deletedAt)) throw fail('referenceNotFound', 'service_id');
  const price = p.price == null ? p.price : moneyField(p.price, newPlan?.currency ?? currency, 'price');
  const resellerId =
    p.reseller_id !== undefined && p.reseller_id !== row.resellerId
      ? await targetReseller(tx, auth, p.reseller_id)
      : undefined;
  return { newPlan, price, resellerId };
}

export async function updateSubscriber(caller: Auth | undefined, p: UpdateSubscriberInput & IdPath) {
  const auth = requirePermission(caller, 'subscribers.edit');
  const current = await recordInScope(db(), auth, 'write', await loadRow(p.id), 'subscriberNotFound');
  // 403 before any 400 for a caller without a governed field's permission; decided again under the lock.
  const currentCurrency = (await plansById(db(), [current.serviceId])).get(current.serviceId)!.currency;
  for (const permission of permissionsToUpdate(p, current, currentCurrency)) requirePermission(auth, permission);
  const mac = macOrBadRequest(p.mac_address);
  const staticIp = ipOrBadRequest(p.static_ip);
  const prefixes: [Ipv6Field, 'ipv6Prefix' | 'delegatedIpv6Prefix', string | null | undefined][] = [
    ['ipv6_prefix', 'ipv6Prefix', ipv6PrefixOrBadRequest('ipv6_prefix', p.ipv6_prefix)],
    [
      'delegated_ipv6_prefix',
      'delegatedIpv6Prefix',
      ipv6PrefixOrBadRequest('delegated_ipv6_prefix', p.delegated_ipv6_prefix),
    ],
  ];
  const settings = await loadSettings(db());
  const today = todayIso();
  const scope = await scopeFor(db(), auth, 'write');
  let after: SubscriberRow;
  try {
    after = await db().transaction(async (tx) => {
      const locked = await ops.lockInScope(tx, scope, [p.id]);
      if (locked.failed.length) throw errorOf(locked.failed[0]);
      const env = { tx, auth, today, settings };
      const before = locked.rows[0];
      let row = before;
      const { newPlan, price, resellerId } = await governedChanges(tx, auth, p, row);
      // The reseller the row ends under must sell the plan it ends on, counted against the locked row
      // (with a new plan, setService checks that very placement).
      if (resellerId !== undefined && !newPlan) {
        const placed = await ops.checkPlacements(tx, [{ row, resellerId, serviceId: row.serviceId }]);
        if (placed.failed.length) throw errorOf(placed.failed[0]);
      }
      if (newPlan) {
        // A price sent with the new plan replaces the stored one, which then holds no old currency.
        const owner = {
          ...row,
          resellerId: resellerId ?? row.resellerId,
          price: price === undefined ? row.price : null,
        };
        const result = await ops.setService(env, [owner], {
          plan: newPlan,
          charge_difference: false,
          prefixesByCaller: true,
        });
        if (result.failed.length) throw errorOf(result.failed[0]);
      }
      const checked: Columns = {};
      if (mac !== undefined) checked.macAddress = mac;
      if (price !== undefined) checked.price = price;
      if (resellerId !== undefined) checked.resellerId = resellerId;
      const addressChanged = staticIp !== undefined && staticIp !== row.staticIp;
      if (addressChanged) {
        if (staticIp) await assertAddressFree(tx, staticIp, row);
        checked.staticIp = staticIp;
      }
      let prefixChanged = false;
      for (const [field, key, value] of prefixes) {
        if (value === undefined || value === row[key]) continue;
        if (value) await assertPrefixFree(tx, field, value, row);
        await releasePrefix(tx, row.id, row[key]);
        checked[key] = value;
        prefixChanged = true;
      }
      const set = columnChanges(p, checked, settings.default_country);
      if (Object.keys(set).length) {
        [row] = await tx
          .update(subscribers)
          .set({ ...set, updatedAt: sql`now()` })
          .where(eq(subscribers.id, row.id))
          .returning();
      }
      if (p.username !== undefined && p.username !== row.username) {
        const renamed = await ops.rename(() => p.username!, failure('newUsernameInvalid'))(env, [row], {});
        if (renamed.failed.length) throw errorOf(renamed.failed[0]);
      }
      if (p.password !== undefined) {
        const [fresh] = await tx
          .select({ username: subscribers.username })
          .from(subscribers)
          .where(eq(subscribers.id, row.id));
        await writePasswordRow(tx, fresh.username, p.password, settings.radius_password_mode as 'nt' | 'cleartext');
      }
      // A new plan, or a prefix cleared, may leave a pool of ours to fill.
      if (newPlan || prefixChanged) await assignPlanPrefixes(tx, row.id);
      const changes = await syncAccessRows(tx, [row.id], today);
      const renamed = p.username !== undefined && p.username !== row.username;
      if (addressChanged && !newPlan) await queueDisconnect(tx, [row], 'static_ip');
      else if (prefixChanged && !newPlan) await queueDisconnect(tx, [row], 'ipv6_prefix');
      // A new plan or name disconnected already; a new expiry date may block or restore.
      else if (!newPlan && !renamed) await kickChanged(tx, changes);
      const [written] = await tx.select().from(subscribers).where(eq(subscribers.id, row.id));
      await recordAudit(tx, auth, {
        action: 'subscriber.update',
        entity: 'subscriber',
        entityId: row.id,
        resellerId: written.resellerId,
        details: changedFields(before, written),
      });
      return written;
    });
  } catch (err) {
    return uniqueConflict(err);
  }
  return viewOf(after);
}
