/**
 * Phones stored before they were normalised (or imported around the API) are rewritten once to
 * E.164 at start (shared/phone.ts): a SQL migration cannot read phone numbers by country, so this is
 * the migration's JS half. Only rows not yet in E.164 are read, a thousand at a time; one that
 * libphonenumber-js cannot read stays as it is (and is read again at the next start, through the
 * partial index of the rows left: a start with every phone normalised reads nothing).
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../shared/db/client';
import { withTryLock } from '../../shared/db/try-lock';
import { normalisePhone } from '../../shared/phone';
import { loadSettings } from '../../shared/settings';

const BATCH = 1000;

/** Rewrites the phones it can read; the number of rows changed. */
export async function normaliseStoredPhones(db: Db): Promise<number> {
  const done = await withTryLock('subscribers.phone_backfill', async () => {
    const { default_country: country } = await loadSettings(db, ['default_country']);
    let after = 0;
    let changed = 0;
    for (;;) {
      const { rows } = await db.execute<{ id: number; phone: string }>(sql`
        select id, phone from subscribers
         where id > ${after} and phone is not null and phone !~ '^[+][1-9][0-9]{3,14}$'
         order by id limit ${BATCH}`);
      if (rows.length === 0) return changed;
      after = Number(rows[rows.length - 1].id);
      const updates = rows
        .map((r) => ({ id: Number(r.id), phone: normalisePhone(r.phone, country) }))
        .filter((u, i) => u.phone !== rows[i].phone);
      if (updates.length) {
        await db.execute(sql`
          update subscribers s set phone = u.phone
            from unnest(${sql.param(updates.map((u) => u.id))}::int[], ${sql.param(updates.map((u) => u.phone))}::text[]) as u(id, phone)
           where s.id = u.id`);
        changed += updates.length;
      }
    }
  });
  return done ?? 0;
}
