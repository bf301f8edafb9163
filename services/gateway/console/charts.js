/**
 * Bandwidth charts with uPlot, drawn from GET /api/subscribers/:id/bandwidth: `last_24h` (hourly
 * points), `last_30d` (daily points) and `sessions` (the latest sessions), each point with a time
 * field and byte counts. Any other array of timed points in the answer is charted the same way.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { clock, date, localDay, plain } from './format.js';
import { addTexts, fieldLabel, t } from './i18n.js';
import { bytes, dateTime, html, Table } from './ui.js';

addTexts(
  { ar: { When: 'متى', Time: 'الوقت', '{title}: {series} over time': '{title}: {series} عبر الزمن', ', ': '، ' } },
  {
    amount: ['Amount', 'المبلغ'],
    new: ['New', 'جدد'],
    expired_not_renewed: ['Expired, not renewed', 'منتهون دون تجديد'],
    online: ['Online', 'متصلون'],
    download_bytes: ['Download bytes', 'التنزيل (بايت)'],
    upload_bytes: ['Upload bytes', 'الرفع (بايت)'],
  },
);

const TIME_KEYS = [
  't',
  'ts',
  'time',
  'timestamp',
  'bucket',
  'hour',
  'day',
  'date',
  'period',
  'start',
  'started_at',
  'start_time',
];
const COLORS = ['#1f5fbf', '#c0392b', '#2e7d32', '#8e44ad', '#b9770e'];
const TITLES = {
  last_24h: 'Last 24 hours',
  last_30d: 'Last 30 days',
  sessions: 'Per session',
  daily_breakdown: 'Daily download, last 30 days',
};

function seconds(v) {
  if (typeof v === 'number') return v > 1e12 ? v / 1000 : v;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? null : ms / 1000;
}

/**
 * `{ x, series: [{ name, values }], unit }` of rows with a time key, else null. Byte counters are
 * charted alone when present (a session row also has durations and rates, on other scales).
 */
export function toSeries(rows) {
  if (!Array.isArray(rows) || rows.length === 0 || typeof rows[0] !== 'object' || rows[0] === null) return null;
  const timeKey = TIME_KEYS.find((k) => k in rows[0] && seconds(rows[0][k]) !== null);
  if (!timeKey) return null;
  const numeric = Object.keys(rows[0]).filter(
    (k) => k !== timeKey && rows.some((r) => typeof r[k] === 'number' || /^\d+$/.test(r[k] ?? '')),
  );
  const byteKeys = numeric.filter((k) => k.endsWith('_bytes'));
  const keys = byteKeys.length ? byteKeys : numeric.filter((k) => !k.endsWith('_id'));
  if (keys.length === 0) return null;
  const sorted = rows
    .filter((r) => seconds(r[timeKey]) !== null)
    .sort((a, b) => seconds(a[timeKey]) - seconds(b[timeKey]));
  return {
    x: sorted.map((r) => seconds(r[timeKey])),
    // A day (`2026-11-28`) or an instant, in the one date format (the axis is a canvas: no isolates).
    labels: sorted.map((r) => plain(String(r[timeKey]).length === 10 ? date(r[timeKey]) : dateTime(r[timeKey]))),
    series: keys.map((name) => ({
      name,
      values: sorted.map((r) => (r[name] === null || r[name] === undefined ? null : Number(r[name]))),
    })),
    unit: byteKeys.length ? 'bytes' : null,
  };
}

const bits = (v) => (v === null || v === undefined ? '—' : `${(Number(v) / 1e6).toFixed(2)} Mbit/s`);

/** A session row's columns, sizes and rates written for people; unknown fields as they come. */
function sessionColumns(row) {
  const known = {
    session_id: ['Session'],
    started_at: ['Started', (r) => dateTime(r.started_at)],
    stopped_at: ['Stopped', (r) => (r.stopped_at ? dateTime(r.stopped_at) : 'online')],
    duration_seconds: ['Duration', (r) => `${Math.round(Number(r.duration_seconds) / 60)} min`],
    download_bytes: ['Download', (r) => bytes(r.download_bytes)],
    upload_bytes: ['Upload', (r) => bytes(r.upload_bytes)],
    avg_download_bps: ['Avg down', (r) => bits(r.avg_download_bps)],
    avg_upload_bps: ['Avg up', (r) => bits(r.avg_upload_bps)],
    ip_address: ['Address'],
    nas_ip: ['Access server'],
    terminate_cause: ['Ended by'],
  };
  return Object.keys(row)
    .filter((k) => k !== 'online')
    .map((k) => [k, ...(known[k] ?? [fieldLabel(k)])]);
}

/** Tick steps of a byte axis: 1, 2, 5 times powers of ten, none below one byte. */
const BYTE_STEPS = Array.from({ length: 16 }, (_, i) => [1, 2, 5].map((m) => m * 10 ** i)).flat();

/** Rounded labels that repeat their neighbour (1.0 GB, 1.0 GB) are left blank. */
export const distinctLabels = (labels) => labels.map((l, i) => (i > 0 && l === labels[i - 1] ? '' : l));

/** Days and sessions are counts per period: bars; hours are a flow: a line. */
const BARS = new Set(['last_30d', 'sessions']);

/** `ticks`: about how many labels the time axis has room for (fewer on a phone). */
export function Chart({ title, data, bars = false, ticks = 10 }) {
  const box = useRef(null);
  useEffect(() => {
    if (!box.current) return undefined;
    const width = Math.max(300, box.current.clientWidth || 600);
    // Bars (days, sessions) stand one per slot, labelled by their date or start, so one alone
    // or thirty read the same; hours are a line on a time axis.
    const n = data.x.length;
    const every = Math.max(1, Math.ceil(n / ticks));
    const x = bars ? data.x.map((_, i) => i) : data.x;
    const plot = new uPlot(
      {
        title,
        width,
        height: 220,
        scales: {
          x: bars ? { time: false, range: () => [-0.5, n - 0.5] } : { time: true },
          // Volumes start at zero, so bars and lines compare by their height.
          y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] },
        },
        series: [
          bars ? { label: t('When'), value: (u, i) => (i === null ? '—' : data.labels[i]) } : { label: t('Time') },
          ...data.series.map((s, i) => ({
            label: fieldLabel(s.name),
            stroke: COLORS[i % COLORS.length],
            width: 2,
            fill: bars ? `${COLORS[i % COLORS.length]}55` : undefined,
            paths: bars ? uPlot.paths.bars({ size: [0.35, 40], align: i === 0 ? -1 : 1 }) : undefined,
            points: { show: !bars },
            value: data.unit === 'bytes' ? (u, v) => (v === null ? '—' : bytes(v)) : undefined,
          })),
        ],
        axes: [
          bars
            ? {
                splits: () => x.filter((i) => i % every === 0),
                values: (u, splits) => splits.map((i) => data.labels[i] ?? ''),
              }
            : {
                // Hours in the one format: the time, and the day where it changes.
                values: (u, splits) =>
                  splits.map((v, i) => {
                    const day = localDay(v * 1000);
                    return i > 0 && day === localDay(splits[i - 1] * 1000)
                      ? clock(v * 1000)
                      : `${clock(v * 1000)}\n${day}`;
                  }),
              },
          {
            size: 80,
            // Whole bytes only, so an empty chart (range 0..1) is not labelled "1 B, 1 B, 1 B, 0 B".
            incrs: data.unit === 'bytes' ? BYTE_STEPS : undefined,
            values: data.unit === 'bytes' ? (u, values) => distinctLabels(values.map(bytes)) : undefined,
          },
        ],
      },
      [x, ...data.series.map((s) => s.values)],
      box.current,
    );
    return () => plot.destroy();
  }, [title, data, bars, ticks]);
  return html`<figure class="chart">
    <div ref=${box} role="img" aria-label=${t('{title}: {series} over time', { title, series: data.series.map((s) => fieldLabel(s.name)).join(t(', ')) })}></div>
  </figure>`;
}

/** Every array of the bandwidth answer: a chart for timed points, and sessions also as a table. */
export function Bandwidth({ data }) {
  const parts = Object.entries(data ?? {}).filter(([, v]) => Array.isArray(v));
  if (parts.length === 0 || parts.every(([, rows]) => rows.length === 0))
    return html`<p class="muted">No accounting data yet.</p>`;
  return parts.map(([name, rows]) => {
    const title = TITLES[name] ?? name.replace(/_/g, ' ');
    const series = toSeries(rows);
    const chart = series && html`<${Chart} title=${title} data=${series} bars=${BARS.has(name)} />`;
    if (series && name !== 'sessions') return html`<div key=${name}>${chart}</div>`;
    return html`<section key=${name}>${chart}<h3>${title}</h3>
      <${Table} rows=${rows} empty="No session yet." columns=${rows.length ? sessionColumns(rows[0]) : undefined} /></section>`;
  });
}
