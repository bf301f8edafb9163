/**
 * POST /api/subscribers: a subscriber and its FreeRADIUS rows, in one transaction. The reseller's
 * service limit for the plan and the uniqueness of username and static address are decided under
 * the transaction's locks. An admin or operator staff naming no reseller_id creates it under the
 * installation's default reseller (shared/default-reseller.ts).
 */
import { and, eq, isNull } from 'drizzle-orm';
import { changedFields, recordAudit } from '../../../shared/audit';
import type { Auth } from '../../../shared/auth/claims';
import { requirePermission, targetReseller } from '../../../shared/auth/policy';
import { encrypt } from '../../../shared/auth/secrets';
import { db } from '../../../shared/db/client';
import { subscribers } from '../../../shared/db/schema';
import { addDays, todayIso } from '../../../shared/domain/subscriber';
import { errorOf, fail } from '../../../shared/failures';
import { moneyField } from '../../../shared/money';
import { normaliseOptionalPhone } from '../../../shared/phone';
import { loadSettings } from '../../../shared/settings';
import { defaultReseller } from '../../../shared/default-reseller';
import { assertAddressFree, assertPrefixFree, uniqueConflict } from '../conflicts';
import { checkUsername, ipOrBadRequest, ipv6PrefixOrBadRequest, macOrBadRequest } from '../field-checks';
import * as ops from '../operations';
import { assignPlanPrefixes } from '../../../shared/access/ipv6-pools';
import { syncAccessRows, writePasswordRow } from '../../../shared/access/radius-rows';
import { nameTakenSince } from '../../../shared/access/session-owner';
import type { CreateSubscriberInput } from '../subscriber-schemas';
import { livePlan } from '../subscriber-rows';
import { plansById, subscriberView, type SubscriberRow } from '../subscriber-view';

export async function createSubscriber(caller: Auth | undefined, p: CreateSubscriberInput) {
  const auth = requirePermission(caller, 'subscribers.create');
  checkUsername(p.username);
  const mac = macOrBadRequest(p.mac_address);
  const staticIp = ipOrBadRequest(p.static_ip);
  const ipv6Prefix = ipv6PrefixOrBadRequest('ipv6_prefix', p.ipv6_prefix);
  const delegatedIpv6Prefix = ipv6PrefixOrBadRequest('delegated_ipv6_prefix', p.delegated_ipv6_prefix);
  const plan = await livePlan(db(), p.service_id);
  // A caller without a reseller (admin, operator staff) that names none: the default reseller.
  const direct = p.reseller_id === undefined && auth.resellerId === null;
  const named = direct ? undefined : await targetReseller(db(), auth, p.reseller_id);
  const settings = await loadSettings(db());
  const today = todayIso();
  let currency = plan.currency;
  try {
    const row = await db().transaction(async (tx) => {
      const resellerId = named ?? (await defaultReseller(tx, auth));
      const [taken] = await tx
        .select({ id: subscribers.id })
        .from(subscribers)
        .where(and(eq(subscribers.username, p.username), isNull(subscribers.deletedAt)));
      if (taken) throw fail('usernameTaken');
      const probe = { id: 0, resellerId, serviceId: 0 } as SubscriberRow;
      const limits = await ops.checkServiceLimits(tx, [probe], plan.id);
      if (limits.failed.length) throw errorOf(limits.failed[0]);
      // In the currency the plan has under the lock the limits check holds (FOR SHARE): a change of
      // its currency committed since the read above is not missed.
      if (p.price != null) currency = (await plansById(tx, [plan.id])).get(plan.id)!.currency;
      const price = p.price == null ? p.price : moneyField(p.price, currency, 'price');
      if (staticIp) await assertAddressFree(tx, staticIp);
      if (ipv6Prefix) await assertPrefixFree(tx, 'ipv6_prefix', ipv6Prefix);
      if (delegatedIpv6Prefix) await assertPrefixFree(tx, 'delegated_ipv6_prefix', delegatedIpv6Prefix);
      const [created] = await tx
        .insert(subscribers)
        .values({
          username: p.username,
          passwordEnc: encrypt(p.password),
          fullName: p.full_name ?? null,
          phone: normaliseOptionalPhone(p.phone, settings.default_country) ?? null,
          macAddress: mac ?? null,
          serviceId: plan.id,
          resellerId,
          staticIp: staticIp ?? null,
          ipv6Prefix: ipv6Prefix ?? null,
          delegatedIpv6Prefix: delegatedIpv6Prefix ?? null,
          region: p.region ?? null,
          building: p.building ?? null,
          address: p.address ?? null,
          nationality: p.nationality ?? null,
          country: p.country ?? null,
          notes: p.notes ?? null,
          price: price ?? null,
          overridePrice: p.override_price ?? false,
          autoRenew: p.auto_renew ?? false,
          expiryDate: p.expiry_date ?? addDays(today, plan.durationDays),
          usernameSince: nameTakenSince(p.username),
        })
        .returning();
      // A plan whose IPv6 pools are ours hands out the prefixes the body did not give.
      const assigned = await assignPlanPrefixes(tx, created.id);
      const inserted = {
        ...created,
        ipv6Prefix: assigned.framed ?? created.ipv6Prefix,
        delegatedIpv6Prefix: assigned.delegated ?? created.delegatedIpv6Prefix,
      };
      await writePasswordRow(tx, inserted.username, p.password, settings.radius_password_mode as 'nt' | 'cleartext');
      const [change] = await syncAccessRows(tx, [inserted.id], today);
      await recordAudit(tx, auth, {
        action: 'subscriber.create',
        entity: 'subscriber',
        entityId: inserted.id,
        resellerId,
        details: changedFields(null, inserted),
      });
      // A past expiry_date makes a blocked subscriber from the start: the answer says so.
      return change ? { ...inserted, blockedReason: change.blockedReason } : inserted;
    });
    return subscriberView(row, currency);
  } catch (err) {
    return uniqueConflict(err);
  }
}
