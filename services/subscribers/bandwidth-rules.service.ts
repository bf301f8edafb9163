/**
 * Per-subscriber bandwidth overrides: `{ id, direction: upload|download|both, rate_kbps,
 * start_time, end_time ('HH:MM' or null), days ([0..6], 0 = Sunday, or null = every day),
 * priority (1 highest .. 8) }`.
 *
 * The RADIUS reply side: rules without a time window are always in force, so the winning upload
 * and download rules (lowest priority number, then newest) are written as the subscriber's
 * `Mikrotik-Rate-Limit` radreply (`<upload>k/<download>k`, the router's rx/tx order); a direction
 * without a rule keeps the plan's half (or 0 = unlimited). Rules with a time window cannot be
 * expressed in a static reply: they are stored and listed, and applying them at the window's edges
 * is network-access's job (CoA), triggered by the same outbox event as every change.
 */
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { changedFields, recordAudit } from '../../shared/audit';
import type { Auth } from '../../shared/auth/claims';
import { recordInScope, requirePermission } from '../../shared/auth/policy';
import { db, type Tx } from '../../shared/db/client';
import { bandwidthRules, radreply, services, subscribers } from '../../shared/db/schema';
import { FAILURES, fail } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { isoTimestamp } from '../../shared/http/schemas';
import { ATTR } from '../../shared/radius';
import { queueDisconnect } from '../../shared/access/outbox';
import { idParams, type IdPath, type Infer } from '../../shared/http/schemas';
import { rateTextExpands } from '../../shared/vendors/rate';
import { ruleCreateBody, ruleDeleteBody, ruleParams, ruleUpdateBody } from './subscriber-schemas';

type RuleRow = typeof bandwidthRules.$inferSelect;

/** Update and delete name the rule in the path or in the body: every field but the subscriber's id is optional here. */
type RuleInput = IdPath & Partial<Infer<typeof ruleUpdateBody>>;

export function ruleView(r: RuleRow) {
  return {
    id: r.id,
    subscriber_id: r.subscriberId,
    direction: r.direction,
    rate_kbps: r.rateKbps,
    start_time: r.startTime,
    end_time: r.endTime,
    days: r.days,
    priority: r.priority,
    created_at: isoTimestamp(r.createdAt),
  };
}

/** The permanent rate limit from the rules, or null when no permanent rule exists. */
export function permanentRateLimit(rules: RuleRow[], planRateLimit: string | null): string | null {
  const permanent = rules
    .filter((r) => r.startTime === null && r.endTime === null && (r.days === null || r.days.length === 7))
    .sort((a, b) => a.priority - b.priority || b.id - a.id);
  const pick = (dir: 'upload' | 'download') => permanent.find((r) => r.direction === dir || r.direction === 'both');
  const up = pick('upload');
  const down = pick('download');
  if (!up && !down) return null;
  // A plan rate FreeRADIUS would expand (stored by an old import) lends none of its text to the row.
  const planRate = planRateLimit && !rateTextExpands(planRateLimit) ? planRateLimit : '';
  const [planUp = '0', planDown = '0'] = planRate.split(' ')[0].split('/');
  return `${up ? `${up.rateKbps}k` : planUp || '0'}/${down ? `${down.rateKbps}k` : planDown || '0'}`;
}

/** A time window needs both ends; a window may wrap midnight (22:00-06:00). */
function checkWindow(start: string | null, end: string | null): void {
  if ((start === null) !== (end === null)) throw fail(start === null ? 'startTimeMissing' : 'endTimeMissing');
  if (start !== null && start === end) throw fail('timesEqual');
}

async function writeRateReply(tx: Tx, subscriberId: number): Promise<void> {
  const [sub] = await tx
    .select({ id: subscribers.id, username: subscribers.username, serviceId: subscribers.serviceId })
    .from(subscribers)
    .where(eq(subscribers.id, subscriberId));
  const [plan] = await tx
    .select({ rateLimit: services.rateLimit })
    .from(services)
    .where(eq(services.id, sub.serviceId));
  const rules = await tx.select().from(bandwidthRules).where(eq(bandwidthRules.subscriberId, subscriberId));
  await tx.delete(radreply).where(and(eq(radreply.username, sub.username), eq(radreply.attribute, ATTR.rateLimit)));
  const value = permanentRateLimit(rules, plan?.rateLimit ?? null);
  if (value) await tx.insert(radreply).values({ username: sub.username, attribute: ATTR.rateLimit, op: ':=', value });
  await queueDisconnect(tx, [sub], 'bandwidth_rules');
}

async function liveSubscriber(id: number): Promise<{ resellerId: number } | undefined> {
  const [row] = await db()
    .select({ resellerId: subscribers.resellerId })
    .from(subscribers)
    .where(and(eq(subscribers.id, id), isNull(subscribers.deletedAt)));
  return row;
}

/** Locks the subscriber row first (the order every subscriber write uses), then the rule. */
async function lockRule(tx: Tx, subscriberId: number, ruleId: number): Promise<RuleRow> {
  await tx.select({ id: subscribers.id }).from(subscribers).where(eq(subscribers.id, subscriberId)).for('update');
  const [rule] = await tx
    .select()
    .from(bandwidthRules)
    .where(and(eq(bandwidthRules.id, ruleId), eq(bandwidthRules.subscriberId, subscriberId)))
    .for('update');
  if (!rule) throw fail('bandwidthRuleNotFound');
  return rule;
}

/** A rule's audit row: the rule is the target, its subscriber's reseller the tree that reads it. */
async function auditRule(
  tx: Tx,
  auth: Auth,
  action: 'create' | 'update' | 'delete',
  subscriber: { resellerId: number },
  before: RuleRow | null,
  after: RuleRow | null,
): Promise<void> {
  const rule = (after ?? before)!;
  await recordAudit(tx, auth, {
    action: `bandwidth_rule.${action}`,
    entity: 'bandwidth_rule',
    entityId: rule.id,
    resellerId: subscriber.resellerId,
    details: { subscriber_id: rule.subscriberId, ...changedFields(before, after) },
  });
}

const ruleErrors = {
  403: FAILURES.notAuthorized.message,
  404: `${FAILURES.subscriberNotFound.message}, or ${FAILURES.bandwidthRuleNotFound.message}`,
};

/** The rule id comes from the path (`/:rule_id`) or the body (`rule_id`); both routes share it. */
async function updateRule(ctx: Ctx<RuleInput>): Promise<ActionResult> {
  const auth = requirePermission(ctx.meta.auth, 'subscribers.edit');
  const p = ctx.params;
  const subscriber = await recordInScope(db(), auth, 'write', await liveSubscriber(p.id), 'subscriberNotFound');
  const rule = await db().transaction(async (tx) => {
    const current = await lockRule(tx, p.id, p.rule_id!);
    checkWindow(
      p.start_time === undefined ? current.startTime : p.start_time,
      p.end_time === undefined ? current.endTime : p.end_time,
    );
    const [updated] = await tx
      .update(bandwidthRules)
      .set({
        direction: p.direction ?? current.direction,
        rateKbps: p.rate_kbps ?? current.rateKbps,
        startTime: p.start_time === undefined ? current.startTime : p.start_time,
        endTime: p.end_time === undefined ? current.endTime : p.end_time,
        days: p.days === undefined ? current.days : p.days,
        priority: p.priority ?? current.priority,
        updatedAt: new Date(),
      })
      .where(eq(bandwidthRules.id, current.id))
      .returning();
    await writeRateReply(tx, p.id);
    await auditRule(tx, auth, 'update', subscriber, current, updated);
    return updated;
  });
  return { data: ruleView(rule) };
}

async function removeRule(ctx: Ctx<RuleInput>): Promise<ActionResult> {
  const auth = requirePermission(ctx.meta.auth, 'subscribers.edit');
  const p = ctx.params;
  const subscriber = await recordInScope(db(), auth, 'write', await liveSubscriber(p.id), 'subscriberNotFound');
  await db().transaction(async (tx) => {
    const current = await lockRule(tx, p.id, p.rule_id!);
    await tx.delete(bandwidthRules).where(eq(bandwidthRules.id, current.id));
    await writeRateReply(tx, p.id);
    await auditRule(tx, auth, 'delete', subscriber, current, null);
  });
  return { data: { id: p.rule_id, deleted: true } };
}

export const bandwidthRulesService: ServiceSchema = {
  name: 'bandwidthRules',
  actions: {
    list: {
      rest: 'GET /api/subscribers/:id/bandwidth-rules',
      http: {
        auth: 'jwt',
        access: 'subscribers.view',
        summary: "The subscriber's bandwidth-rule overrides",
        tag: 'subscribers',
        params: idParams(),
        errors: { 403: FAILURES.notAuthorized.message, 404: FAILURES.subscriberNotFound.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        const auth = requirePermission(ctx.meta.auth, 'subscribers.view');
        await recordInScope(db(), auth, 'read', await liveSubscriber(ctx.params.id), 'subscriberNotFound');
        const rows = await db()
          .select()
          .from(bandwidthRules)
          .where(eq(bandwidthRules.subscriberId, ctx.params.id))
          .orderBy(asc(bandwidthRules.priority), asc(bandwidthRules.id));
        return { data: rows.map(ruleView) };
      },
    },
    create: {
      rest: 'POST /api/subscribers/:id/bandwidth-rules',
      http: {
        auth: 'jwt',
        access: 'subscribers.edit',
        summary: 'Add a bandwidth rule (direction, rate_kbps, optional time window and days, priority)',
        tag: 'subscribers',
        success: 201,
        params: idParams(),
        body: ruleCreateBody,
        errors: { 403: FAILURES.notAuthorized.message, 404: FAILURES.subscriberNotFound.message },
      },
      async handler(ctx: Ctx<IdPath & Infer<typeof ruleCreateBody>>): Promise<ActionResult> {
        const auth = requirePermission(ctx.meta.auth, 'subscribers.edit');
        const p = ctx.params;
        const subscriber = await recordInScope(db(), auth, 'write', await liveSubscriber(p.id), 'subscriberNotFound');
        checkWindow(p.start_time ?? null, p.end_time ?? null);
        const rule = await db().transaction(async (tx) => {
          await tx.select({ id: subscribers.id }).from(subscribers).where(eq(subscribers.id, p.id)).for('update');
          const [inserted] = await tx
            .insert(bandwidthRules)
            .values({
              subscriberId: p.id,
              direction: p.direction,
              rateKbps: p.rate_kbps,
              startTime: p.start_time ?? null,
              endTime: p.end_time ?? null,
              days: p.days ?? null,
              priority: p.priority ?? 8,
            })
            .returning();
          await writeRateReply(tx, p.id);
          await auditRule(tx, auth, 'create', subscriber, null, inserted);
          return inserted;
        });
        return { data: ruleView(rule) };
      },
    },
    update: {
      rest: 'PUT /api/subscribers/:id/bandwidth-rules',
      http: {
        auth: 'jwt',
        access: 'subscribers.edit',
        summary: 'Update the rule named by rule_id in the body',
        tag: 'subscribers',
        params: idParams(),
        body: ruleUpdateBody,
        errors: ruleErrors,
      },
      handler: updateRule,
    },
    updateOne: {
      rest: 'PUT /api/subscribers/:id/bandwidth-rules/:rule_id',
      http: {
        auth: 'jwt',
        access: 'subscribers.edit',
        summary: 'Update one rule (rule id in the path)',
        tag: 'subscribers',
        params: ruleParams,
        body: { ...ruleUpdateBody, required: [], minProperties: 1 },
        errors: ruleErrors,
      },
      handler: updateRule,
    },
    remove: {
      rest: 'DELETE /api/subscribers/:id/bandwidth-rules',
      http: {
        auth: 'jwt',
        access: 'subscribers.edit',
        summary: 'Delete the rule named by rule_id in the body',
        tag: 'subscribers',
        params: idParams(),
        body: ruleDeleteBody,
        errors: ruleErrors,
      },
      handler: removeRule,
    },
    removeOne: {
      rest: 'DELETE /api/subscribers/:id/bandwidth-rules/:rule_id',
      http: {
        auth: 'jwt',
        access: 'subscribers.edit',
        summary: 'Delete one rule (rule id in the path)',
        tag: 'subscribers',
        params: ruleParams,
        errors: ruleErrors,
      },
      handler: removeRule,
    },
  },
};
