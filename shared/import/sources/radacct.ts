/**
 * FreeRADIUS's `radacct` in a MySQL/MariaDB source (daloRADIUS, phpnuxbill in RADIUS mode), read in
 * chunks by its primary key on a connection of its own. Times go through UNIX_TIMESTAMP, so the
 * server's own time zone (the one FreeRADIUS wrote them in) turns them into instants; empty strings
 * (the stock schema's defaults for addresses) become nulls. Columns an older schema lacks (`class`,
 * the IPv6 ones) are read as null.
 */
import type { ImportSession, SessionReader } from '../sessions';
import { connectMysql, str, type SourceConnection } from './mysql';

const TEXT_COLUMNS = {
  realm: 'realm',
  nasPortId: 'nasportid',
  nasPortType: 'nasporttype',
  authentic: 'acctauthentic',
  connectInfoStart: 'connectinfo_start',
  connectInfoStop: 'connectinfo_stop',
  calledStationId: 'calledstationid',
  callingStationId: 'callingstationid',
  terminateCause: 'acctterminatecause',
  serviceType: 'servicetype',
  framedProtocol: 'framedprotocol',
  framedIp: 'framedipaddress',
  framedIpv6Address: 'framedipv6address',
  framedIpv6Prefix: 'framedipv6prefix',
  framedInterfaceId: 'framedinterfaceid',
  delegatedIpv6Prefix: 'delegatedipv6prefix',
  class: 'class',
} as const;
const TIME_COLUMNS = { start: 'acctstarttime', update: 'acctupdatetime', stop: 'acctstoptime' } as const;
const NUMBER_COLUMNS = { interval: 'acctinterval', sessionTime: 'acctsessiontime' } as const;

const orNull = (v: unknown) => {
  const s = str(v);
  return s === '' ? null : s;
};
const numberOrNull = (v: unknown) => (v === null || v === undefined || v === '' ? null : Number(v));
/** MySQL's zero date reads as 0: no time. */
const timeOrNull = (v: unknown) => numberOrNull(v) || null;

/** The radacct of the database at `url`, or null when it has none (a billing-only install). */
export async function radacctReader(url: string, access: SourceConnection): Promise<SessionReader | null> {
  const conn = await connectMysql(url, access);
  let columns: Set<string>;
  try {
    const [rows] = await conn.query({ sql: 'show columns from radacct', rowsAsArray: false });
    columns = new Set((rows as { Field: string }[]).map((r) => r.Field.toLowerCase()));
  } catch (err) {
    if ((err as { code?: string }).code === 'ER_NO_SUCH_TABLE') return null;
    throw err;
  } finally {
    await conn.end();
  }
  const pick = (name: string, as: string, expr = name) => `${columns.has(name) ? expr : 'null'} as \`${as}\``;
  const select = [
    'radacctid',
    'acctsessionid',
    'acctuniqueid',
    'username',
    'nasipaddress',
    'acctinputoctets',
    'acctoutputoctets',
    ...Object.entries(TEXT_COLUMNS).map(([as, c]) => pick(c, as)),
    ...Object.entries(TIME_COLUMNS).map(([as, c]) => pick(c, as, `unix_timestamp(${c})`)),
    ...Object.entries(NUMBER_COLUMNS).map(([as, c]) => pick(c, as)),
  ].join(', ');
  return {
    // InnoDB's estimate from its statistics: instant, where count(*) reads the whole table.
    async estimate() {
      const c = await connectMysql(url, access);
      try {
        const [rows] = await c.query(
          `select table_rows as n from information_schema.tables where table_schema = database() and table_name = 'radacct'`,
        );
        return Number((rows as { n: unknown }[])[0]?.n ?? 0);
      } finally {
        await c.end();
      }
    },
    async *chunks(size: number) {
      const c = await connectMysql(url, access);
      try {
        let after = '0';
        for (;;) {
          // Rows as arrays in `select`'s order: no object per row on the way in.
          const [result] = await c.query({
            sql: `select ${select} from radacct where radacctid > ? order by radacctid limit ?`,
            values: [after, size],
            rowsAsArray: true,
          });
          const rows = result as unknown[][];
          if (!rows.length) return;
          after = str(rows[rows.length - 1][0]);
          yield rows.map(toSession);
        }
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * A row in `select`'s order: the id, the six fixed columns, then TEXT_COLUMNS, TIME_COLUMNS and
 * NUMBER_COLUMNS in their order of declaration. One object literal of one shape (millions of sessions
 * go through here; keys set in a loop made each object a slow dictionary).
 */
function toSession(r: unknown[]): ImportSession {
  return {
    uniqueId: str(r[2]),
    sessionId: str(r[1]),
    username: str(r[3]),
    nasIp: str(r[4]),
    input: str(r[5]) || '0',
    output: str(r[6]) || '0',
    realm: orNull(r[7]),
    nasPortId: orNull(r[8]),
    nasPortType: orNull(r[9]),
    authentic: orNull(r[10]),
    connectInfoStart: orNull(r[11]),
    connectInfoStop: orNull(r[12]),
    calledStationId: orNull(r[13]),
    callingStationId: orNull(r[14]),
    terminateCause: orNull(r[15]),
    serviceType: orNull(r[16]),
    framedProtocol: orNull(r[17]),
    framedIp: orNull(r[18]),
    framedIpv6Address: orNull(r[19]),
    framedIpv6Prefix: orNull(r[20]),
    framedInterfaceId: orNull(r[21]),
    delegatedIpv6Prefix: orNull(r[22]),
    class: orNull(r[23]),
    start: timeOrNull(r[24]),
    update: timeOrNull(r[25]),
    stop: timeOrNull(r[26]),
    interval: numberOrNull(r[27]),
    sessionTime: numberOrNull(r[28]),
  };
}
