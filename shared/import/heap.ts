import v8 from 'node:v8';

/** How much V8 may grow the heap past what survived its last full collection, in percent. */
export const HEAP_GROWING_PERCENT = 50;

/**
 * For a process that runs an import (`npm run import`, the benchmark), not the server. What an
 * import holds is its plan (the subscribers and history read); what it sends (every session read,
 * its COPY text) is garbage at once. Under V8's default heap growth that garbage is collected only
 * once the heap is several times what survives a collection (2.1 GB at 10,000,000 sessions); grown
 * by half of that at most, the process stays near what it holds, for a little more GC time
 * (docs/import.md, "fifth round").
 */
export function boundHeapGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
