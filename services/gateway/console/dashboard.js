/**
 * The home page (issue 38, docs/reports.md): GET /api/dashboard as tiles, each opening the list or
 * report it counts, its series as uPlot charts, and the access servers' online counts.
 */
import { api } from './api.js';
import { Chart, toSeries } from './charts.js';
import { addTexts, t } from './i18n.js';
import { href } from './router.js';
import { html, Loaded, money, Table, useLoad } from './ui.js';

addTexts({
  ar: {
    Dashboard: 'لوحة المعلومات',
    Subscribers: 'المشتركون',
    Active: 'نشط',
    Expired: 'منتهي',
    'Expiring in 7 days': 'ينتهي خلال 7 أيام',
    Online: 'متصل',
    Blocked: 'محظور',
    'Received today': 'المستلم اليوم',
    'This month': 'هذا الشهر',
    'Last month': 'الشهر الماضي',
    Outstanding: 'المستحق',
    Overdue: 'المتأخر',
    Wallets: 'المحافظ',
    'Cards sold this month': 'البطاقات المباعة هذا الشهر',
    'Cards redeemed this month': 'البطاقات المستخدمة هذا الشهر',
    'Payments per day': 'المدفوعات يوميًا',
    'Online per hour': 'المتصلون كل ساعة',
    'Subscribers per month': 'المشتركون شهريًا',
    'Access servers': 'خوادم الوصول',
    'Last accounting packet': 'آخر حزمة محاسبة',
    'Received in other currencies': 'المستلم بعملات أخرى',
    '{n} s ago': 'قبل {n} ث',
  },
});

function Tile({ label, value, to }) {
  const body = html`<span class="tile-value">${value}</span> <span class="tile-label">${t(label)}</span>`;
  return html`<li class="tile">${to ? html`<a href=${to}>${body}</a>` : body}</li>`;
}

const age = (s) => (s === null || s === undefined ? '—' : t('{n} s ago', { n: s }));

function Dashboard({ d }) {
  const c = d.currency;
  const s = d.subscribers;
  const subs = (status) => href('/subscribers', { status });
  const revenue = href('/reports', { name: 'revenue' });
  const tiles = [
    ['Subscribers', s.total, subs()],
    ['Active', s.active, subs('active')],
    ['Expired', s.expired, subs('expired')],
    ['Expiring in 7 days', s.expiring_7d, href('/reports', { name: 'expiring' })],
    ['Online', s.online, subs('online')],
    ['Blocked', s.blocked, href('/subscribers', { blocked: 'true' })],
    ['Received today', money(d.revenue.today, c), revenue],
    ['This month', money(d.revenue.month, c), revenue],
    ['Last month', money(d.revenue.last_month, c), revenue],
    ['Outstanding', money(d.invoices.outstanding, c), href('/reports', { name: 'aging' })],
    [
      'Overdue',
      `${money(d.invoices.overdue, c)} (${d.invoices.overdue_count})`,
      href('/invoices', { status: 'overdue' }),
    ],
    ['Wallets', money(d.wallets.total, c)],
    ['Cards sold this month', money(d.cards.sold, c), href('/reports', { name: 'cards' })],
    ['Cards redeemed this month', money(d.cards.redeemed, c), href('/reports', { name: 'cards' })],
  ];
  const perDay = toSeries(d.series.payments_per_day.map((r) => ({ day: r.day, amount: r.amount })));
  const perHour = toSeries(d.series.online_per_hour);
  // charts.js reads a `period` as the time of a point.
  const perMonth = toSeries(
    d.series.subscribers_per_month.map((r) => ({
      period: `${r.month}-01`,
      new: r.new,
      expired_not_renewed: r.expired_not_renewed,
    })),
  );
  return html`
    <ul class="tiles">${tiles.map(([label, value, to]) => html`<${Tile} key=${label} label=${label} value=${value} to=${to} />`)}</ul>
    ${
      d.revenue.other_currencies.length > 0 &&
      html`<p>${t('Received in other currencies')}: ${d.revenue.other_currencies.map((o) => `${money(o.month, o.currency)}`).join(', ')}</p>`
    }
    ${perDay && html`<${Chart} title=${t('Payments per day')} data=${perDay} bars=${true} />`}
    ${perHour && html`<${Chart} title=${t('Online per hour')} data=${perHour} />`}
    ${perMonth && html`<${Chart} title=${t('Subscribers per month')} data=${perMonth} bars=${true} />`}
    <h2>${t('Access servers')}</h2>
    <${Table} rows=${d.nas} columns=${[
      ['name', 'Name'],
      ['ip_address', 'Address'],
      ['online', 'Online'],
      ['last_packet_age_seconds', 'Last accounting packet', (r) => age(r.last_packet_age_seconds)],
    ]} />`;
}

export function DashboardPage() {
  const state = useLoad(() => api('GET', '/api/dashboard'), []);
  return html`<h1>${t('Dashboard')}</h1>
    <${Loaded} state=${state}>${(res) => html`<${Dashboard} d=${res.data} />`}</${Loaded}>`;
}
