/** Where an import spends its time, for the benchmark (bench/import.ts). */
/**
 * Seconds spent per step of the writer (statement kinds of a batch, the read-backs), summed over
 * runs in this process: `IMPORT_PROFILE=1 npm run bench:import` prints and clears them after each
 * run. A handful of labels, so it stays small in a long-running process.
 */
export const PROF = new Map<string, number>();
export async function prof<T>(label: string, f: () => Promise<T>): Promise<T> {
  const t0 = process.hrtime.bigint();
  try {
    return await f();
  } finally {
    PROF.set(label, (PROF.get(label) ?? 0) + Number(process.hrtime.bigint() - t0) / 1e9);
  }
}
