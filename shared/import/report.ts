/**
 * The reconciliation report of an import (docs/import.md): per entity the rows read, imported,
 * unchanged (already there from an earlier run or matched by name), skipped with the reason, and
 * conflicting; money totals before and after, to the cent; a sample of mismatches. It carries no
 * password or secret: only usernames, names, source ids, amounts and reasons.
 */
import { formatMinor } from '../money';
import type { Entity, SourceName } from './model';
import type { SessionMonth } from './sessions';

export interface EntityCounts {
  read: number;
  imported: number;
  unchanged: number;
  skipped: number;
  conflicting: number;
}

export interface Issue {
  entity: Entity;
  /** Username, plan or reseller name, or the source's id of a history row. */
  key: string;
  outcome: 'skipped' | 'conflicting' | 'warning';
  reason: string;
}

/** One money total in minor units of `currency`. */
export interface MoneyLine {
  /** Sum over every row of the source that carries an amount. */
  source: number;
  /** Part of `source` on rows that were skipped or conflicting (not brought over). */
  notImported: number;
  /** Sum in our ledger of what imports from this source brought over, this run and earlier ones. */
  after: number;
  /** source - notImported - after: 0 when everything reconciles to the cent. */
  difference: number;
}

export interface Mismatch {
  entity: Entity;
  key: string;
  what: string;
  source: string;
  ours: string;
}

export interface ImportReport {
  source: SourceName;
  dryRun: boolean;
  seconds: number;
  currency: string;
  entities: Record<Entity, EntityCounts>;
  /** Issues by entity, outcome and reason: how many, and the keys of the first few. */
  reasons: { entity: Entity; outcome: Issue['outcome']; reason: string; count: number; examples: string[] }[];
  /** Where every issue was written, one CSV line each (`issuesFile` of the run), or null. */
  issuesFile: string | null;
  money: { balances: MoneyLine; payments: MoneyLine; reconciled: boolean };
  mismatches: Mismatch[];
  /** Accounting sessions per month (UTC, of their start) against the source, or null: none read. */
  sessions: { months: SessionMonth[]; reconciled: boolean } | null;
}

export const SAMPLE = 20;
/** Keys shown per reason: a reason met 100,000 times is one line, not 100,000. */
export const EXAMPLES = 3;

export function emptyCounts(): EntityCounts {
  return { read: 0, imported: 0, unchanged: 0, skipped: 0, conflicting: 0 };
}

/** Groups issues by reason with the detail after ': ' dropped (`unknown plan: Gold` -> `unknown plan`). */
export function summariseIssues(issues: Issue[]): ImportReport['reasons'] {
  const counts = new Map<string, ImportReport['reasons'][number]>();
  for (const i of issues) {
    const reason = i.reason.split(': ')[0];
    const k = `${i.entity}\u0000${i.outcome}\u0000${reason}`;
    const c = counts.get(k);
    if (!c) counts.set(k, { entity: i.entity, outcome: i.outcome, reason, count: 1, examples: [i.key] });
    else if (++c.count <= EXAMPLES) c.examples.push(i.key);
  }
  return [...counts.values()].sort((a, b) => b.count - a.count);
}

const pad = (s: string | number, n: number) => String(s).padStart(n);

/** The report as text for a terminal. */
export function formatReport(r: ImportReport): string {
  const out: string[] = [];
  const money = (m: number) => formatMinor(m, r.currency);
  out.push(`import from ${r.source}${r.dryRun ? ' (dry run: nothing written)' : ''} in ${r.seconds.toFixed(1)} s`);
  out.push('');
  out.push(
    `${'entity'.padEnd(15)}${pad('read', 9)}${pad('imported', 10)}${pad('unchanged', 11)}${pad('skipped', 9)}${pad('conflicting', 13)}`,
  );
  for (const [entity, c] of Object.entries(r.entities)) {
    if (c.read === 0 && c.imported === 0 && c.unchanged === 0) continue;
    out.push(
      `${entity.padEnd(15)}${pad(c.read, 9)}${pad(c.imported, 10)}${pad(c.unchanged, 11)}${pad(c.skipped, 9)}${pad(c.conflicting, 13)}`,
    );
  }
  out.push('');
  out.push(`money (${r.currency})      source    not imported           after    difference`);
  for (const [name, m] of [
    ['balances', r.money.balances],
    ['payments', r.money.payments],
  ] as const) {
    out.push(
      `${name.padEnd(12)}${pad(money(m.source), 14)}${pad(money(m.notImported), 16)}${pad(money(m.after), 16)}${pad(money(m.difference), 14)}`,
    );
  }
  out.push(r.money.reconciled ? 'totals reconcile to the cent' : 'TOTALS DO NOT RECONCILE: see the mismatches');
  if (r.sessions) {
    out.push('');
    out.push(
      `sessions   ${pad('source', 10)}${pad('octets', 18)}${pad('not imported', 14)}${pad('ours', 10)}${pad('octets', 18)}${pad('difference', 12)}`,
    );
    for (const m of r.sessions.months) {
      const diff =
        m.difference.sessions === 0 && m.difference.octets === '0'
          ? '0'
          : `${m.difference.sessions} / ${m.difference.octets} B`;
      out.push(
        `${m.month.padEnd(11)}${pad(m.source.sessions, 10)}${pad(m.source.octets, 18)}${pad(m.notImported.sessions, 14)}${pad(m.ours.sessions, 10)}${pad(m.ours.octets, 18)}${pad(diff, 12)}`,
      );
    }
    out.push(
      r.sessions.reconciled
        ? 'sessions and octets reconcile per month'
        : 'SESSIONS DO NOT RECONCILE: see the months above',
    );
  }
  if (r.reasons.length) {
    out.push('');
    out.push('skipped, conflicting and warnings by reason:');
    for (const x of r.reasons) {
      const more = x.count > x.examples.length ? ', ...' : '';
      out.push(
        `  ${x.entity} ${x.outcome}: ${x.reason} (${x.count}: ${x.examples.map((k) => JSON.stringify(k)).join(', ')}${more})`,
      );
    }
    if (r.issuesFile) out.push(`every one, with its detail: ${r.issuesFile}`);
  }
  if (r.mismatches.length) {
    out.push('');
    out.push('mismatches (sample):');
    for (const m of r.mismatches)
      out.push(`  ${m.entity} ${JSON.stringify(m.key)} ${m.what}: source ${m.source}, ours ${m.ours}`);
  }
  return out.join('\n');
}

/** Every issue as CSV (entity,key,outcome,reason), cells quoted and spreadsheet formulas defused. */
export function issuesCsv(issues: Issue[]): string {
  const cell = (v: string) => {
    const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
    return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  const lines = issues.map((i) => [i.entity, i.key, i.outcome, i.reason].map(cell).join(','));
  return ['entity,key,outcome,reason', ...lines].join('\n') + '\n';
}
