/**
 * Playwright's `Browser` does not expose its process, yet a hung browser must be killable. On Linux
 * the browser is our direct child, so it is found in /proc; elsewhere this returns nothing and a
 * hung browser is left to Playwright's own close.
 */
import fs from 'node:fs';

export function browserPidsOf(parentPid: number): number[] {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // Field 4 of /proc/<pid>/stat is the parent pid; the command name in field 2 may hold spaces.
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== parentPid) continue;
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (/chrom/i.test(cmdline)) pids.push(Number(name));
    } catch {
      // The process exited while we looked.
    }
  }
  return pids;
}
