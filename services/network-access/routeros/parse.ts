/** RouterOS API rows turned into the API's ping and torch results (no I/O). */

export type Row = Record<string, string>;

/**
 * RouterOS durations in milliseconds: `12ms345us` (v7), `12ms` (v6), `1s200ms`, `00:00:01.5`;
 * undefined when the text is none of these.
 */
export function parseRosDuration(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const clock = /^(\d+):(\d{2}):(\d{2}(?:\.\d+)?)$/.exec(text);
  if (clock) return (Number(clock[1]) * 3600 + Number(clock[2]) * 60 + Number(clock[3])) * 1000;
  const unitMs: Record<string, number> = {
    w: 604_800_000,
    d: 86_400_000,
    h: 3_600_000,
    m: 60_000,
    s: 1000,
    ms: 1,
    us: 0.001,
    ns: 0.000001,
  };
  let total = 0;
  let rest = text;
  const token = /^(\d+(?:\.\d+)?)(ms|us|ns|w|d|h|m|s)/;
  while (rest.length) {
    const m = token.exec(rest);
    if (!m) return undefined;
    total += Number(m[1]) * unitMs[m[2]];
    rest = rest.slice(m[0].length);
  }
  return total;
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

export interface PingReply {
  seq: number;
  /** Round trip in ms, or null when the packet was lost (status says why). */
  time_ms: number | null;
  size: number | null;
  ttl: number | null;
  status: string | null;
}

export interface PingResult {
  address: string;
  sent: number;
  received: number;
  /** Percent of packets lost, 0..100. */
  loss_percent: number;
  min_ms: number | null;
  avg_ms: number | null;
  max_ms: number | null;
  replies: PingReply[];
  /** The router's answer as its terminal prints it. */
  raw: string;
}

const num = (v: string | undefined) => (v === undefined || v === '' ? null : Number(v));

/** `/ping` rows: one per packet (the summary fields are running totals, recomputed here). */
export function pingResult(address: string, rows: Row[]): PingResult {
  const bySeq = new Map<number, PingReply>();
  for (const r of rows) {
    if (r.seq === undefined) continue;
    const time = parseRosDuration(r.time);
    bySeq.set(Number(r.seq), {
      seq: Number(r.seq),
      time_ms: time === undefined ? null : round3(time),
      size: num(r.size),
      ttl: num(r.ttl),
      status: r.status ?? (time === undefined ? 'timeout' : null),
    });
  }
  const replies = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  const times = replies.map((r) => r.time_ms).filter((t): t is number => t !== null);
  const sent = replies.length;
  const received = times.length;
  return {
    address,
    sent,
    received,
    loss_percent: sent ? Math.round(((sent - received) / sent) * 100) : 100,
    min_ms: times.length ? Math.min(...times) : null,
    avg_ms: times.length ? round3(times.reduce((a, b) => a + b, 0) / times.length) : null,
    max_ms: times.length ? Math.max(...times) : null,
    replies,
    raw: pingText(rows),
  };
}

function pingText(rows: Row[]): string {
  const lines = ['  SEQ HOST                                     SIZE TTL TIME       STATUS'];
  for (const r of rows) {
    if (r.seq === undefined) continue;
    lines.push(
      `${r.seq.padStart(5)} ${(r.host ?? '').padEnd(40)} ${(r.size ?? '').padStart(4)} ${(r.ttl ?? '').padStart(3)} ${(r.time ?? '').padEnd(10)} ${r.status ?? ''}`.trimEnd(),
    );
  }
  const last = rows.at(-1);
  if (last) {
    const summary = ['sent', 'received', 'packet-loss', 'min-rtt', 'avg-rtt', 'max-rtt']
      .filter((k) => last[k] !== undefined)
      .map((k) => `${k}=${last[k]}${k === 'packet-loss' ? '%' : ''}`);
    if (summary.length) lines.push(`    ${summary.join(' ')}`);
  }
  return lines.join('\n');
}

export interface TorchConnection {
  protocol: string;
  src_address: string;
  src_port: number | null;
  dst_address: string;
  dst_port: number | null;
  /** Mean over the sampled seconds, bits per second. Download = to the subscriber. */
  download_bps: number;
  upload_bps: number;
}

export interface TorchResult {
  interface: string;
  duration_seconds: number;
  /** Torch samples once a second; each sample is a section. */
  samples: number;
  download_bps: number;
  upload_bps: number;
  connections: TorchConnection[];
}

/**
 * `/tool/torch` rows on the subscriber's PPPoE interface: `tx` leaves the router towards the
 * subscriber (download), `rx` comes from it (upload). A flow missing from a sample counts as 0
 * for that second, so the means are over the whole window.
 */
export function torchResult(iface: string, durationSeconds: number, rows: Row[]): TorchResult {
  const sections = new Set<string>();
  const flows = new Map<string, TorchConnection>();
  for (const r of rows) {
    sections.add(r['.section'] ?? '0');
    // An IPv6 flow (torch run with src-address6/dst-address6) may name its ends in the *6 fields.
    const src = r['src-address'] || r['src-address6'] || '';
    const dst = r['dst-address'] || r['dst-address6'] || '';
    if (!src && !dst) continue;
    const key = [r['ip-protocol'], src, r['src-port'], dst, r['dst-port']].join('|');
    let f = flows.get(key);
    if (!f) {
      f = {
        protocol: r['ip-protocol'] ?? '',
        src_address: src,
        src_port: num(r['src-port']),
        dst_address: dst,
        dst_port: num(r['dst-port']),
        download_bps: 0,
        upload_bps: 0,
      };
      flows.set(key, f);
    }
    f.download_bps += Number(r.tx ?? 0);
    f.upload_bps += Number(r.rx ?? 0);
  }
  const samples = Math.max(1, sections.size);
  const connections = [...flows.values()]
    .map((f) => ({
      ...f,
      download_bps: Math.round(f.download_bps / samples),
      upload_bps: Math.round(f.upload_bps / samples),
    }))
    .sort((a, b) => b.download_bps + b.upload_bps - (a.download_bps + a.upload_bps));
  return {
    interface: iface,
    duration_seconds: durationSeconds,
    samples: rows.length ? sections.size : 0,
    download_bps: connections.reduce((s, c) => s + c.download_bps, 0),
    upload_bps: connections.reduce((s, c) => s + c.upload_bps, 0),
    connections,
  };
}
