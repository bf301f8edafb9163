/**
 * A batch's sheet printed in parts (docs/cards.md): a part is a range of card numbers (the last group
 * of the serial, 1..count) small enough to render within the pdf-renderer's timeout. A printed range
 * is recorded on the batch and its PINs are blanked, so each card's PIN is shown once while the rest
 * of the batch still prints. Pure functions: the service does the reading, rendering and writing.
 */
import { fail } from '../../shared/failures';

/**
 * What one render holds, within the 15 s default timeout even on a crowded host: on 2 cores at load
 * 13-20 sheets rendered about 20 pages/s (100 pages in 5 s), but at load 39 a 100-page part passed
 * 15 s twice; 50 pages keep twice that margin. Pages are capped as well as cards: at per_page 1 a
 * card is a page.
 */
export const SHEET_MAX_CARDS = 500;
export const SHEET_MAX_PAGES = 50;

export interface CardRange {
  from: number;
  to: number;
}
export interface PrintedRange extends CardRange {
  /** When it was printed, ISO 8601. */
  at: string;
}

/** The most cards one sheet may hold at `perPage` cards a page. */
export function sheetMaxCards(perPage: number): number {
  return Math.min(SHEET_MAX_CARDS, SHEET_MAX_PAGES * perPage);
}

/**
 * The range a print request asks for (`from` defaults to 1, `to` to the batch's last card), or 400
 * naming what is wrong: outside the batch, reversed, or more than one sheet holds.
 */
export function requestedRange(count: number, perPage: number, from?: number, to?: number): CardRange {
  const r = { from: from ?? 1, to: to ?? count };
  if (r.from > count) throw fail('invalidRequest', `from must be at most ${count} (the batch's last card)`);
  if (r.to > count) throw fail('invalidRequest', `to must be at most ${count} (the batch's last card)`);
  if (r.from > r.to) throw fail('invalidRequest', 'from must not be greater than to');
  const max = sheetMaxCards(perPage);
  const size = r.to - r.from + 1;
  if (size > max) {
    throw fail(
      'invalidRequest',
      `a sheet holds at most ${max} cards (${SHEET_MAX_CARDS} cards, ${SHEET_MAX_PAGES} pages at per_page ${perPage}); ` +
        `cards ${r.from}-${r.to} are ${size}: print them in parts with from and to, e.g. from=${r.from}&to=${r.from + max - 1}`,
    );
  }
  return r;
}

/** The printed ranges that share a card with `r`, as text ("1-10, 21-30"); '' when none does. */
export function overlapText(printed: readonly CardRange[], r: CardRange): string {
  return printed
    .filter((p) => p.from <= r.to && r.from <= p.to)
    .map((p) => `${p.from}-${p.to}`)
    .join(', ');
}

/** `printed` with `r` added, in card order. */
export function withPrinted(printed: readonly PrintedRange[], r: PrintedRange): PrintedRange[] {
  return [...printed, r].sort((a, b) => a.from - b.from);
}

/** The ranges of 1..count not printed yet, in card order. */
export function unprintedRanges(count: number, printed: readonly CardRange[]): CardRange[] {
  const out: CardRange[] = [];
  let next = 1;
  for (const p of [...printed].sort((a, b) => a.from - b.from)) {
    if (p.from > next) out.push({ from: next, to: p.from - 1 });
    next = Math.max(next, p.to + 1);
  }
  if (next <= count) out.push({ from: next, to: count });
  return out;
}

/** The batch's PINs with those of `r` blanked; null once no PIN is left. */
export function erasePins(pins: readonly string[], r: CardRange): string[] | null {
  const out = pins.map((pin, i) => (i + 1 >= r.from && i + 1 <= r.to ? '' : pin));
  return out.some((pin) => pin !== '') ? out : null;
}
