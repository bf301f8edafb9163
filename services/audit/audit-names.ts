/**
 * The names a person reads beside an audit row's ids (issue 39): the acting manager's username, the
 * API key's name and the target's name (a subscriber's username, an invoice's number...), read for
 * one page at a time with one statement per kind of target. A target since removed has none.
 */
import { inArray } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../shared/db/client';
import { apiKeys, invoices, managers, nas, resellers, services, subscribers } from '../../shared/db/schema';

interface Named {
  table: PgTable;
  id: AnyPgColumn;
  name: AnyPgColumn;
}

/** Audit entity → where its name is. */
const TARGETS: Record<string, Named> = {
  subscriber: { table: subscribers, id: subscribers.id, name: subscribers.username },
  reseller: { table: resellers, id: resellers.id, name: resellers.name },
  invoice: { table: invoices, id: invoices.id, name: invoices.invoiceNumber },
  manager: { table: managers, id: managers.id, name: managers.username },
  plan: { table: services, id: services.id, name: services.name },
  nas: { table: nas, id: nas.id, name: nas.shortname },
  api_key: { table: apiKeys, id: apiKeys.id, name: apiKeys.name },
};

async function namesOf(db: DbOrTx, named: Named, ids: number[]): Promise<Map<number, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.select({ id: named.id, name: named.name }).from(named.table).where(inArray(named.id, unique));
  return new Map(rows.map((r) => [Number(r.id), String(r.name)]));
}

export interface AuditIds {
  managerId: number | null;
  apiKeyId: number | null;
  entity: string;
  entityId: number | null;
}

/** For each row: `manager_name`, `api_key_name`, `target_name` (null when unknown). */
export async function auditNames(
  db: DbOrTx,
  rows: AuditIds[],
): Promise<{ manager_name: string | null; api_key_name: string | null; target_name: string | null }[]> {
  const ids = (pick: (r: AuditIds) => number | null, keep: (r: AuditIds) => boolean = () => true) =>
    rows.filter(keep).flatMap((r) => (pick(r) === null ? [] : [pick(r)!]));
  const kinds = [...new Set(rows.map((r) => r.entity))].filter((k) => k in TARGETS);
  const [people, keys, ...targets] = await Promise.all([
    namesOf(
      db,
      TARGETS.manager,
      ids((r) => r.managerId),
    ),
    namesOf(
      db,
      TARGETS.api_key,
      ids((r) => r.apiKeyId),
    ),
    ...kinds.map((k) =>
      namesOf(
        db,
        TARGETS[k],
        ids(
          (r) => r.entityId,
          (r) => r.entity === k,
        ),
      ),
    ),
  ]);
  const byKind = new Map(kinds.map((k, i) => [k, targets[i]]));
  return rows.map((r) => ({
    manager_name: r.managerId === null ? null : (people.get(r.managerId) ?? null),
    api_key_name: r.apiKeyId === null ? null : (keys.get(r.apiKeyId) ?? null),
    target_name: r.entityId === null ? null : (byKind.get(r.entity)?.get(r.entityId) ?? null),
  }));
}
