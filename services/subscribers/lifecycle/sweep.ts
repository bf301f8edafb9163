/**
 * One lifecycle sweep (docs/lifecycle.md), in order: overdue marking, auto-renew, the blocked
 * state, reminders. Each step works in sets (one transaction per batch of ids) and reads the
 * database afresh, so a run that dies half-way is finished by the next one: nothing is done twice.
 */
import { markOverdue } from '../../../shared/billing/overdue';
import { db } from '../../../shared/db/client';
import { loadSettings } from '../../../shared/settings';
import type { Failed } from '../operations';
import { autoRenew } from './auto-renew';
import { refreshBlocked } from './blocked-state';
import { abandonSending, claimReminders, sendPending, type SendText } from './reminders';

export interface SweepCounts {
  today: string;
  overdue_marked: number;
  renewed: number;
  /** Due for auto-renew but refused (the reseller's balance, a currency mismatch...). */
  renew_failed: number;
  blocked: number;
  restored: number;
  /** Reminders sent; `reminders_failed` and `reminders_skipped` beside them. */
  reminded: number;
  reminders_failed: number;
  reminders_skipped: number;
  reminders_abandoned: number;
  /** Why reminders did not run, when they did not. */
  reminders_off?: string;
  seconds: number;
  /** Seconds of each step. */
  steps: { overdue: number; renew: number; blocked: number; reminders: number };
}

export interface SweepDeps {
  batchSize: number;
  sendConcurrency: number;
  portalUrl: string;
  /** The configured chat provider's name, or why there is none (the notifier's `ready`). */
  messaging: () => Promise<{ provider: string } | { off: string }>;
  send: SendText;
  stopping: () => boolean;
  warn: (message: string, detail?: unknown) => void;
}

export async function runSweep(today: string, deps: SweepDeps): Promise<SweepCounts> {
  const started = process.hrtime.bigint();
  const settings = await loadSettings(db());
  const counts: SweepCounts = {
    today,
    overdue_marked: 0,
    renewed: 0,
    renew_failed: 0,
    blocked: 0,
    restored: 0,
    reminded: 0,
    reminders_failed: 0,
    reminders_skipped: 0,
    reminders_abandoned: 0,
    seconds: 0,
    steps: { overdue: 0, renew: 0, blocked: 0, reminders: 0 },
  };
  let mark = started;
  const lap = (step: keyof SweepCounts['steps']) => {
    const now = process.hrtime.bigint();
    counts.steps[step] = Number(now - mark) / 1e9;
    mark = now;
  };

  counts.overdue_marked = await markOverdue(today);
  lap('overdue');

  const renewal = await autoRenew(today, settings, deps.batchSize, deps.stopping);
  counts.renewed = renewal.renewed;
  counts.renew_failed = renewal.failed.length;
  if (renewal.failed.length) deps.warn('auto-renew refused', summarise(renewal.failed));
  lap('renew');

  const blocked = await refreshBlocked(today, settings.suspend_overdue_after_days, deps.batchSize, deps.stopping);
  counts.blocked = blocked.blocked;
  counts.restored = blocked.restored;
  lap('blocked');

  if (!settings.reminders_enabled) counts.reminders_off = 'reminders_enabled is false';
  else if (settings.messaging_provider === 'none') counts.reminders_off = 'messaging_provider is none';
  else {
    const messaging = await deps.messaging();
    if ('off' in messaging) counts.reminders_off = messaging.off;
    else if (!deps.stopping()) {
      counts.reminders_abandoned = await abandonSending();
      await claimReminders(today, settings);
      const sent = await sendPending({
        today,
        settings,
        portalUrl: deps.portalUrl,
        provider: messaging.provider,
        send: deps.send,
        batchSize: deps.batchSize,
        concurrency: deps.sendConcurrency,
        stopping: deps.stopping,
        onError: (id, err) => deps.warn(`reminder ${id} failed`, (err as Error).message),
      });
      counts.reminded = sent.sent;
      counts.reminders_failed = sent.failed;
      counts.reminders_skipped = sent.skipped;
    }
  }
  lap('reminders');
  counts.seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return counts;
}

/** Failures by message with a few ids each, for one log line. */
function summarise(failed: Failed[]): Record<string, { count: number; ids: number[] }> {
  const out: Record<string, { count: number; ids: number[] }> = {};
  for (const f of failed) {
    const entry = (out[f.message] ??= { count: 0, ids: [] });
    entry.count++;
    if (entry.ids.length < 10) entry.ids.push(f.id);
  }
  return out;
}
