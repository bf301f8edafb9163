/**
 * CPU seconds of PostgreSQL processes read from /proc/<pid>/stat, for benches that print the
 * database's CPU beside wall seconds (on a shared machine the CPU moves much less with others' load).
 * Only processes on this host are seen: a remote server's backends count 0.
 */
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import { Client } from 'pg';

/** Clock ticks per second of stat's utime and stime (USER_HZ; 100 on Linux when getconf is missing). */
const clockTicks = (() => {
  try {
    return Number(execSync('getconf CLK_TCK').toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** A process's command name and its user + system CPU seconds so far; throws when it is gone. */
export function procCpu(pid: number | string): { name: string; seconds: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The name sits in parentheses and may itself hold spaces or ')': the fields follow the last ')'.
  const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { name, seconds: (Number(fields[11]) + Number(fields[12])) / clockTicks };
}

/**
 * CPU seconds so far of the backends whose pg_stat_activity rows match `where` (a condition on
 * that view, with `params` for its $n), read through a connection of its own to `url`.
 */
export async function backendCpu(url: string, where: string, params: unknown[]): Promise<Map<number, number>> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ pid: number }>(`select pid from pg_stat_activity where ${where}`, params);
    const out = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        out.set(pid, procCpu(pid).seconds);
      } catch {
        // not on this host, or gone
      }
    }
    return out;
  } finally {
    await c.end();
  }
}

/**
 * CPU between two readings, summed over the processes of the second one (one started in between
 * counts from 0; one gone by then is not counted).
 */
export const cpuDelta = (before: Map<number, number>, after: Map<number, number>): number =>
  [...after].reduce((sum, [pid, t]) => sum + t - (before.get(pid) ?? 0), 0);
