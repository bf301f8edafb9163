/**
 * The audit rows of a set-based write over many subscribers (a bulk job's batch, the sweep's
 * auto-renew), one INSERT ... SELECT in the batch's transaction: the rows as locked before the
 * write go in as one JSON parameter, the database reads each row as it is now and keeps the
 * fields that differ, so no row travels back to be compared here (bench:audit: this made the
 * trail's share of a bulk batch small; reading the rows back and comparing them in JavaScript cost
 * more than the insert itself). The fields and values are the ones `changedFields` writes for a
 * single action: the row's property names, dates and times as JSON renders them, secrets masked.
 */
import { getTableColumns, sql, type SQL } from 'drizzle-orm';
import { actorOf, auditWriting, MASK, SECRET, SKIP } from '../../shared/audit';
import type { Auth } from '../../shared/auth/claims';
import type { Tx } from '../../shared/db/client';
import { subscribers } from '../../shared/db/schema';
import type { SubscriberRow } from './subscriber-view';

type Column = ReturnType<typeof getTableColumns<typeof subscribers>>[keyof SubscriberRow];

const COLUMNS = Object.entries(getTableColumns(subscribers)).filter(([key]) => !SKIP.has(key)) as [string, Column][];

/** A column of `s` as JSON renders the value Drizzle reads: a time as `toISOString`, a numeric as its text. */
function asRead(column: Column): SQL {
  const ref = sql`s.${sql.identifier(column.name)}`;
  if (column.dataType === 'date')
    return sql`to_jsonb(to_char(${ref} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;
  if (column.columnType === 'PgNumeric') return sql`to_jsonb(${ref}::text)`;
  return sql`to_jsonb(${ref})`;
}

/** The row now, keyed like the Drizzle row (keys are the schema's own property names). */
const NOW = sql`jsonb_build_object(${sql.join(
  COLUMNS.map(([key, column]) => sql`${sql.raw(`'${key}'`)}, ${asRead(column)}`),
  sql`, `,
)})`;

/** `changedFields`' mask in SQL: an empty value stays as it is, any other becomes the mask. */
const masked = (key: SQL, value: SQL) =>
  sql`case when ${key} ~* ${SECRET.source} and ${value} not in ('null'::jsonb, '""'::jsonb) then to_jsonb(${MASK}::text) else ${value} end`;

export async function auditSubscriberRows(
  tx: Tx,
  auth: Auth | undefined,
  action: string,
  before: SubscriberRow[],
  ids: number[],
  extra: Record<string, unknown> = {},
): Promise<void> {
  if (!auditWriting() || ids.length === 0) return;
  const wanted = new Set(ids);
  const rows = before.filter((r) => wanted.has(r.id)).map((r) => ({ id: r.id, before: r }));
  if (rows.length === 0) return;
  const a = actorOf(auth);
  await tx.execute(sql`
    insert into audit_log (manager_id, actor_type, api_key_id, ip, action, entity, entity_id, reseller_id, details)
    select ${a.managerId}::int, ${a.actorType}, ${a.apiKeyId}::int, ${a.ip}, ${action}, 'subscriber', s.id, s.reseller_id,
           coalesce((select jsonb_object_agg(n.key, jsonb_build_array(${masked(sql`n.key`, sql`coalesce(b.value, 'null'::jsonb)`)}, ${masked(sql`n.key`, sql`n.value`)}))
                       from jsonb_each(${NOW}) n left join jsonb_each(x.before) b on b.key = n.key
                      where n.value is distinct from coalesce(b.value, 'null'::jsonb)), '{}'::jsonb)
           || ${JSON.stringify(extra)}::jsonb
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as x(id int, before jsonb)
      join subscribers s on s.id = x.id`);
}
