/**
 * Subscribers: records (list, read, create, update, delete) and the single actions of spec 4.2.
 * Each single action runs the same set-based operation as its bulk counterpart (operations.ts)
 * over one locked row, then answers with the updated subscriber.
 */
import { and, asc, eq, gte, isNull, sql } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import type { Auth } from '../../shared/auth/claims';
import type { Permission } from '../../shared/auth/permissions';
import { assertRecordInScope, requireAdmin, requirePermission, scopeFor, targetReseller } from '../../shared/auth/policy';
import { decrypt, encrypt } from '../../shared/auth/secrets';
import { db, type Tx } from '../../shared/db/client';
import { isUniqueViolation } from '../../shared/db/errors';
import {
  auditLog, bandwidthRules, dailyUsage, radcheck, radreply, radusergroup, resellers, services, subscribers, walletEntries,
} from '../../shared/db/schema';
import { creditWallet, quoteServiceChange } from '../../shared/billing';
import { addDays, GB_BYTES, isIPv4, isValidUsername, normaliseMac, todayIso } from '../../shared/domain/subscriber';
import { ApiError, badRequest, conflict, forbidden, notFound } from '../../shared/errors';
import { authOf, type Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { fromMinor, toMinor } from '../../shared/money';
import { loadSettings } from '../../shared/settings';
import * as ops from './operations';
import { queueDisconnect } from '../../shared/access/outbox';
import { planView, resellerView } from '../../shared/views';
import { syncAccessRows, writePasswordRow } from '../../shared/access/radius-rows';
import { listSubscribers, type ListParams } from './subscriber-list';
import { plansById, subscriberView, type PlanRow, type SubscriberRow } from './subscriber-view';
import type { HttpRoute } from '../../shared/http/route';
import { addBalanceBody, addDaysBody, changePriceQuery, changeServiceBody, createBody, listQuery, renameBody, topupBody, updateBody } from './subscriber-schemas';
import { emptyBody, idParams } from '../../shared/http/schemas';

type IdParams = { id: number };

interface SubscriberInput {
  username?: string;
  password?: string;
  service_id?: number;
  full_name?: string | null;
  phone?: string | null;
  mac_address?: string | null;
  static_ip?: string | null;
  expiry_date?: string;
  reseller_id?: number;
  region?: string | null;
  building?: string | null;
  address?: string | null;
  nationality?: string | null;
  country?: string | null;
  notes?: string | null;
  price?: number | null;
  override_price?: boolean;
}

const NOT_FOUND = 'subscriber not found';

async function loadRow(id: number, live = true): Promise<SubscriberRow | undefined> {
  const [row] = await db().select().from(subscribers)
    .where(live ? and(eq(subscribers.id, id), isNull(subscribers.deletedAt)) : eq(subscribers.id, id));
  return row;
}

/** The row, after the policy's 404 / 403 rule for the caller and the kind of access. */
async function rowInScope(auth: Auth, id: number, access: 'read' | 'write'): Promise<SubscriberRow> {
  const row = await loadRow(id);
  await assertRecordInScope(db(), auth, access, row?.resellerId, NOT_FOUND);
  return row!;
}

async function livePlan(db_: Tx | ReturnType<typeof db>, id: number): Promise<PlanRow> {
  const [plan] = await db_.select().from(services).where(and(eq(services.id, id), isNull(services.deletedAt)));
  if (!plan) throw badRequest('service_id not found');
  return plan;
}

async function viewOf(row: SubscriberRow) {
  const plans = await plansById(db(), [row.serviceId]);
  return subscriberView(row, plans.get(row.serviceId)?.currency ?? (await loadSettings(db(), ['currency'])).currency);
}

function checkUsername(username: string, field = 'username'): void {
  if (!isValidUsername(username)) throw badRequest(`${field} must be name or name@realm (letters, digits and . _ -)`);
}

function macOrBadRequest(mac: string | null | undefined): string | null | undefined {
  if (mac === undefined || mac === null || mac === '') return mac === '' ? null : mac;
  const normal = normaliseMac(mac);
  if (!normal) throw badRequest('mac_address must be a MAC address such as AA:BB:CC:DD:EE:FF');
  return normal;
}

function ipOrBadRequest(ip: string | null | undefined): string | null | undefined {
  if (ip === undefined || ip === null || ip === '') return ip === '' ? null : ip;
  if (!isIPv4(ip)) throw badRequest('static_ip must be an IPv4 address');
  return ip;
}

function priceOrBadRequest(price: number | null | undefined, currency: string): number | null | undefined {
  if (price === undefined || price === null) return price;
  try {
    return toMinor(price, currency);
  } catch {
    throw badRequest(`price has more decimal places than ${currency} allows`);
  }
}

/** Same rule as bulk set_static_ip: free among live subscribers and in no other username's reply rows. */
async function assertAddressFree(tx: Tx, ip: string, self?: SubscriberRow): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('subscribers.static_ip'))`);
  const res = await tx.execute(sql`
    select 1 from subscribers where deleted_at is null and static_ip = ${ip}::inet and id <> ${self?.id ?? 0}
    union all
    select 1 from radreply where attribute = 'Framed-IP-Address' and value = ${ip} and username <> ${self?.username ?? ''}
    limit 1`);
  if (res.rows.length) throw conflict(ops.REASON.ipUsed);
}

function uniqueConflict(err: unknown): never {
  if (isUniqueViolation(err)) {
    const text = JSON.stringify(err, Object.getOwnPropertyNames(err)) + String((err as { cause?: unknown }).cause);
    throw conflict(text.includes('static_ip') ? ops.REASON.ipUsed : ops.REASON.usernameTaken);
  }
  throw err;
}

function throwFailure(f: ops.Failure): never {
  throw new ApiError(f.status, f.reason);
}

/**
 * One subscriber through an operation: the policy decides 404/403, then the row is locked and the
 * operation's own failure (402, 409...) becomes the HTTP error.
 */
async function runSingle<P>(
  ctx: Ctx<IdParams>,
  permission: Permission,
  op: ops.Operation<P>,
  payload: P,
): Promise<ActionResult> {
  const auth = requirePermission(ctx.meta.auth, permission);
  await rowInScope(auth, ctx.params.id, 'write');
  const scope = await scopeFor(db(), auth, 'write');
  const settings = await loadSettings(db());
  const today = todayIso();
  const extra = await db().transaction(async (tx) => {
    const locked = await ops.lockInScope(tx, scope, [ctx.params.id]);
    if (locked.failed.length) throwFailure(locked.failed[0]);
    const result = await op({ tx, auth, today, settings }, locked.rows, payload);
    if (result.failed.length) throwFailure(result.failed[0]);
    return result.extra.get(ctx.params.id) ?? {};
  });
  const row = await loadRow(ctx.params.id, false);
  return { data: { ...(await viewOf(row!)), ...extra } };
}

/** A `POST /api/subscribers/:id/<path>` action with no body: one operation under one permission. */
const simpleAction = (path: string, permission: Permission, op: ops.Operation<unknown>, summary: string, errors: Record<number, string> = {}) => ({
  rest: `POST /api/subscribers/:id/${path}`,
  http: {
    auth: 'jwt', access: permission, summary, tag: 'subscribers', params: idParams(), body: emptyBody,
    errors: { 403: 'not authorized', 404: 'subscriber not found', ...errors },
  } satisfies HttpRoute,
  async handler(ctx: Ctx<IdParams>): Promise<ActionResult> {
    return runSingle(ctx, permission, op, {});
  },
});

export const subscribersService: ServiceSchema = {
  name: 'subscribers',
  actions: {
    list: {
      rest: 'GET /api/subscribers',
      http: {
        auth: 'jwt',
        access: 'subscribers.view',
        summary: 'List subscribers in scope with filters, search and sort',
        tag: 'subscribers',
        query: listQuery,
        errors: { 403: 'Permission denied, or reseller_id outside the caller\'s tree' },
      },
      async handler(ctx: Ctx<ListParams>): Promise<ActionResult> {
        const auth = requirePermission(ctx.meta.auth, 'subscribers.view');
        return listSubscribers(auth, ctx.params);
      },
    },

    get: {
      rest: 'GET /api/subscribers/:id',
      http: {
        auth: 'jwt',
        access: 'subscribers.view',
        summary: 'One subscriber with service, reseller, counters, password and daily_breakdown',
        tag: 'subscribers',
        params: idParams(),
        errors: { 403: 'not authorized', 404: 'subscriber not found' },
      },
      async handler(ctx: Ctx<IdParams>): Promise<ActionResult> {
        const auth = requirePermission(ctx.meta.auth, 'subscribers.view');
        const row = await rowInScope(auth, ctx.params.id, 'read');
        const [plan] = await db().select().from(services).where(eq(services.id, row.serviceId));
        const [reseller] = await db().select().from(resellers).where(eq(resellers.id, row.resellerId));
        const since = addDays(todayIso(), -30);
        const usage = await db().select({ date: dailyUsage.date, downloadBytes: dailyUsage.downloadBytes })
          .from(dailyUsage)
          .where(and(eq(dailyUsage.subscriberId, row.id), gte(dailyUsage.date, since)))
          .orderBy(asc(dailyUsage.date));
        const view = subscriberView(row, plan.currency);
        const effective = (own: string | null, planned: string | null) => (own ?? planned) === null ? null : Number(own ?? planned);
        return {
          data: {
            ...view,
            service: planView(plan),
            reseller: resellerView(reseller),
            counters: {
              daily_quota_used: row.dailyQuotaUsed,
              monthly_quota_used: row.monthlyQuotaUsed,
              daily_quota_gb: effective(row.dailyQuotaGb, plan.dailyQuotaGb),
              monthly_quota_gb: effective(row.monthlyQuotaGb, plan.monthlyQuotaGb),
              extra_quota_bytes: row.extraQuotaBytes,
              fup_level: row.fupLevel,
              wallet_balance: view.wallet_balance,
            },
          },
          password: decrypt(row.passwordEnc),
          daily_breakdown: usage.map((u) => ({ date: u.date, download_bytes: u.downloadBytes })),
        };
      },
    },

    create: {
      rest: 'POST /api/subscribers',
      http: {
        auth: 'jwt',
        access: 'subscribers.create',
        summary: 'Create a subscriber with its FreeRADIUS rows',
        tag: 'subscribers',
        success: 201,
        body: createBody,
        errors: { 400: 'service_id not found, or a field is invalid', 403: 'reseller has no service limit for this plan', 409: 'username already exists, or static_ip already used' },
      },
      async handler(ctx: Ctx<SubscriberInput>): Promise<ActionResult> {
        const auth = requirePermission(ctx.meta.auth, 'subscribers.create');
        const p = ctx.params;
        checkUsername(p.username!);
        const mac = macOrBadRequest(p.mac_address);
        const staticIp = ipOrBadRequest(p.static_ip);
        const plan = await livePlan(db(), p.service_id!);
        const price = priceOrBadRequest(p.price, plan.currency);
        const resellerId = await targetReseller(db(), auth, p.reseller_id);
        const settings = await loadSettings(db());
        const today = todayIso();
        try {
          const row = await db().transaction(async (tx) => {
            const [taken] = await tx.select({ id: subscribers.id }).from(subscribers)
              .where(and(eq(subscribers.username, p.username!), isNull(subscribers.deletedAt)));
            if (taken) throw conflict(ops.REASON.usernameTaken);
            const probe = { id: 0, resellerId, serviceId: 0 } as SubscriberRow;
            const limits = await ops.checkServiceLimits(tx, [probe], plan.id);
            if (limits.failed.length) throw forbidden(limits.failed[0].reason);
            if (staticIp) await assertAddressFree(tx, staticIp);
            const [inserted] = await tx.insert(subscribers).values({
              username: p.username!,
              passwordEnc: encrypt(p.password!),
              fullName: p.full_name ?? null,
              phone: p.phone ?? null,
              macAddress: mac ?? null,
              serviceId: plan.id,
              resellerId,
              staticIp: staticIp ?? null,
              region: p.region ?? null,
              building: p.building ?? null,
              address: p.address ?? null,
              nationality: p.nationality ?? null,
              country: p.country ?? null,
              notes: p.notes ?? null,
              price: price ?? null,
              overridePrice: p.override_price ?? false,
              expiryDate: p.expiry_date ?? addDays(today, plan.durationDays),
            }).returning();
            await writePasswordRow(tx, inserted.username, p.password!, settings.radius_password_mode as 'nt' | 'cleartext');
            await syncAccessRows(tx, [inserted.id], today);
            return inserted;
          });
          return { data: subscriberView(row, plan.currency) };
        } catch (err) {
          return uniqueConflict(err);
        }
      },
    },

    update: {
      rest: 'PUT /api/subscribers/:id',
      http: {
        auth: 'jwt',
        access: `subscribers.edit (username change: ${'subscribers.rename' satisfies Permission}; reseller_id: ${'subscribers.transfer' satisfies Permission})`,
        summary: 'Update any subset of the create fields; unknown fields are dropped',
        tag: 'subscribers',
        params: idParams(),
        body: updateBody,
        dropUnknown: true,
        errors: { 400: 'service_id not found, or a field is invalid', 403: 'not authorized', 404: 'subscriber not found', 409: 'username already exists, or static_ip already used' },
      },
      async handler(ctx: Ctx<SubscriberInput & IdParams>): Promise<ActionResult> {
        const auth = requirePermission(ctx.meta.auth, 'subscribers.edit');
        const p = ctx.params;
        const current = await rowInScope(auth, p.id, 'write');
        if (p.username !== undefined && p.username !== current.username) {
          requirePermission(auth, 'subscribers.rename');
          checkUsername(p.username);
        }
        const mac = macOrBadRequest(p.mac_address);
        const staticIp = ipOrBadRequest(p.static_ip);
        const newPlan = p.service_id !== undefined && p.service_id !== current.serviceId ? await livePlan(db(), p.service_id) : undefined;
        const currency = newPlan?.currency ?? (await plansById(db(), [current.serviceId])).get(current.serviceId)!.currency;
        const price = priceOrBadRequest(p.price, currency);
        let resellerId: number | undefined;
        if (p.reseller_id !== undefined && p.reseller_id !== current.resellerId) {
          requirePermission(auth, 'subscribers.transfer');
          resellerId = await targetReseller(db(), auth, p.reseller_id);
        }
        const settings = await loadSettings(db());
        const today = todayIso();
        const scope = await scopeFor(db(), auth, 'write');
        try {
          await db().transaction(async (tx) => {
            const locked = await ops.lockInScope(tx, scope, [p.id]);
            if (locked.failed.length) throwFailure(locked.failed[0]);
            const env = { tx, auth, today, settings };
            let row = locked.rows[0];
            if (newPlan) {
              const result = await ops.setService(env, [row], { plan: newPlan, charge_difference: false });
              if (result.failed.length) throwFailure(result.failed[0]);
            }
            const set: Partial<typeof subscribers.$inferInsert> = {};
            const keep = <K extends keyof SubscriberInput>(k: K) => p[k] !== undefined;
            if (keep('full_name')) set.fullName = p.full_name;
            if (keep('phone')) set.phone = p.phone;
            if (mac !== undefined) set.macAddress = mac;
            if (keep('expiry_date')) set.expiryDate = p.expiry_date;
            if (keep('region')) set.region = p.region;
            if (keep('building')) set.building = p.building;
            if (keep('address')) set.address = p.address;
            if (keep('nationality')) set.nationality = p.nationality;
            if (keep('country')) set.country = p.country;
            if (keep('notes')) set.notes = p.notes;
            if (price !== undefined) set.price = price;
            if (keep('override_price')) set.overridePrice = p.override_price;
            if (resellerId !== undefined) set.resellerId = resellerId;
            if (keep('password')) set.passwordEnc = encrypt(p.password!);
            const addressChanged = staticIp !== undefined && staticIp !== row.staticIp;
            if (addressChanged) {
              if (staticIp) await assertAddressFree(tx, staticIp, row);
              set.staticIp = staticIp;
            }
            if (Object.keys(set).length) {
              [row] = await tx.update(subscribers).set({ ...set, updatedAt: sql`now()` }).where(eq(subscribers.id, row.id)).returning();
            }
            if (p.username !== undefined && p.username !== row.username) {
              const renamed = await ops.rename(() => p.username!, 'new_username is invalid')(env, [row], {});
              if (renamed.failed.length) throwFailure(renamed.failed[0]);
            }
            if (p.password !== undefined) {
              const [fresh] = await tx.select({ username: subscribers.username }).from(subscribers).where(eq(subscribers.id, row.id));
              await writePasswordRow(tx, fresh.username, p.password, settings.radius_password_mode as 'nt' | 'cleartext');
            }
            await syncAccessRows(tx, [row.id], today);
            if (addressChanged && !newPlan) await queueDisconnect(tx, [row], 'static_ip');
          });
        } catch (err) {
          return uniqueConflict(err);
        }
        return { data: await viewOf((await loadRow(p.id))!) };
      },
    },

    remove: {
      rest: 'DELETE /api/subscribers/:id',
      http: {
        auth: 'jwt',
        access: 'subscribers.delete',
        summary: 'Soft delete: the username becomes reusable and the FreeRADIUS rows are removed',
        tag: 'subscribers',
        params: idParams(),
        errors: { 403: 'not authorized', 404: 'subscriber not found' },
      },
      async handler(ctx: Ctx<IdParams>): Promise<ActionResult> {
        return runSingle(ctx, 'subscribers.delete', ops.softDelete, {});
      },
    },

    removePermanently: {
      rest: 'DELETE /api/subscribers/:id/permanent',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Hard delete: everything but the ledger, invoices and accounting history',
        tag: 'subscribers',
        params: idParams(),
        errors: { 403: 'Not an admin', 404: 'subscriber not found' },
      },
      async handler(ctx: Ctx<IdParams>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const row = await loadRow(ctx.params.id, false);
        if (!row) throw notFound(NOT_FOUND);
        await db().transaction(async (tx) => {
          const [locked] = await tx.select().from(subscribers).where(eq(subscribers.id, row.id)).for('update');
          if (!locked) throw notFound(NOT_FOUND);
          // A soft-deleted row's username may already belong to a new subscriber: its rows stay.
          if (locked.deletedAt === null) {
            await tx.delete(radcheck).where(eq(radcheck.username, locked.username));
            await tx.delete(radreply).where(eq(radreply.username, locked.username));
            await tx.delete(radusergroup).where(eq(radusergroup.username, locked.username));
            await queueDisconnect(tx, [locked], 'delete');
          }
          await tx.delete(dailyUsage).where(eq(dailyUsage.subscriberId, locked.id));
          await tx.delete(bandwidthRules).where(eq(bandwidthRules.subscriberId, locked.id));
          await tx.delete(walletEntries).where(eq(walletEntries.subscriberId, locked.id));
          await tx.delete(subscribers).where(eq(subscribers.id, locked.id));
          await tx.insert(auditLog).values({
            managerId: authOf(ctx).managerId, action: 'subscriber.delete_permanent', entity: 'subscriber', entityId: locked.id,
            details: { username: locked.username },
          });
        });
        return { data: { id: row.id, deleted: true } };
      },
    },

    renew: simpleAction('renew', 'subscribers.renew', ops.renew,
      'Charge the reseller, extend expiry by the plan duration, reset counters, create the renewal invoice, reconnect',
      { 402: 'insufficient reseller balance', 409: 'already renewed today' }),
    resetFup: simpleAction('reset-fup', 'subscribers.reset_fup', ops.resetFup, 'Daily quota counter and FUP tier to 0 (monthly untouched)'),
    resetMac: simpleAction('reset-mac', 'subscribers.reset_mac', ops.resetMac, 'Clear the bound MAC so the next connection rebinds'),
    activate: simpleAction('activate', 'subscribers.inactivate', ops.enable, 'Status active'),
    deactivate: simpleAction('deactivate', 'subscribers.inactivate', ops.disable, 'Status inactive; FreeRADIUS refuses it; disconnect queued'),
    refill: simpleAction('refill', 'subscribers.refill_quota', ops.refill,
      'Reset daily and monthly counters; charge the refill fee to the reseller', { 402: 'insufficient reseller balance' }),

    rename: {
      rest: 'POST /api/subscribers/:id/rename',
      http: {
        auth: 'jwt',
        access: 'subscribers.rename',
        summary: 'Change the username everywhere it is stored; charges the rename fee to the reseller',
        tag: 'subscribers',
        params: idParams(),
        body: renameBody,
        errors: { 400: 'new_username is invalid', 402: 'insufficient reseller balance', 403: 'not authorized', 404: 'subscriber not found', 409: 'username already exists' },
      },
      async handler(ctx: Ctx<IdParams & { new_username: string }>): Promise<ActionResult> {
        checkUsername(ctx.params.new_username, 'new_username');
        return runSingle(ctx, 'subscribers.rename', ops.rename(() => ctx.params.new_username, 'new_username is invalid'), {});
      },
    },

    addDays: {
      rest: 'POST /api/subscribers/:id/add-days',
      http: {
        auth: 'jwt',
        access: 'subscribers.add_days',
        summary: 'Extend expiry_date without a payment (audited with the reason)',
        tag: 'subscribers',
        params: idParams(),
        body: addDaysBody,
        errors: { 403: 'not authorized', 404: 'subscriber not found' },
      },
      async handler(ctx: Ctx<IdParams & { days: number; reason: string }>): Promise<ActionResult> {
        const { days, reason } = ctx.params;
        const addDaysOp: ops.Operation<unknown> = async (env, rows) => {
          const [row] = rows;
          const expiry = addDays(row.expiryDate, days);
          await env.tx.update(subscribers).set({ expiryDate: expiry, updatedAt: sql`now()` }).where(eq(subscribers.id, row.id));
          await syncAccessRows(env.tx, [row.id], env.today);
          await env.tx.insert(auditLog).values({
            managerId: env.auth.managerId, action: 'subscriber.add_days', entity: 'subscriber', entityId: row.id,
            details: { days, reason, from: row.expiryDate, to: expiry },
          });
          return { failed: [], extra: new Map() };
        };
        return runSingle(ctx, 'subscribers.add_days', addDaysOp, {});
      },
    },

    changeService: {
      rest: 'POST /api/subscribers/:id/change-service',
      http: {
        auth: 'jwt',
        access: 'subscribers.change_service',
        summary: 'Move to another plan; with charge_difference, invoice the prorated net due or credit the wallet',
        tag: 'subscribers',
        params: idParams(),
        body: changeServiceBody,
        errors: { 400: 'service_id not found', 403: 'not authorized, or reseller has no service limit for this plan', 404: 'subscriber not found' },
      },
      async handler(ctx: Ctx<IdParams & { service_id: number; charge_difference?: boolean }>): Promise<ActionResult> {
        requirePermission(ctx.meta.auth, 'subscribers.change_service');
        await rowInScope(authOf(ctx), ctx.params.id, 'write');
        const plan = await livePlan(db(), ctx.params.service_id);
        return runSingle(ctx, 'subscribers.change_service', ops.setService, {
          plan, charge_difference: ctx.params.charge_difference ?? false,
        });
      },
    },

    changeServicePrice: {
      rest: 'GET /api/subscribers/:id/calculate-change-service-price',
      http: {
        auth: 'jwt',
        access: 'subscribers.change_service',
        summary: 'Prorated price of a plan change, without committing',
        tag: 'subscribers',
        params: idParams(),
        query: changePriceQuery,
        errors: { 400: 'service_id not found', 403: 'not authorized', 404: 'subscriber not found' },
      },
      async handler(ctx: Ctx<IdParams & { service_id: number }>): Promise<ActionResult> {
        const auth = requirePermission(ctx.meta.auth, 'subscribers.change_service');
        const row = await rowInScope(auth, ctx.params.id, 'write');
        const q = await quoteServiceChange(db(), { subscriberId: row.id, newServiceId: ctx.params.service_id, today: todayIso(), serviceField: 'service_id' });
        const money = (v: number) => fromMinor(v, q.currency);
        return {
          data: {
            subscriber_id: row.id,
            current_service_id: q.oldServiceId,
            service_id: q.newServiceId,
            currency: q.currency,
            days_remaining: q.daysRemaining,
            old_unused_credit: money(q.oldUnusedCredit),
            new_service_charge: money(q.newServiceCharge),
            net_amount_due: money(q.netAmountDue),
          },
        };
      },
    },

    topupData: {
      rest: 'POST /api/subscribers/:id/topup-data',
      http: {
        auth: 'jwt',
        access: 'subscribers.refill_quota',
        summary: 'Add extra GB on top of the monthly FUP quota',
        tag: 'subscribers',
        params: idParams(),
        body: topupBody,
        errors: { 403: 'not authorized', 404: 'subscriber not found' },
      },
      async handler(ctx: Ctx<IdParams & { gb: number }>): Promise<ActionResult> {
        const bytes = Math.round(ctx.params.gb * GB_BYTES);
        const topup: ops.Operation<unknown> = async (env, rows) => {
          await env.tx.update(subscribers)
            .set({ extraQuotaBytes: sql`${subscribers.extraQuotaBytes} + ${bytes}`, fupPending: true, updatedAt: sql`now()` })
            .where(eq(subscribers.id, rows[0].id));
          return { failed: [], extra: new Map([[rows[0].id, { added_bytes: bytes }]]) };
        };
        return runSingle(ctx, 'subscribers.refill_quota', topup, {});
      },
    },

    addBalance: {
      rest: 'POST /api/subscribers/:id/add-balance',
      http: {
        auth: 'jwt',
        access: 'subscribers.refill_quota',
        summary: 'Credit the subscriber\'s prepaid wallet',
        tag: 'subscribers',
        params: idParams(),
        body: addBalanceBody,
        errors: { 400: 'amount has too many decimals', 403: 'not authorized', 404: 'subscriber not found' },
      },
      async handler(ctx: Ctx<IdParams & { amount: number }>): Promise<ActionResult> {
        const auth = requirePermission(ctx.meta.auth, 'subscribers.refill_quota');
        await rowInScope(auth, ctx.params.id, 'write');
        const { currency } = await loadSettings(db(), ['currency']);
        let amount: number;
        try {
          amount = toMinor(ctx.params.amount, currency);
        } catch {
          throw badRequest(`amount has more decimal places than ${currency} allows`);
        }
        const credit: ops.Operation<unknown> = async (env, rows) => {
          const credit = await creditWallet(env.tx, { subscriberId: rows[0].id, amount, currency, reason: 'add-balance', createdBy: env.auth.managerId });
          return { failed: [], extra: new Map([[rows[0].id, { transaction_id: credit.transactionId }]]) };
        };
        return runSingle(ctx, 'subscribers.refill_quota', credit, {});
      },
    },
  },
};
