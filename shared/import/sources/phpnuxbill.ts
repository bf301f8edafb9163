/**
 * phpnuxbill source: its MySQL/MariaDB database. tbl_customers (accounts, passwords, balances),
 * tbl_plans (service plans; `Balance` packages are top-ups, not plans), tbl_user_recharges (the
 * plan and expiry of each customer: the active recharge, else the latest), tbl_transactions (the
 * history of paid recharges) and tbl_routers (read and reported, not imported). Columns read:
 * docs/import.md.
 */
import { parseSourceDate, text, type ImportData, type ImportPlan, type SourceIssue } from '../model';
import { radacctReader } from './radacct';
import { batchesById, connectMysql, lastDayOf, rows, str, type SourceConnection, type MysqlRow } from './mysql';

const UNIT_DAYS: Record<string, number> = { days: 1, day: 1, months: 30, month: 30, years: 365, year: 365 };

export async function readPhpnuxbill(url: string, access: SourceConnection = {}): Promise<ImportData> {
  const conn = await connectMysql(url, access);
  try {
    const issues: SourceIssue[] = [];
    const customers = await rows(conn, 'select * from tbl_customers order by id');
    const plans = await rows(conn, 'select * from tbl_plans order by id');
    const recharges = await rows(conn, 'select * from tbl_user_recharges order by id');
    const routers = await rows(conn, 'select id, name from tbl_routers order by id', true);

    const planList: ImportPlan[] = [];
    const planById = new Map<string, string>();
    for (const p of plans) {
      const name = str(p.name_plan).trim();
      if (str(p.type).toLowerCase() === 'balance') {
        issues.push({ entity: 'plans', key: name, reason: 'a balance package (top-up), not a service plan' });
        continue;
      }
      const unit = str(p.validity_unit).trim().toLowerCase();
      const per = UNIT_DAYS[unit];
      if (!per) {
        issues.push({ entity: 'plans', key: name, reason: `validity shorter than a day: ${str(p.validity)} ${unit}` });
        continue;
      }
      planById.set(str(p.id), name);
      planList.push({
        name,
        price: text(p.price) ?? '0',
        durationDays: Number(p.validity) * per,
        rateLimit: null,
        macBinding: false,
      });
    }

    // The active recharge of each customer (status on), else the latest one.
    const current = new Map<string, MysqlRow>();
    for (const r of recharges) {
      const key = str(r.customer_id) || `u:${str(r.username)}`;
      const seen = current.get(key);
      if (!seen || str(r.status) === 'on' || str(seen.status) !== 'on') current.set(key, r);
    }

    const subscribers: ImportData['subscribers'] = [];
    for (const c of customers) {
      const username = str(c.username);
      const r = current.get(str(c.id)) ?? current.get(`u:${username}`);
      const pppoe = text(c.pppoe_password);
      const password = str(c.service_type).toLowerCase() === 'pppoe' && pppoe ? pppoe : str(c.password);
      const status = str(c.status).toLowerCase();
      subscribers.push({
        username,
        password: password ? { attribute: 'Cleartext-Password', value: password } : null,
        plan: r ? (planById.get(str(r.plan_id)) ?? text(r.namebp)) : null,
        reseller: null,
        fullName: text(c.fullname),
        phone: text(c.phonenumber),
        address: text(c.address),
        notes: text(c.email) ? `email: ${str(c.email)}` : null,
        expiry: r ? lastDayOf(parseSourceDate(str(r.expiration)), text(r.time)) : null,
        staticIp: null,
        mac: null,
        balance: text(c.balance),
        active: !status || status === 'active',
      });
    }
    for (const r of routers) {
      issues.push({
        entity: 'routers',
        key: str(r.name),
        reason: 'routers are not imported: add them as access servers (RADIUS secret and API credentials)',
      });
    }
    return {
      source: 'phpnuxbill',
      plans: planList,
      resellers: [],
      subscribers,
      history: batchesById(url, access, 'select * from tbl_transactions', (t) => ({
        key: str(t.id),
        username: str(t.username),
        date: parseSourceDate(str(t.recharged_on)) ?? '',
        amount: text(t.price) ?? '0',
        paid: text(t.price) ?? '0',
        method: text(t.method),
        description: [text(t.type), text(t.plan_name)].filter(Boolean).join(' ') || 'phpnuxbill recharge',
        reference: text(t.invoice),
      })),
      read: {
        plans: plans.length,
        subscribers: customers.length,
        routers: routers.length,
      },
      issues,
      sessions: await radacctReader(url, access),
    };
  } finally {
    await conn.end();
  }
}
