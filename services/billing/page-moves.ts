/**
 * How a kept page in id order moves under the writes logged since it was read (docs/billing.md, "A
 * kept page moved by the writes that reach it"). Pure: the I/O is invoice-list.ts's.
 *
 * The log (invoice_list_changes, migration 0039) holds every version a write added to the list or
 * took from it, by invoice id. Ids order the list, so each change lands before the page's first id,
 * inside the page, or after its last: the page's rows are then the kept ones with those inside
 * applied, shifted by what changed before it (more before: the page starts earlier, it takes the
 * nearest rows before its first; fewer: it drops its first rows and takes rows after its last).
 * Anything that does not add up (an id added twice, removed without being there) says the page was
 * not what the log assumes: it is computed again instead.
 */

export interface PagePosition {
  order: 'asc' | 'desc';
  offset: number;
  limit: number;
}

export interface PageMove {
  /** How many of the list's rows nearest before the page's first kept id lead the new page. */
  before: number;
  /** How many rows after its last kept id to read to fill it (0 when the page ended the list). */
  after: number;
  /** The list's rows from the page's first kept id to its last, now, in list order; for a page that ended the list, also the rows added after it. */
  window: number[];
  /** How many rows the new page starts past the window's first (rows removed before the page). */
  skip: number;
  /** The change of the list's total. */
  net: number;
}

/** A move reads at most this many changes; past it the page is computed again. */
export const MAX_PAGE_MOVES = 100;

/**
 * ids: the kept page in list order; moves: each logged version matching the list's filter, as the
 * invoice id (added) or its negation (removed), 0 for a change that names no invoice.
 */
export function planPageMove(ids: number[], position: PagePosition, moves: number[]): PageMove | undefined {
  if (ids.length === 0 || moves.length > MAX_PAGE_MOVES || moves.includes(0)) return undefined;
  const net = new Map<number, number>();
  for (const m of moves) net.set(Math.abs(m), (net.get(Math.abs(m)) ?? 0) + Math.sign(m));
  const precedes = position.order === 'desc' ? (a: number, b: number) => a > b : (a: number, b: number) => a < b;
  const kept = new Set(ids);
  const first = ids[0];
  const last = ids[ids.length - 1];
  const endedList = ids.length < position.limit;
  let shift = 0;
  let total = 0;
  const addedBefore: number[] = [];
  const addedInside: number[] = [];
  for (const [id, change] of net) {
    if (change === 0) continue;
    if (Math.abs(change) > 1) return undefined;
    total += change;
    if (precedes(id, first)) {
      shift += change;
      if (change > 0) addedBefore.push(id);
    } else if (precedes(last, id)) {
      // After a full page only later pages move; a page that ended the list had nothing after it.
      if (endedList && change < 0) return undefined;
      if (endedList) addedInside.push(id);
    } else if (change > 0) {
      if (kept.has(id)) return undefined;
      addedInside.push(id);
    } else if (!kept.has(id)) return undefined;
  }
  const order = (a: number, b: number) => (precedes(a, b) ? -1 : 1);
  const window = ids.filter((id) => (net.get(id) ?? 0) >= 0).concat(addedInside);
  // Page 1 had nothing before it: what is there now is what was added.
  if (position.offset === 0) {
    if (shift < 0) return undefined;
    window.push(...addedBefore);
    shift = 0;
  }
  window.sort(order);
  const before = Math.max(shift, 0);
  const skip = Math.max(-shift, 0);
  const after = endedList ? 0 : Math.max(position.limit - (before + window.length - skip), 0);
  return { before, after, window, skip, net: total };
}

/** PostgreSQL's text of an int[] (`{3,2,1}`) as numbers. */
export function parseIntArray(text: string): number[] {
  return text.length <= 2 ? [] : text.slice(1, -1).split(',').map(Number);
}
