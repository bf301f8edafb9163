/** Ids in slices of `size`, the unit of one transaction. */
export function* inBatches<T>(ids: T[], size: number): Generator<T[]> {
  for (let i = 0; i < ids.length; i += size) yield ids.slice(i, i + size);
}
