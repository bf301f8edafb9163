/**
 * `npm run bench:failover` (issue 42, "Figures"): the failover drill of `npm run test:failover`
 * (test/containers/failover-drill.ts) at the scale. A Patroni pair is loaded with the base
 * (bench/failover-seed.ts: 1,000,000 subscribers and 10,000,000 ledger rows seeded in SQL, or a
 * restored dump), the replica catches up, 50 clients pay and the primary's container is killed.
 * Printed: the first served write after the kill, payments acknowledged and lost, the replica's lag
 * just before the kill and the load average; beside the same drill on a small database (the
 * reference) in the same run. Each drill runs on its own stack, removed after it. Exits 1 when a
 * drill fails (a lost payment is a failure).
 *
 * Environment (all optional):
 *   FAILOVER_SEED_SUBSCRIBERS 1000000   FAILOVER_SEED_LEDGER 10000000   (seeded in SQL)
 *   FAILOVER_SEED_DUMP        a pg_dump -Fc of a seeded, migrated database, restored instead
 *   FAILOVER_REFERENCE        1 (0: no small reference run)
 *   CONTAINERS_BUILD          1 (0: the images exist already)
 */
import { failoverDrill, type FailoverFigures } from '../test/containers/failover-drill';
import { printSteps, type Step } from '../test/containers/steps';
import { seedFromEnv } from './failover-seed';

const TAG = '[bench:failover]';

function describe(name: string, f: FailoverFigures): string[] {
  const n = (x: number) => x.toLocaleString('en');
  return [
    `${name}: ${n(f.subscribers)} subscribers, ${n(f.ledgerRows)} ledger rows` +
      (f.seedSeconds
        ? ` (loaded in ${f.seedSeconds.toFixed(0)} s, replica caught up ${f.catchUpSeconds.toFixed(0)} s after)`
        : ''),
    `  first served write ${f.seconds.toFixed(1)} s after the kill (Patroni's new leader running after ${f.promoted.toFixed(1)} s, ` +
      `out of recovery after ${f.outOfRecovery.toFixed(1)} s, first direct commit after ${f.writable.toFixed(1)} s)`,
    `  payments: ${f.acknowledged} acknowledged (${f.before} before the kill), ${f.lost} lost, ${f.failed} failed attempts`,
    `  replica lag before the kill: ${n(f.lagBytes)} bytes not replayed (${n(f.lagUnflushedBytes)} not flushed), replay_lag ${f.lagSeconds.toFixed(3)} s; ` +
      `load average at the kill ${f.loadAtKill.map((l) => l.toFixed(2)).join(' ')}`,
  ];
}

async function drill(name: string, build: boolean, full: boolean): Promise<FailoverFigures> {
  const steps: Step[] = [];
  const seed = full ? seedFromEnv(process.env, { subscribers: 1_000_000, ledger: 10_000_000 }) : undefined;
  try {
    return await failoverDrill({ tag: `${TAG} ${name}:`, build, seed, steps });
  } finally {
    printSteps(`${TAG} ${name}:`, steps);
  }
}

async function main(): Promise<void> {
  let build = process.env.CONTAINERS_BUILD !== '0';
  let reference: FailoverFigures | undefined;
  if (process.env.FAILOVER_REFERENCE !== '0') {
    reference = await drill('reference (small database)', build, false);
    build = false;
  }
  const full = await drill('seeded', build, true);
  console.log('');
  if (reference) for (const line of describe('reference (small database)', reference)) console.log(line);
  for (const line of describe('seeded', full)) console.log(line);
  if (reference)
    console.log(
      `seeded / reference: first served write ${(full.seconds / reference.seconds).toFixed(2)}x ` +
        `(${full.seconds.toFixed(1)} s / ${reference.seconds.toFixed(1)} s)`,
    );
}

main().catch((err) => {
  console.error(`${TAG} FAILED: ${(err as Error).message}`);
  process.exitCode = 1;
});
