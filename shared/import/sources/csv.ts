/**
 * CSV source (docs/import.md, "CSV"): one row per subscriber in `subscribers.csv`, and optionally
 * `plans.csv` and `history.csv` beside it (the source is that file or its folder). Headers are
 * matched case-insensitively after the mapping option renames them (`Login=username,Pass=password`),
 * so an export of SAS4 or anything else is read without editing it.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseStream } from 'csv-parse';
import { parse } from 'csv-parse/sync';
import type { ImportSession, SessionReader } from '../sessions';
import {
  parseSourceDate,
  text,
  NO_HISTORY,
  type HistoryReader,
  type ImportData,
  type ImportPlan,
  type ImportSubscriber,
  type SourceIssue,
} from '../model';

export class ImportInputError extends Error {}

export const CSV_COLUMNS = {
  subscribers: {
    required: ['username', 'password', 'plan'],
    optional: [
      'password_type',
      'plan_price',
      'plan_days',
      'reseller',
      'full_name',
      'phone',
      'address',
      'notes',
      'expiry',
      'static_ip',
      'mac',
      'balance',
      'status',
    ],
  },
  plans: { required: ['name', 'price'], optional: ['days', 'rate_limit'] },
  history: { required: ['id', 'username', 'date', 'amount'], optional: ['paid', 'method', 'description', 'reference'] },
  sessions: {
    required: ['username', 'start', 'input_octets', 'output_octets'],
    optional: ['stop', 'session_id', 'unique_id', 'nas_ip', 'framed_ip', 'mac', 'terminate_cause', 'session_time'],
  },
} as const;

/** `Login=username,Pass=password` -> { login: 'username', pass: 'password' } (keys lower-cased). */
export function parseColumnMap(spec: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (spec ?? '').split(',')) {
    if (!pair.trim()) continue;
    const at = pair.indexOf('=');
    if (at <= 0)
      throw new ImportInputError(`column mapping ${JSON.stringify(pair)} is not <their header>=<our column>`);
    out[pair.slice(0, at).trim().toLowerCase()] = pair
      .slice(at + 1)
      .trim()
      .toLowerCase();
  }
  return out;
}

type Row = Record<string, string>;

function readCsv(file: string, kind: keyof typeof CSV_COLUMNS, map: Record<string, string>): Row[] {
  const raw = fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  const rows = parse(raw, {
    columns: (header: string[]) => header.map((h) => map[h.trim().toLowerCase()] ?? h.trim().toLowerCase()),
    skip_empty_lines: true,
    relax_column_count: true,
    trim: false,
  }) as Row[];
  checkColumns(file, kind, rows.length ? Object.keys(rows[0]) : firstLineColumns(raw, map));
  return rows;
}

function checkColumns(file: string, kind: keyof typeof CSV_COLUMNS, header: string[]): void {
  const missing = CSV_COLUMNS[kind].required.filter((c) => !header.includes(c));
  if (missing.length) {
    throw new ImportInputError(
      `${path.basename(file)}: missing column(s) ${missing.join(', ')} (columns found: ${header.join(', ') || 'none'}; map yours with --columns)`,
    );
  }
}

/** The header of a file read later as a stream, checked now: a bad file stops the run before it writes. */
function readCsvHeader(file: string, kind: keyof typeof CSV_COLUMNS, map: Record<string, string>): void {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(65536);
    const n = fs.readSync(fd, head, 0, head.length, 0);
    checkColumns(
      file,
      kind,
      firstLineColumns(
        head
          .subarray(0, n)
          .toString('utf8')
          .replace(/^\uFEFF/, ''),
        map,
      ),
    );
  } finally {
    fs.closeSync(fd);
  }
}

function firstLineColumns(raw: string, map: Record<string, string>): string[] {
  const first = raw.split(/\r?\n/)[0] ?? '';
  return first
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean)
    .map((h) => map[h] ?? h);
}

const PASSWORD_TYPES: Record<string, string> = {
  '': 'Cleartext-Password',
  cleartext: 'Cleartext-Password',
  plain: 'Cleartext-Password',
  nt: 'NT-Password',
  md5: 'MD5-Password',
  sha1: 'SHA-Password',
  crypt: 'Crypt-Password',
};

export function readCsvSource(source: string, columnMap?: string): ImportData {
  if (!fs.existsSync(source)) throw new ImportInputError(`no such file or folder: ${source}`);
  const dir = fs.statSync(source).isDirectory() ? source : path.dirname(source);
  const subscribersFile = fs.statSync(source).isDirectory() ? path.join(source, 'subscribers.csv') : source;
  if (!fs.existsSync(subscribersFile)) throw new ImportInputError(`no subscribers.csv in ${source}`);
  const map = parseColumnMap(columnMap);
  const issues: SourceIssue[] = [];
  const subRows = readCsv(subscribersFile, 'subscribers', map);
  const plans: ImportPlan[] = [];
  const plansFile = path.join(dir, 'plans.csv');
  const planFromFile = new Set<string>();
  if (fs.existsSync(plansFile)) {
    for (const r of readCsv(plansFile, 'plans', map)) {
      const name = text(r.name) ?? '';
      planFromFile.add(name);
      plans.push({
        name,
        price: text(r.price) ?? '',
        durationDays: r.days ? Number(r.days) : 30,
        rateLimit: text(r.rate_limit),
        macBinding: false,
      });
    }
  }
  const subscribers: ImportSubscriber[] = [];
  const planRows = new Map<string, ImportPlan>();
  for (const r of subRows) {
    const type = (r.password_type ?? '').trim();
    const attribute = PASSWORD_TYPES[type.toLowerCase()] ?? type;
    const expiryText = text(r.expiry);
    const expiry = expiryText ? parseSourceDate(expiryText) : null;
    const username = r.username ?? '';
    if (expiryText && !expiry) {
      issues.push({ entity: 'subscribers', key: username, reason: `expiry is not a date: ${expiryText}` });
      continue;
    }
    const status = (text(r.status) ?? 'active').toLowerCase();
    const plan = text(r.plan);
    if (plan && !planFromFile.has(plan)) {
      const p: ImportPlan = {
        name: plan,
        price: text(r.plan_price) ?? '',
        durationDays: r.plan_days ? Number(r.plan_days) : 30,
        rateLimit: null,
        macBinding: false,
      };
      // The first row naming a plan defines it; a later row saying otherwise is a conflict.
      const seen = planRows.get(plan);
      if (!seen) {
        planRows.set(plan, p);
        plans.push(p);
      } else if ((p.price && p.price !== seen.price) || p.durationDays !== seen.durationDays) plans.push(p);
    }
    subscribers.push({
      username,
      password: r.password ? { attribute, value: r.password } : null,
      plan,
      reseller: text(r.reseller),
      fullName: text(r.full_name),
      phone: text(r.phone),
      address: text(r.address),
      notes: text(r.notes),
      expiry,
      staticIp: text(r.static_ip),
      mac: text(r.mac),
      balance: text(r.balance),
      active: !['inactive', 'disabled', 'suspended', 'banned', '0', 'false', 'no'].includes(status),
    });
  }
  const historyFile = path.join(dir, 'history.csv');
  const history = fs.existsSync(historyFile) ? csvHistory(historyFile, map) : NO_HISTORY;
  const resellerNames = [...new Set(subscribers.map((s) => s.reseller).filter((r): r is string => r !== null))];
  return {
    source: 'csv',
    plans,
    resellers: resellerNames.map((name) => ({ name })),
    subscribers,
    history,
    read: { subscribers: subRows.length },
    issues,
    sessions: fs.existsSync(path.join(dir, 'sessions.csv')) ? csvSessions(path.join(dir, 'sessions.csv'), map) : null,
  };
}

/** A CSV file's rows, streamed, in batches of `size`. */
async function* csvBatches(file: string, map: Record<string, string>, size: number): AsyncIterable<Row[]> {
  const parser = fs.createReadStream(file).pipe(
    parseStream({
      bom: true,
      columns: (header: string[]) => header.map((h) => map[h.trim().toLowerCase()] ?? h.trim().toLowerCase()),
      skip_empty_lines: true,
      relax_column_count: true,
    }),
  );
  let batch: Row[] = [];
  for await (const r of parser as AsyncIterable<Row>) {
    batch.push(r);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

/** `history.csv` beside subscribers.csv, streamed (its header checked now, before anything is written). */
function csvHistory(file: string, map: Record<string, string>): HistoryReader {
  readCsvHeader(file, 'history', map);
  return {
    async *batches(size: number) {
      for await (const rows of csvBatches(file, map, size)) {
        yield rows.map((r) => ({
          key: text(r.id) ?? '',
          username: r.username ?? '',
          date: parseSourceDate(r.date) ?? text(r.date) ?? '',
          amount: text(r.amount) ?? '',
          paid: text(r.paid) ?? text(r.amount) ?? '',
          method: text(r.method),
          description: text(r.description) ?? 'imported charge',
          reference: text(r.reference),
        }));
      }
    },
  };
}

/** `2026-01-31 12:00:00` (UTC) or any ISO 8601 time with its offset -> epoch seconds; null when empty. */
function epochOf(value: string | undefined): number | null | 'bad' {
  const v = (value ?? '').trim();
  if (!v) return null;
  const iso = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(v) ? `${v.replace(' ', 'T')}Z` : v;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? 'bad' : Math.floor(t / 1000);
}

/**
 * `sessions.csv` beside subscribers.csv, streamed: one row per session (docs/import.md). Without
 * `unique_id`, one is derived as FreeRADIUS does (an MD5 of what identifies the session), so a second
 * run finds the same sessions.
 */
function csvSessions(file: string, map: Record<string, string>): SessionReader {
  readCsvHeader(file, 'sessions', map);
  return {
    // The file's size over the mean length of its first lines.
    async estimate() {
      const fd = await fs.promises.open(file, 'r');
      try {
        const { size } = await fd.stat();
        const head = Buffer.alloc(Math.min(size, 64 * 1024));
        await fd.read(head, 0, head.length, 0);
        const lines = head.toString('utf8').split('\n').length - 1;
        return head.length ? Math.round((size * lines) / head.length) : 0;
      } finally {
        await fd.close();
      }
    },
    async *chunks(size: number) {
      for await (const rows of csvBatches(file, map, size)) yield rows.map(csvSession);
    },
  };
}

function csvSession(r: Row): ImportSession {
  const start = epochOf(r.start);
  const stop = epochOf(r.stop);
  const octets = [r.input_octets, r.output_octets].map((o) => (o ?? '').trim());
  const nasIp = text(r.nas_ip) ?? '0.0.0.0';
  const sessionId = text(r.session_id) ?? '';
  const invalid =
    start === 'bad' || start === null
      ? `start is not a time: ${r.start ?? ''}`
      : stop === 'bad'
        ? `stop is not a time: ${r.stop}`
        : octets.some((o) => !/^\d{1,19}$/.test(o))
          ? `octets are not whole numbers: ${octets.join(' ')}`
          : undefined;
  const epoch = (t: number | null | 'bad') => (typeof t === 'number' ? t : null);
  return {
    uniqueId:
      text(r.unique_id) ??
      crypto.createHash('md5').update(`${r.username}|${sessionId}|${r.start}|${nasIp}`).digest('hex'),
    sessionId,
    username: r.username ?? '',
    realm: null,
    nasIp,
    nasPortId: null,
    nasPortType: null,
    start: epoch(start),
    update: epoch(stop),
    stop: epoch(stop),
    interval: null,
    sessionTime: r.session_time ? Number(r.session_time) : null,
    authentic: null,
    connectInfoStart: null,
    connectInfoStop: null,
    input: octets[0] || '0',
    output: octets[1] || '0',
    calledStationId: null,
    callingStationId: text(r.mac),
    terminateCause: text(r.terminate_cause),
    serviceType: null,
    framedProtocol: null,
    framedIp: text(r.framed_ip),
    framedIpv6Address: null,
    framedIpv6Prefix: null,
    framedInterfaceId: null,
    delegatedIpv6Prefix: null,
    class: null,
    invalid,
  };
}
