/** What the container tests (test:containers, test:failover, test:bare) share: timed steps, checks, waits, docker. */
import { execFileSync } from 'node:child_process';

export interface Step {
  step: string;
  seconds: number;
  outcome: string;
}

export function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(`check failed: ${what}`);
}

/**
 * A step runner printing `tag name ...` as a step starts and its seconds and outcome as it ends,
 * recording each in `steps` for the summary; a failed step is recorded too (a slow failure is a figure).
 */
export function stepper(tag: string, steps: Step[]) {
  return async <T>(name: string, fn: () => Promise<T>, outcome?: (v: T) => string): Promise<T> => {
    const t = Date.now();
    process.stdout.write(`${tag} ${name} ...\n`);
    let value: T;
    try {
      value = await fn();
    } catch (err) {
      steps.push({ step: name, seconds: (Date.now() - t) / 1000, outcome: 'FAILED' });
      throw err;
    }
    const seconds = (Date.now() - t) / 1000;
    const out = outcome ? outcome(value) : 'ok';
    steps.push({ step: name, seconds, outcome: out });
    process.stdout.write(`${tag} ${name}: ${seconds.toFixed(1)} s, ${out}\n`);
    return value;
  };
}

/** The steps' summary, one line each. */
export function printSteps(tag: string, steps: Step[]): void {
  console.log(`${tag} steps`);
  for (const s of steps) console.log(`  ${s.seconds.toFixed(1).padStart(7)} s  ${s.step}: ${s.outcome}`);
}

/** Polls `probe` until it gives a value; a probe that throws counts as not yet. */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export function docker(args: string[]): string {
  try {
    return execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (err) {
    // What the command printed is the reason (pgBackRest reports its errors on stdout).
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`docker ${args.join(' ')} failed:\n${[stderr, stdout].filter(Boolean).join('\n').trim()}`, {
      cause: err,
    });
  }
}
