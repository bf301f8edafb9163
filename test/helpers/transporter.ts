/**
 * The transporter of the distributed suites. CI sets TRANSPORTER to the machine's NATS; a laptop
 * without it runs the same suites over a stand-in (Moleculer's in-process Fake, or its loopback
 * TCP). Each suite names the one it ran on, and CI without TRANSPORTER fails instead of passing
 * on the stand-in.
 */
export interface SuiteTransporter {
  /** What the brokers get as TRANSPORTER ('' lets runtime/cluster.ts pick its loopback TCP). */
  transporter: string;
  /** For the suite's name: `NATS (nats://…)`, `Fake (TRANSPORTER not set)`. */
  label: string;
}

export function suiteTransporter(
  fallback: { transporter: string; name: string },
  env: NodeJS.ProcessEnv = process.env,
): SuiteTransporter {
  const set = env.TRANSPORTER;
  if (set) return { transporter: set, label: set.startsWith('nats') ? `NATS (${set})` : set };
  if (env.CI)
    throw new Error(
      'CI is set but TRANSPORTER is not: the distributed suites must run on NATS in CI, not on a stand-in',
    );
  return { transporter: fallback.transporter, label: `${fallback.name} (TRANSPORTER not set)` };
}

export const FAKE = { transporter: 'Fake', name: "Moleculer's in-process Fake transporter" };
