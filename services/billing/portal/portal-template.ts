/**
 * The captive portal page: a pure function of its model (no database, no settings, no I/O), in
 * the operator's branding and language, laid out right to left where the language is.
 */
import type { BlockedReason } from '../../../shared/domain/access';
import { dateHtml, escapeHtml, ltr, moneyHtml, ownDirection, safeLogo } from '../templates/html';
import { isRtl } from '../templates/labels';
import { portalLabelsFor, type PortalLabels } from './portal-labels';

export interface PortalInvoiceLine {
  number: string;
  status: string;
  dueDate: string;
  currency: string;
  balanceMinor: number;
  /** The invoice's public receipt, or null when it has no public link. */
  url: string | null;
}

export interface PortalAccount {
  username: string;
  /** Why access is blocked now, or null when it is not. */
  reason: BlockedReason | null;
  expiryDate: string;
  renewal: { plan: string; days: number; priceMinor: number; currency: string } | null;
  invoices: PortalInvoiceLine[];
}

export interface PortalModel {
  language: string;
  operator: { name: string; address: string; phone: string; email: string; logoUrl: string };
  howToPay: string;
  /** Null on the generic page: the address is nobody's open session. */
  account: PortalAccount | null;
  /** The renewal can be paid online now (docs/payments.md): the Pay link is shown. */
  canPayOnline?: boolean;
  /** The outcome of a card just redeemed in the form (docs/cards.md), as words. */
  redeem?: { ok: boolean; message: string } | null;
}

/** The page's only style sheet; its hash is what the Content-Security-Policy allows. */
export const PORTAL_STYLE = `
* { box-sizing: border-box; }
body { margin: 0; font-family: 'Noto Sans', 'Noto Sans Arabic', 'DejaVu Sans', sans-serif; color: #1d232a; background: #eef1f4; line-height: 1.45; }
body[dir=rtl] { font-family: 'Noto Sans Arabic', 'Noto Naskh Arabic', 'Noto Sans', 'DejaVu Sans', sans-serif; }
main { max-width: 40rem; margin: 1.5rem auto; background: #fff; padding: 1.5rem; box-shadow: 0 1px 4px rgba(0,0,0,.15); }
header { border-bottom: 2px solid #1d232a; padding-bottom: .75rem; margin-bottom: 1rem; }
header img { max-height: 4rem; max-width: 12rem; display: block; margin-bottom: .5rem; }
.operator-name { font-size: 1.4rem; font-weight: 700; }
.muted { color: #4a5560; }
h1 { font-size: 1.3rem; margin: 0 0 .75rem; }
h2 { font-size: 1rem; margin: 1.25rem 0 .5rem; text-transform: uppercase; letter-spacing: .04em; color: #4a5560; }
.notice { padding: .75rem 1rem; border-radius: .4rem; margin: .75rem 0; border-inline-start: .35rem solid; }
.notice strong { display: block; }
.blocked { background: #fef3f2; border-color: #b42318; }
.active { background: #ecfdf3; border-color: #18794e; }
dl { display: grid; grid-template-columns: auto 1fr; gap: .25rem 1rem; margin: 0; }
dt { color: #4a5560; }
dd { margin: 0; font-weight: 600; }
table { width: 100%; border-collapse: collapse; }
th, td { padding: .45rem .35rem; text-align: start; border-bottom: 1px solid #d9dee3; vertical-align: top; }
th { font-size: .85rem; color: #4a5560; border-bottom-color: #1d232a; }
.num { text-align: end; white-space: nowrap; }
.date { white-space: nowrap; }
a { color: #0b57d0; }
.button, button { display: inline-block; padding: .5rem 1rem; background: #0a7d3b; color: #fff; border: 0; border-radius: .35rem; text-decoration: none; font: inherit; cursor: pointer; }
form#redeem { display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; }
form#redeem input { font: inherit; padding: .45rem; border: 1px solid #9aa5b1; border-radius: .35rem; min-width: 14rem; direction: ltr; }
@media (max-width: 600px) { main { margin: 0; padding: 1rem; box-shadow: none; } }
`;

function reasonText(t: PortalLabels, account: PortalAccount, language: string): string {
  switch (account.reason) {
    case 'expired':
      return t.expired(dateHtml(account.expiryDate, language));
    case 'quota':
      return t.quota;
    case 'overdue':
      return t.overdue;
    default:
      return '';
  }
}

function accessNotice(t: PortalLabels, account: PortalAccount, language: string): string {
  if (account.reason) {
    return `<div class="notice blocked" id="access" data-reason="${account.reason}"><strong>${t.blocked}</strong>${reasonText(t, account, language)}</div>`;
  }
  return `<div class="notice active" id="access"><strong>${t.active}</strong>${t.paidUntil} ${dateHtml(account.expiryDate, language)}</div>`;
}

function invoiceTable(t: PortalLabels, lines: PortalInvoiceLine[], language: string): string {
  if (lines.length === 0) return `<p class="muted">${t.noOpenInvoices}</p>`;
  const rows = lines
    .map((l) => {
      const link = l.url ? `<a href="${escapeHtml(l.url)}">${t.receipt}</a>` : '';
      return (
        `<tr><td>${ltr(l.number)}</td><td>${dateHtml(l.dueDate, language)}</td><td>${escapeHtml(t.doc.statuses[l.status] ?? l.status)}</td>` +
        `<td class="num">${moneyHtml(l.balanceMinor, l.currency)}</td><td>${link}</td></tr>`
      );
    })
    .join('');
  return (
    `<table id="invoices"><thead><tr><th>${t.doc.number}</th><th>${t.doc.dueDate}</th><th>${t.doc.status}</th>` +
    `<th class="num">${t.doc.balance}</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
  );
}

function payAndRedeem(t: PortalLabels, m: PortalModel): string {
  const pay = m.canPayOnline ? `<p><a class="button" id="pay-online" href="/portal/pay">${t.payOnline}</a></p>` : '';
  const outcome = m.redeem
    ? `<div class="notice ${m.redeem.ok ? 'active' : 'blocked'}" id="redeem-result" data-ok="${m.redeem.ok}">` +
      `${m.redeem.ok ? t.redeemed(ltr(m.redeem.message)) : `<strong>${t.redeemFailed}</strong>${escapeHtml(m.redeem.message)}`}</div>`
    : '';
  return `${pay}<h2>${t.redeemTitle}</h2>${outcome}
<form id="redeem" method="post" action="/portal/redeem"><label for="pin">${t.pin}</label>
<input id="pin" name="pin" inputmode="numeric" autocomplete="off" maxlength="40" required>
<button type="submit">${t.redeemButton}</button></form>`;
}

function accountSection(t: PortalLabels, account: PortalAccount, language: string): string {
  const r = account.renewal;
  const renewal = r
    ? `<dt>${t.renewal}</dt><dd id="renewal">${moneyHtml(r.priceMinor, r.currency)} <span class="muted">(${t.renewalOf(ownDirection(r.plan), ltr(String(r.days)))})</span></dd>`
    : '';
  return `<h1>${t.account}</h1>
<dl><dt>${t.username}</dt><dd id="username">${ltr(account.username)}</dd>${renewal}</dl>
${accessNotice(t, account, language)}
<h2>${t.openInvoices}</h2>
${invoiceTable(t, account.invoices, language)}`;
}

export function renderPortalHtml(m: PortalModel): string {
  const t = portalLabelsFor(m.language);
  const dir = isRtl(m.language) ? 'rtl' : 'ltr';
  const logo = safeLogo(m.operator.logoUrl);
  const contact = [m.operator.address, m.operator.phone, m.operator.email]
    .filter(Boolean)
    .map((line) => `<div class="muted">${ownDirection(line)}</div>`)
    .join('');
  const body = m.account
    ? accountSection(t, m.account, m.language) + payAndRedeem(t, m)
    : `<h1>${t.welcome}</h1><p id="generic">${t.unknown}</p>`;
  const howToPay = m.howToPay
    ? `<section id="how-to-pay"><h2>${t.doc.howToPay}</h2><div>${ownDirection(m.howToPay)}</div></section>`
    : '';
  return `<!doctype html>
<html lang="${escapeHtml(m.language)}" dir="${dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(m.operator.name)}</title>
<style>${PORTAL_STYLE}</style>
</head>
<body dir="${dir}">
<main>
<header>
  ${logo ? `<img src="${escapeHtml(logo)}" alt="">` : ''}
  <div class="operator-name">${ownDirection(m.operator.name)}</div>
  ${contact}
</header>
${body}
${howToPay}
</main>
</body>
</html>`;
}
