/**
 * `npm run test:failover` (docs/operations.md, "A database that fails over"; not part of
 * `test:containers`): the failover drill of ./failover-drill.ts on a small database — 50 clients pay,
 * the primary's container is killed, the replica takes over, every acknowledged payment is there.
 * Prints the time from the kill to the first served write and the seconds of each step; exits
 * non-zero on any failure. `npm run bench:failover` runs the same drill at the scale; here
 * FAILOVER_SEED_SUBSCRIBERS / FAILOVER_SEED_LEDGER / FAILOVER_SEED_DUMP (bench/failover-seed.ts) opt
 * in to a loaded database, none by default.
 */
import { seedFromEnv } from '../../bench/failover-seed';
import { failoverDrill } from './failover-drill';
import { printSteps, type Step } from './steps';

const TAG = '[test:failover]';

async function main(): Promise<void> {
  const total = Date.now();
  const steps: Step[] = [];
  try {
    const build = process.env.CONTAINERS_BUILD !== '0';
    const f = await failoverDrill({ tag: TAG, build, seed: seedFromEnv(process.env), steps });
    console.log(
      `\n${TAG} failover: first served write ${f.seconds.toFixed(1)} s after the primary was killed ` +
        `(Patroni's new leader running after ${f.promoted.toFixed(1)} s, out of recovery after ${f.outOfRecovery.toFixed(1)} s, ` +
        `its first direct commit after ${f.writable.toFixed(1)} s; ${f.failed} failed attempts by 50 clients)`,
    );
  } catch {
    // failoverDrill printed the failure and the nodes' logs
    process.exitCode = 1;
  }
  printSteps(TAG, steps);
  console.log(`${TAG} ${process.exitCode ? 'FAILED' : 'passed'} in ${((Date.now() - total) / 1000).toFixed(0)} s`);
}

void main();
