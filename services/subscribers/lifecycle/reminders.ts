/**
 * Expiry reminders (docs/lifecycle.md). Once-only: a reminder is a `notifications` row first,
 * inserted ON CONFLICT DO NOTHING on (subscriber, kind, rule_days, expiry_date), and only the
 * statement that inserted the row sends it; replicas and restarts find the row and send nothing.
 * At most once: a row is marked `sending` before the provider is called and `sent` or `failed`
 * after; a row a crash left `sending` is marked `failed` (outcome unknown) and never sent again,
 * since the message may well have gone out. A row left `pending` is sent by the next sweep.
 */
import { sql } from 'drizzle-orm';
import { db } from '../../../shared/db/client';
import type { Settings } from '../../../shared/settings';
import { renewalDueSql, resellerCoversSql, walletCoversSql } from './auto-renew';
import { reminderText } from './reminder-text';

export const REMINDER_KIND = 'expiry_reminder';
export const UNKNOWN_OUTCOME = 'outcome unknown after a restart';

/** Sends one text; resolves with the provider's name and its form of the recipient. */
export type SendText = (phone: string, text: string) => Promise<{ provider: string; recipient: string }>;

export interface ReminderOutcome {
  claimed: number;
  sent: number;
  failed: number;
  skipped: number;
  /** Rows a crashed run left `sending`, now `failed`. */
  abandoned: number;
}

/** Rows a crashed run left `sending`: under the sweep lock no other run is sending. */
export async function abandonSending(): Promise<number> {
  const res = await db().execute(sql`
    update notifications set status = 'failed', error = ${UNKNOWN_OUTCOME}
     where status = 'sending' and kind = ${REMINDER_KIND}`);
  return res.rowCount ?? 0;
}

/**
 * One row per live, active subscriber with a phone whose last paid day is `days` from today, for
 * each rule. Left out: a subscriber that auto-renew will renew (auto_renew, a wallet that covers
 * the price and a reseller balance that covers its charge), who has nothing to do; one whose
 * reseller is short is reminded, since its renewal will be refused.
 */
export async function claimReminders(today: string, settings: Settings): Promise<number> {
  let claimed = 0;
  for (const days of settings.reminder_days) {
    const res = await db().execute(sql`
      insert into notifications (subscriber_id, kind, rule_days, expiry_date, recipient, status)
      select s.id, ${REMINDER_KIND}, ${days}::int, s.expiry_date, s.phone, 'pending'
        from subscribers s join services p on p.id = s.service_id
       where s.deleted_at is null and s.status = 'active' and coalesce(btrim(s.phone), '') <> ''
         and s.expiry_date = ${today}::date + ${days}::int
         and not (s.auto_renew and ${walletCoversSql(settings)} and ${resellerCoversSql})
      on conflict on constraint notifications_once_uq do nothing`);
    claimed += res.rowCount ?? 0;
  }
  return claimed;
}

type PendingRow = {
  id: number;
  rule_days: number;
  expiry_date: string;
  subscriber_id: number;
  username: string | null;
  phone: string | null;
  current_expiry: string | null;
  live: boolean;
  auto_renew: boolean;
  price: number | null;
  currency: string | null;
};

async function pendingAfter(afterId: number, limit: number, settings: Settings): Promise<PendingRow[]> {
  const res = await db().execute<PendingRow>(sql`
    select n.id, n.rule_days, n.expiry_date, n.subscriber_id, s.username, s.phone,
           s.expiry_date as current_expiry, (s.deleted_at is null and s.status = 'active') as live,
           coalesce(s.auto_renew, false) as auto_renew, ${renewalDueSql(settings)} as price, p.currency
      from notifications n
      left join subscribers s on s.id = n.subscriber_id
      left join services p on p.id = s.service_id
     where n.status = 'pending' and n.kind = ${REMINDER_KIND} and n.id > ${afterId}
     order by n.id
     limit ${limit}`);
  return res.rows.map((r) => ({ ...r, id: Number(r.id), price: r.price === null ? null : Number(r.price) }));
}

async function settle(id: number, status: string, changes: { error?: string | null; sent?: boolean } = {}) {
  await db().execute(sql`
    update notifications set status = ${status}, error = ${changes.error ?? null},
           sent_at = case when ${changes.sent === true} then now() else sent_at end
     where id = ${id}`);
}

/** Runs `work` over `items`, `concurrency` at a time. */
async function pooled<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

export interface SendOptions {
  today: string;
  settings: Settings;
  portalUrl: string;
  provider: string;
  send: SendText;
  batchSize: number;
  concurrency: number;
  stopping: () => boolean;
  onError: (id: number, err: unknown) => void;
}

/** Sends every `pending` reminder still due; one no longer due (renewed, deleted, past) is `skipped`. */
export async function sendPending(o: SendOptions): Promise<Omit<ReminderOutcome, 'claimed' | 'abandoned'>> {
  const out = { sent: 0, failed: 0, skipped: 0 };
  let after = 0;
  for (;;) {
    if (o.stopping()) break;
    const rows = await pendingAfter(after, o.batchSize, o.settings);
    if (rows.length === 0) break;
    after = rows[rows.length - 1].id;
    await pooled(rows, o.concurrency, async (r) => {
      if (o.stopping()) return;
      if (!r.live || !r.phone || r.current_expiry !== r.expiry_date || r.expiry_date < o.today) {
        await settle(r.id, 'skipped', { error: 'no longer due: the subscriber was renewed, changed or removed' });
        out.skipped++;
        return;
      }
      const days = Math.round((Date.parse(r.expiry_date) - Date.parse(o.today)) / 86_400_000);
      const text = reminderText(o.settings.language, {
        operator: o.settings.operator_name,
        username: r.username ?? '',
        expiryDate: r.expiry_date,
        days,
        price: r.price ?? 0,
        currency: r.currency ?? o.settings.currency,
        portalUrl: o.portalUrl,
        autoRenew: r.auto_renew,
      });
      // Claimed for sending: from here on a crash leaves it `sending`, never to be sent again.
      const marked = await db().execute(sql`
        update notifications set status = 'sending', provider = ${o.provider}, recipient = ${r.phone}, message = ${text}
         where id = ${r.id} and status = 'pending'`);
      if ((marked.rowCount ?? 0) === 0) return;
      try {
        const res = await o.send(r.phone, text);
        await db().execute(sql`
          update notifications set status = 'sent', provider = ${res.provider}, recipient = ${res.recipient},
                 sent_at = now(), error = null
           where id = ${r.id}`);
        out.sent++;
      } catch (err) {
        o.onError(r.id, err);
        await settle(r.id, 'failed', { error: (err as Error).message || String(err) });
        out.failed++;
      }
    });
  }
  return out;
}
