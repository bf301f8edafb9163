/**
 * The audit trail's writer (docs/security.md): one `audit_log` row per write, inserted with the
 * write's own transaction handle so both commit or neither. Who: a manager, an API key (and its
 * manager), or the system (no caller: the scheduler); from which address (`auth.ip`, set by the
 * gateway); what: the action, the target and `{ field: [before, after] }` with secrets masked.
 */
import { sql } from 'drizzle-orm';
import type { Auth } from './auth/claims';
import type { DbOrTx } from './db/client';
import { auditLog } from './db/schema';

/** Fields whose values an audit row masks; exported for the statements that diff rows in SQL. */
export const SECRET = /password|secret|token|pin|community/i;
export const MASK = '********';
/** Fields no audit row compares (bookkeeping, not a change anyone made). */
const SKIP = new Set(['updatedAt', 'updated_at', 'searchText']);

export interface AuditEntry {
  action: string;
  entity: string;
  entityId?: number | null;
  /** The reseller tree the target belongs to (a reseller reads its tree's rows). */
  resellerId?: number | null;
  details?: Record<string, unknown>;
}

export interface Actor {
  managerId: number | null;
  /** `anonymous`: a sign-in that failed before anyone was known; `subscriber`: self-care. */
  actorType: 'manager' | 'api_key' | 'system' | 'anonymous' | 'subscriber';
  apiKeyId: number | null;
  ip: string | null;
  /** The subscriber acting through self-care (actor_type `subscriber`). */
  actorSubscriberId?: number | null;
}

let writing = true;

/**
 * bench:audit's baseline only (bench/audit.ts): the same code with no audit row written, so the
 * trail's cost is measured against it in one run. A call in code, not a setting or an environment
 * variable: no configuration of a running installation can turn the trail off.
 */
export function disableAuditForBench(): void {
  writing = false;
}

export function auditWriting(): boolean {
  return writing;
}

/** No caller, or one acting for no manager (systemAuth, as the lifecycle sweep acts): the system. */
export function actorOf(auth: Auth | undefined): Actor {
  if (auth?.subscriberId !== undefined) {
    return {
      managerId: null,
      actorType: 'subscriber',
      apiKeyId: null,
      ip: auth.ip ?? null,
      actorSubscriberId: auth.subscriberId,
    };
  }
  if (!auth || auth.managerId == null) return { managerId: null, actorType: 'system', apiKeyId: null, ip: null };
  return {
    managerId: auth.managerId,
    actorType: auth.keyId !== undefined ? 'api_key' : 'manager',
    apiKeyId: auth.keyId ?? null,
    ip: auth.ip ?? null,
  };
}

export async function recordAudit(tx: DbOrTx, auth: Auth | undefined, entry: AuditEntry): Promise<void> {
  await recordAuditAs(tx, actorOf(auth), entry);
}

/** A row for an actor that is no caller's Auth: a sign-in's own steps (anonymous, or the manager signing in). */
export async function recordAuditAs(tx: DbOrTx, actor: Actor, entry: AuditEntry): Promise<void> {
  if (!writing) return;
  await tx.insert(auditLog).values({
    ...actor,
    action: entry.action,
    entity: entry.entity,
    entityId: entry.entityId ?? null,
    resellerId: entry.resellerId ?? null,
    details: entry.details ?? {},
  });
}

/**
 * Many rows of one actor in one INSERT ... SELECT (a bulk job's batch, a sweep step): one round trip
 * whatever the number of targets, in the caller's transaction.
 */
export async function recordAuditRows(tx: DbOrTx, auth: Auth | undefined, entries: AuditEntry[]): Promise<void> {
  if (!writing || entries.length === 0) return;
  const a = actorOf(auth);
  const rows = entries.map((e) => ({
    action: e.action,
    entity: e.entity,
    entity_id: e.entityId ?? null,
    reseller_id: e.resellerId ?? null,
    details: e.details ?? {},
  }));
  await tx.execute(sql`
    insert into audit_log (manager_id, actor_type, api_key_id, actor_subscriber_id, ip, action, entity, entity_id, reseller_id, details)
    select ${a.managerId}::int, ${a.actorType}, ${a.apiKeyId}::int, ${a.actorSubscriberId ?? null}::int, ${a.ip}, r.action, r.entity, r.entity_id, r.reseller_id, r.details
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        as r(action text, entity text, entity_id int, reseller_id int, details jsonb)`);
}

/** `{ field: [before, after] }` of the fields that differ; a secret's values are masked. */
export function changedFields(
  before: Record<string, unknown> | null | undefined,
  after: Record<string, unknown> | null | undefined,
): Record<string, [unknown, unknown]> {
  const out: Record<string, [unknown, unknown]> = {};
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const key of keys) {
    if (SKIP.has(key)) continue;
    const a = before?.[key];
    const b = after?.[key];
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    out[key] = SECRET.test(key) ? [a ? MASK : a, b ? MASK : b] : [a ?? null, b ?? null];
  }
  return out;
}

/** A request's own fields for an audit row, secrets left out. */
export function auditedRequest(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined && !SECRET.test(k)) out[k] = v;
  return out;
}
