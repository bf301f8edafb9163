/**
 * The audit trail's writer (docs/security.md): one `audit_log` row per write, inserted with the
 * write's own transaction handle so both commit or neither. Who: a manager, an API key (and its
 * manager), or the system (no caller: the scheduler); from which address (`auth.ip`, set by the
 * gateway); what: the action, the target and `{ field: [before, after] }` with secrets masked.
 */
import type { Auth } from './auth/claims';
import type { DbOrTx } from './db/client';
import { auditLog } from './db/schema';

const SECRET = /password|secret|token|pin/i;
const MASK = '********';
const SKIP = new Set(['updatedAt', 'updated_at', 'searchText']);

export interface AuditEntry {
  action: string;
  entity: string;
  entityId?: number | null;
  /** The reseller tree the target belongs to (a reseller reads its tree's rows). */
  resellerId?: number | null;
  details?: Record<string, unknown>;
}

export async function recordAudit(tx: DbOrTx, auth: Auth | undefined, entry: AuditEntry): Promise<void> {
  await tx.insert(auditLog).values({
    managerId: auth?.managerId ?? null,
    actorType: auth ? (auth.keyId !== undefined ? 'api_key' : 'manager') : 'system',
    apiKeyId: auth?.keyId ?? null,
    ip: auth?.ip ?? null,
    action: entry.action,
    entity: entry.entity,
    entityId: entry.entityId ?? null,
    resellerId: entry.resellerId ?? null,
    details: entry.details ?? {},
  });
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
