/**
 * A plan's rate as the plans store it: a MikroTik rate-limit string (`rx/tx`, `k`/`M`/`G` x 1000,
 * then optional burst fields), the router's view: rx is what it receives from the subscriber
 * (upload), tx what it sends (download). One value is both directions. The other vendors' profiles
 * render the same rate from the bits per second read here, so a plan has one rate whatever its
 * subscribers' NASes are.
 */
import { groupPairProblem } from '../domain/access';

export interface Rate {
  upBps: number;
  downBps: number;
  /** The burst rates when the string gives them, else the plain rates. */
  peakUpBps: number;
  peakDownBps: number;
}

/**
 * A rate's text as the plans API takes it (plans and fair-use tiers): `rx[/tx]` with an optional k, M or G,
 * then MikroTik's burst fields, with no backtick or `%{` anywhere: the MikroTik profile writes the
 * text as it is into the rows FreeRADIUS reads, and rlm_sql would expand them (groupPairProblem).
 */
export const RATE_LIMIT_PATTERN = '^(?!.*(`|%\\{))\\d+[kKmMgG]?(/\\d+[kKmMgG]?)?( .*)?$';

/**
 * Whether a rate's text, however it came (an import takes any MikroTik text), would be expanded by
 * FreeRADIUS from the rows it reads: a backtick, `%{` or a value wrapped in quotes (groupPairProblem).
 */
export const rateTextExpands = (text: string): boolean => groupPairProblem('Mikrotik-Rate-Limit', text) !== null;

const UNIT: Record<string, number> = { '': 1, k: 1e3, m: 1e6, g: 1e9 };

function bps(text: string): number {
  const m = /^(\d+)([kKmMgG]?)$/.exec(text);
  if (!m) throw new Error(`rate ${JSON.stringify(text)} is not a number with an optional k, M or G`);
  return Number(m[1]) * UNIT[m[2].toLowerCase()];
}

function pair(field: string): [number, number] {
  const [rx, tx] = field.split('/');
  const up = bps(rx);
  return [up, tx === undefined ? up : bps(tx)];
}

/** Throws when the plain rates are not readable; burst fields that are not are ignored (MikroTik's own business). */
export function parseRate(text: string): Rate {
  const fields = text.trim().split(/\s+/);
  const [upBps, downBps] = pair(fields[0]);
  let peak: [number, number] = [upBps, downBps];
  try {
    if (fields[1]) peak = pair(fields[1]);
  } catch {
    // Not a burst rate pair: the plain rates are the peak.
  }
  return { upBps, downBps, peakUpBps: peak[0], peakDownBps: peak[1] };
}

/** Kilobits per second, rounded up so a rate below 1 kbit/s is not 0 (no limit, to many routers). */
export const kbps = (bitsPerSecond: number): number => Math.max(1, Math.ceil(bitsPerSecond / 1000));
