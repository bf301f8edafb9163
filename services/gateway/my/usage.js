/**
 * Usage: today and this month against the quotas, the fair-use tier, 30 days as bars (the
 * console's uPlot chart), the live session and the last ones.
 */
import { addTexts, t } from '/console/i18n.js';
import { Chart, toSeries } from '/console/charts.js';
import { dateTime, ltrText } from '/console/format.js';
import { bytes, html, Loaded, useLoad } from '/console/ui.js';
import { my } from './api.js';

addTexts({
  ar: {
    Usage: 'الاستهلاك',
    Today: 'اليوم',
    'This month': 'هذا الشهر',
    '{used} of {quota}': '{used} من {quota}',
    '{used} (no limit)': '{used} (بلا حد)',
    'Including {extra} of top-ups.': 'منها {extra} من الشحن الإضافي.',
    'Speed tier': 'شريحة السرعة',
    'Full speed': 'السرعة الكاملة',
    'Reduced to {rate} after heavy use (tier {level}).': 'خُفّضت إلى {rate} بعد استهلاك كثيف (الشريحة {level}).',
    'Last 30 days': 'آخر 30 يومًا',
    'No usage recorded in the last 30 days.': 'لا استهلاك مسجّل في آخر 30 يومًا.',
    'Connection now': 'الاتصال الآن',
    'Online since {since}': 'متصل منذ {since}',
    Offline: 'غير متصل',
    'IP address': 'عنوان IP',
    'MAC address': 'عنوان MAC',
    'Last sessions': 'آخر الجلسات',
    'No session yet.': 'لا جلسات بعد.',
    '{start} to {stop}': 'من {start} إلى {stop}',
    'Download {down}, upload {up}': 'تنزيل {down}، رفع {up}',
  },
});

function Meter({ title, used, quota, extra }) {
  const share = quota ? Math.min(1, used / quota) : 0;
  return html`<section class="card meter">
    <h2>${t(title)}</h2>
    <p class="big">${quota === null ? t('{used} (no limit)', { used: ltrText(bytes(used)) }) : t('{used} of {quota}', { used: ltrText(bytes(used)), quota: ltrText(bytes(quota)) })}</p>
    ${quota !== null && html`<progress max="100" value=${Math.round(share * 100)} aria-label=${t(title)}></progress>`}
    ${extra > 0 && html`<p class="muted">${t('Including {extra} of top-ups.', { extra: ltrText(bytes(extra)) })}</p>`}
  </section>`;
}

export function UsageScreen() {
  const state = useLoad(() => my('GET', '/usage').then((r) => r.data), []);
  return html`<h1>${t('Usage')}</h1>
    <${Loaded} state=${state}>${(u) => {
      const series = toSeries(u.daily);
      // A phone has room for a few labels: the month and day alone (2026-11-28 is 11-28).
      if (series) series.labels = series.labels.map((l) => l.slice(5));
      return html`
        <${Meter} title="Today" used=${u.today.used_bytes} quota=${u.today.quota_bytes} />
        <${Meter} title="This month" used=${u.month.used_bytes} quota=${u.month.quota_bytes} extra=${u.month.extra_bytes} />
        <section class="card">
          <h2>${t('Speed tier')}</h2>
          <p>${u.fup.level > 0 ? t('Reduced to {rate} after heavy use (tier {level}).', { rate: ltrText(u.fup.rate_limit ?? ''), level: u.fup.level }) : t('Full speed')}</p>
        </section>
        <section class="card">
          <h2>${t('Last 30 days')}</h2>
          ${series ? html`<${Chart} title=${t('Last 30 days')} data=${series} bars=${true} ticks=${5} />` : html`<p class="muted">${t('No usage recorded in the last 30 days.')}</p>`}
        </section>
        <section class="card" aria-live="polite">
          <h2>${t('Connection now')}</h2>
          ${
            u.session.online
              ? html`<p><span class="badge online">${t('Online since {since}', { since: dateTime(u.session.since) })}</span></p>
              <dl class="kv">
                <dt>${t('IP address')}</dt><dd>${ltrText(u.session.ip_address ?? '—')}</dd>
                <dt>${t('MAC address')}</dt><dd>${ltrText(u.session.mac_address ?? '—')}</dd>
              </dl>`
              : html`<p><span class="badge">${t('Offline')}</span></p>`
          }
        </section>
        <section class="card">
          <h2>${t('Last sessions')}</h2>
          ${
            u.last_sessions.length === 0
              ? html`<p class="muted">${t('No session yet.')}</p>`
              : html`<ul class="rows">${u.last_sessions.map(
                  (s) => html`<li>
                  <div>${t('{start} to {stop}', { start: dateTime(s.started_at), stop: dateTime(s.stopped_at) })}</div>
                  <div class="muted">${t('Download {down}, upload {up}', { down: ltrText(bytes(s.download_bytes)), up: ltrText(bytes(s.upload_bytes)) })}</div>
                </li>`,
                )}</ul>`
          }
        </section>`;
    }}</${Loaded}>`;
}
