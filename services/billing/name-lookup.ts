/**
 * Which part of a name search the subscribers' full-name trigram index looks up. pg_trgm's GIN
 * index reads every posting list of the pattern's trigrams whole, so a trigram that most names hold
 * costs the same for every search: `%User 54321%` read 105 index pages (each of `use`, `ser`, `er `
 * about 30) where `%54321%` read 7. When one word of the search is rare in a sample of full names,
 * the index looks up that word alone and the whole pattern is checked on the rows it finds, which
 * are a superset of the whole pattern's (the word is part of it). Results never depend on the
 * sample: it only chooses between two exact ways to find the same rows.
 */
import { pgPool } from '../../shared/db/client';

/** Trigram shares among full names, from a sample (sampleFullNames). */
export interface NameSample {
  /** Share of names holding each trigram seen in the sample (pg_trgm's lower-cased trigrams). */
  shares: ReadonlyMap<string, number>;
  /** The share assumed for a trigram the sample never saw: one sampled name's. */
  unseen: number;
  /** Subscribers (the planner's count) the shares apply to. */
  rows: number;
}

/** A word rare enough to look up alone is expected to match at most this many names to check. */
export const MAX_WORD_ROWS = 1_000;

/** The trigrams pg_trgm looks up for `%word%`: the word's own, with no padding at either end. */
export function wordTrigrams(word: string): string[] {
  const chars = [...word];
  return chars.slice(0, -2).map((_, k) => chars.slice(k, k + 3).join(''));
}

/**
 * The LIKE pattern (`%word%`) of the search's rarest word, when the search holds another word too
 * and that one is expected to match at most MAX_WORD_ROWS names; undefined otherwise (the whole
 * pattern is looked up). Words are runs of letters and digits, as pg_trgm splits them; a word
 * shorter than 3 has no trigram of its own. A word holds no LIKE wildcard or escape.
 */
export function rareWordPattern(search: string, sample: NameSample | undefined): string | undefined {
  if (!sample) return undefined;
  const words = search
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => [...w].length >= 3);
  if (words.length < 2) return undefined;
  let best: { word: string; rows: number } | undefined;
  for (const word of words) {
    const share = Math.min(...wordTrigrams(word).map((t) => sample.shares.get(t) ?? sample.unseen));
    const rows = share * sample.rows;
    if (!best || rows < best.rows) best = { word, rows };
  }
  return best && best.rows <= MAX_WORD_ROWS ? `%${best.word}%` : undefined;
}

/**
 * How often each billing process samples again (about 30-100 ms of PostgreSQL time at 100,000
 * subscribers). A minute, not an hour: subscribers imported after start leave the sample wrong only
 * that long, and a wrong sample costs only speed.
 */
export const NAME_SAMPLE_INTERVAL_MS = 60_000;

/** About this many names are sampled (whole pages: TABLESAMPLE SYSTEM). */
const SAMPLE_NAMES = 10_000;

/**
 * Samples full names and counts the names holding each trigram. TABLESAMPLE SYSTEM reads whole
 * pages at random, so the sample costs a tenth of the table's pages at 100,000 subscribers.
 * Undefined while there are no subscribers to sample.
 */
export async function sampleFullNames(): Promise<NameSample | undefined> {
  const {
    rows: [table],
  } = await pgPool().query<{ rows: number }>(
    `select greatest(reltuples, 0)::float8 as rows from pg_class where oid = 'subscribers'::regclass`,
  );
  const percent = table.rows > SAMPLE_NAMES ? (100 * SAMPLE_NAMES) / table.rows : 100;
  const { rows } = await pgPool().query<{ t: string | null; n: number; names: number }>(
    `with s as materialized (select full_name from subscribers tablesample system ($1))
    select t, count(*)::int as n, (select count(*)::int from s) as names
    from s left join lateral unnest(show_trgm(s.full_name)) t on true group by t`,
    [percent],
  );
  const names = rows[0]?.names ?? 0;
  if (names === 0) return undefined;
  const shares = new Map<string, number>();
  for (const r of rows) if (r.t !== null) shares.set(r.t, r.n / names);
  return { shares, unseen: 1 / names, rows: Math.max(table.rows, names) };
}
