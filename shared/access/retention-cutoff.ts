/** Where accounting retention (`accounting_retention_months`) cuts: the usage run's purge and the importer. */

/**
 * First instant kept, as 'YYYY-MM-DD' (a UTC month's first day): `months` whole months before the
 * month of `today`, so the current month and the `months` before it stay. Null: keep everything.
 */
export function retentionCutoff(today: string, months: number): string | null {
  if (months <= 0) return null;
  const [year, month] = today.split('-').map(Number);
  const index = year * 12 + (month - 1) - months;
  const y = Math.floor(index / 12);
  const m = (index % 12) + 1;
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-01`;
}
