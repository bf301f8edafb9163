/**
 * daloRADIUS source: its MySQL/MariaDB database. FreeRADIUS's own tables (radcheck, radreply,
 * radusergroup, radgroupreply) carry the passwords, expiry, MAC, static address, groups and rate
 * limits; daloRADIUS's userinfo, userbillinfo, billing_plans, billing_history and operators carry
 * names, plans, the history of charges and who created whom. Columns read: docs/import.md.
 */
import { parseSourceDate, passwordAttribute, text, type ImportData, type ImportPlan, type SourceIssue } from '../model';
import { radacctReader } from './radacct';
import { batchesById, connectMysql, lastDayOf, rows, str, type SourceConnection } from './mysql';

export const DISABLED_GROUP = 'daloRADIUS-Disabled-Users';

const PERIOD_DAYS: Record<string, number> = {
  daily: 1,
  weekly: 7,
  monthly: 30,
  quarterly: 91,
  'semi-yearly': 182,
  yearly: 365,
};

/** FreeRADIUS's Expiration value (`Jan 31 2025 00:00:00`, daloRADIUS's `31 Jan 2025`) -> last day paid. */
export function expirationToLastDay(value: string): string | null {
  const date = parseSourceDate(value);
  if (!date) return null;
  const time = /(\d{1,2}:\d{2}(:\d{2})?)\s*$/.exec(value.trim());
  return lastDayOf(date, time ? time[1] : null);
}

export async function readDaloradius(url: string, access: SourceConnection = {}): Promise<ImportData> {
  const conn = await connectMysql(url, access);
  try {
    const issues: SourceIssue[] = [];
    const checks = await rows(conn, 'select username, attribute, op, value from radcheck order by id');
    const replies = await rows(
      conn,
      "select username, attribute, value from radreply where attribute = 'Framed-IP-Address' order by id",
    );
    const groups = await rows(
      conn,
      'select username, groupname, priority from radusergroup order by priority, username',
    );
    const groupReplies = await rows(
      conn,
      "select groupname, attribute, value from radgroupreply where attribute = 'Mikrotik-Rate-Limit' order by id",
    );
    const userinfo = await rows(
      conn,
      'select username, firstname, lastname, email, mobilephone, homephone, workphone, address, city, notes, creationby from userinfo',
      true,
    );
    const billinfo = await rows(conn, 'select username, planName from userbillinfo', true);
    const plans = await rows(
      conn,
      'select id, planName, planCost, planRecurringPeriod, planGroup, planActive from billing_plans order by id',
      true,
    );
    const operators = await rows(conn, 'select username from operators order by id', true);

    // Per user: password, expiry, MAC, disabled.
    const users = new Map<
      string,
      { password?: { attribute: string; value: string }; expiration?: string; mac?: string; reject?: boolean }
    >();
    const user = (name: string) => {
      let u = users.get(name);
      if (!u) users.set(name, (u = {}));
      return u;
    };
    for (const c of checks) {
      const name = str(c.username);
      const attr = str(c.attribute);
      const u = user(name);
      const pw = passwordAttribute(attr);
      if (pw) {
        // Cleartext wins over a hash when a user has both (it serves CHAP and MS-CHAP too).
        if (!u.password || (pw === 'Cleartext-Password' && u.password.attribute !== pw)) {
          u.password = { attribute: pw, value: str(c.value) };
        }
      } else if (attr === 'Expiration') u.expiration = str(c.value);
      else if (attr === 'Calling-Station-Id') u.mac = str(c.value);
      else if (attr === 'Auth-Type' && /^reject$/i.test(str(c.value))) u.reject = true;
    }
    const staticIp = new Map(replies.map((r) => [str(r.username), str(r.value)]));
    const userGroups = new Map<string, string[]>();
    for (const g of groups) {
      const list = userGroups.get(str(g.username)) ?? [];
      list.push(str(g.groupname));
      userGroups.set(str(g.username), list);
    }
    const info = new Map(userinfo.map((r) => [str(r.username), r]));
    const billPlan = new Map(billinfo.map((r) => [str(r.username), text(r.planName)]));
    const operatorNames = new Set(operators.map((o) => str(o.username)));
    const rateOf = new Map(groupReplies.map((r) => [str(r.groupname), str(r.value)]));

    const planList: ImportPlan[] = [];
    const planByGroup = new Map<string, string>();
    const planNames = new Set<string>();
    for (const p of plans) {
      const name = str(p.planName).trim();
      const period = str(p.planRecurringPeriod).trim().toLowerCase();
      const group = text(p.planGroup);
      planList.push({
        name,
        price: text(p.planCost) ?? '0',
        durationDays: PERIOD_DAYS[period] ?? 30,
        rateLimit: group ? (rateOf.get(group) ?? null) : null,
        macBinding: false,
      });
      planNames.add(name);
      if (group && !planByGroup.has(group)) planByGroup.set(group, name);
    }

    const names = [...new Set([...users.keys(), ...info.keys()])];
    const subscribers: ImportData['subscribers'] = [];
    const macPlans = new Set<string>();
    for (const username of names) {
      const u = users.get(username) ?? {};
      const ui = info.get(username);
      const ugroups = (userGroups.get(username) ?? []).filter((g) => g !== DISABLED_GROUP);
      let plan = billPlan.get(username) ?? null;
      if (!plan) plan = ugroups.map((g) => planByGroup.get(g)).find((p) => p !== undefined) ?? null;
      if (!plan && ugroups.length) {
        // A group without a billing plan: a plan of that name at price 0 (its rate limit from radgroupreply).
        plan = ugroups[0];
        if (!planNames.has(plan)) {
          planNames.add(plan);
          planList.push({
            name: plan,
            price: '0',
            durationDays: 30,
            rateLimit: rateOf.get(plan) ?? null,
            macBinding: false,
          });
        }
      }
      let expiry: string | null = null;
      if (u.expiration) {
        expiry = expirationToLastDay(u.expiration);
        if (!expiry) {
          issues.push({ entity: 'subscribers', key: username, reason: `Expiration is not a date: ${u.expiration}` });
          continue;
        }
      }
      if (u.mac && plan) macPlans.add(plan);
      const creator = ui ? text(ui.creationby) : null;
      const fullName = ui ? [text(ui.firstname), text(ui.lastname)].filter(Boolean).join(' ') : '';
      subscribers.push({
        username,
        password: u.password ?? null,
        plan,
        reseller: creator && operatorNames.has(creator) ? creator : null,
        fullName: fullName || null,
        phone: ui ? (text(ui.mobilephone) ?? text(ui.homephone) ?? text(ui.workphone)) : null,
        address: ui ? [text(ui.address), text(ui.city)].filter(Boolean).join(', ') || null : null,
        notes: ui ? text(ui.notes) : null,
        expiry,
        staticIp: staticIp.get(username) ?? null,
        mac: u.mac ?? null,
        balance: null,
        active: !u.reject && !(userGroups.get(username) ?? []).includes(DISABLED_GROUP),
      });
    }
    for (const p of planList) if (macPlans.has(p.name)) p.macBinding = true;
    const used = new Set(subscribers.map((s) => s.reseller).filter(Boolean));
    for (const o of operatorNames) {
      if (!used.has(o)) issues.push({ entity: 'resellers', key: o, reason: 'operator created no subscriber' });
    }
    return {
      source: 'daloradius',
      plans: planList,
      resellers: [...used].map((name) => ({ name: name! })),
      subscribers,
      history: batchesById(
        url,
        access,
        'select id, username, billAmount, billAction, paymentmethod, creationdate from billing_history',
        (h) => ({
          key: str(h.id),
          username: str(h.username),
          date: parseSourceDate(str(h.creationdate)) ?? '',
          amount: text(h.billAmount) ?? '0',
          paid: text(h.billAmount) ?? '0',
          method: text(h.paymentmethod),
          description: text(h.billAction) ?? 'daloRADIUS charge',
          reference: null,
        }),
        true,
      ),
      read: {
        plans: planList.length,
        resellers: operators.length,
        subscribers: subscribers.length + issues.filter((i) => i.entity === 'subscribers').length,
      },
      issues,
      sessions: await radacctReader(url, access),
    };
  } finally {
    await conn.end();
  }
}
