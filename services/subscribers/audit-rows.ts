/**
 * The audit rows of a set-based write over many subscribers (a bulk job's batch, the sweep's
 * auto-renew): one INSERT ... SELECT in the batch's transaction, one row per subscriber with the
 * columns the action sets, before and after, where they differ. The locked rows' values of those
 * columns go in as one JSON parameter and the database reads the values now, so nothing travels
 * back. Comparing every column (as a single action's row does) cost more than the write it
 * records at 500 rows a batch, in JavaScript or in SQL (bench:audit, docs/security.md); the
 * action's own columns are what a reader of the trail looks for. Names and values are those of a
 * single action's row: the row's property names, times as ISO text, secrets masked.
 */
import { getTableColumns, sql, type SQL } from 'drizzle-orm';
import { actorOf, auditWriting, MASK, SECRET } from '../../shared/audit';
import type { Auth } from '../../shared/auth/claims';
import type { Tx } from '../../shared/db/client';
import { subscribers } from '../../shared/db/schema';
import type { SubscriberRow } from './subscriber-view';

export type SubscriberField = keyof SubscriberRow;

const COLUMNS = getTableColumns(subscribers);

/** A column of `s` as JSON renders the value Drizzle reads: a time as `toISOString`, a numeric as its text. */
function asRead(field: SubscriberField): SQL {
  const column = COLUMNS[field];
  const ref = sql`s.${sql.identifier(column.name)}`;
  if (column.dataType === 'date')
    return sql`to_jsonb(to_char(${ref} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;
  if (column.columnType === 'PgNumeric') return sql`to_jsonb(${ref}::text)`;
  return sql`coalesce(to_jsonb(${ref}), 'null'::jsonb)`;
}

/** `{ field: [before, after] }` when the value changed, else `{}`; a secret's non-empty values masked. */
function change(field: SubscriberField): SQL {
  const key = sql.raw(`'${field}'`);
  const before = sql`coalesce(x.before -> ${key}, 'null'::jsonb)`;
  const now = asRead(field);
  const show = (v: SQL) =>
    SECRET.test(field)
      ? sql`case when ${v} in ('null'::jsonb, '""'::jsonb) then ${v} else to_jsonb(${MASK}::text) end`
      : v;
  return sql`case when ${before} is distinct from ${now} then jsonb_build_object(${key}, jsonb_build_array(${show(before)}, ${show(now)})) else '{}'::jsonb end`;
}

export async function auditSubscriberRows(
  tx: Tx,
  auth: Auth | undefined,
  action: string,
  fields: readonly SubscriberField[],
  before: readonly ({ id: number } & Partial<SubscriberRow>)[],
  ids: number[],
  extra: Record<string, unknown> = {},
): Promise<void> {
  if (!auditWriting() || ids.length === 0) return;
  const wanted = new Set(ids);
  const rows = before
    .filter((r) => wanted.has(r.id))
    .map((r) => ({ id: r.id, before: Object.fromEntries(fields.map((f) => [f, r[f]])) }));
  if (rows.length === 0) return;
  const a = actorOf(auth);
  const details = sql.join([...fields.map(change), sql`${JSON.stringify(extra)}::jsonb`], sql` || `);
  await tx.execute(sql`
    insert into audit_log (manager_id, actor_type, api_key_id, ip, action, entity, entity_id, reseller_id, details)
    select ${a.managerId}::int, ${a.actorType}, ${a.apiKeyId}::int, ${a.ip}, ${action}, 'subscriber', s.id, s.reseller_id,
           ${details}
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as x(id int, before jsonb)
      join subscribers s on s.id = x.id`);
}
