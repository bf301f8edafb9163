/**
 * CoA and Disconnect per vendor profile, on the wire: RouterActions with the real CoA client against
 * the NAS simulator, for a session on a NAS of each vendor. Each request's exact attributes are read
 * back from the packet the simulator received (codec's decodeAttributes, dictionary names). Then the
 * encoding itself against FreeRADIUS's: radclient sends each vendor's CoA attributes from Debian's
 * dictionaries, and the attribute octets it put on the wire are the ones our encoder writes.
 */
import { execFile } from 'node:child_process';
import { CoaClient } from '../../services/network-access/coa/client';
import { encodeAttributes, encodeRequest } from '../../services/network-access/coa/codec';
import type { PppSessionKey, RouterOsClient } from '../../services/network-access/routeros/client';
import { RouterActions } from '../../services/network-access/router-actions';
import type { LiveSession } from '../../services/network-access/sessions';
import { encrypt } from '../../shared/auth/secrets';
import { loadConfig, setConfig } from '../../shared/config';
import { PROFILES, VENDORS, type Vendor } from '../../shared/vendors/profiles';
import { requireTool } from '../helpers/freeradius';
import { NasSimulator } from '../sim/nas-simulator';

const SECRET = 'vendor-coa-secret';
const USER = 'ali@north';
const SESSION_ID = '81a00004';
const FRAMED_IP = '100.64.1.2';

let sim: NasSimulator;
let coa: CoaClient;
let actions: RouterActions;
let kicks: string[];

let passwordEnc: string;

beforeAll(async () => {
  // The RouterOS API password is stored encrypted; the fallback decrypts it with the configured key.
  setConfig(loadConfig({ JWT_SECRET: 'vendor-coa-test', ENCRYPTION_KEY: 'a'.repeat(64) }));
  passwordEnc = encrypt('api-password');
  sim = await new NasSimulator({ secret: SECRET }).start();
  coa = new CoaClient({ rto: { initialMs: 500, minMs: 20, maxMs: 2000 } });
  kicks = [];
  // A RouterOS API that records what it is asked to remove (it must be asked for a MikroTik only).
  const routeros = {
    removePppSession: async (_t: unknown, key: PppSessionKey) => {
      kicks.push(key.names[0]);
      return 1;
    },
  } as unknown as RouterOsClient;
  actions = new RouterActions(coa, routeros);
});
afterAll(async () => {
  await coa.close();
  await sim.stop();
});
beforeEach(() => {
  sim.resetStats();
  kicks.length = 0;
});

const session = (vendor: Vendor): LiveSession => ({
  username: USER,
  acctSessionId: SESSION_ID,
  framedIp: FRAMED_IP,
  nasIp: '127.0.0.1',
  nas: {
    id: 1,
    name: `${vendor}-edge`,
    ip: '127.0.0.1',
    secret: SECRET,
    coaPort: sim.port,
    vendor,
    api: { port: 8728, username: 'api', passwordEnc },
  },
});

const ALL_IDS: [string, string][] = [
  ['User-Name', USER],
  ['Acct-Session-Id', SESSION_ID],
  ['Framed-IP-Address', FRAMED_IP],
];
const BY_SESSION_ID: [string, string][] = [['Acct-Session-Id', SESSION_ID]];

/** What each vendor's NAS receives: the session's identification, and the CoA for a new rate of 2M/4M (up 2, down 4 Mbit/s). */
const EXPECTED: Record<
  Vendor,
  { identity: [string, string][]; rate: { code: string; attributes: [string, string][] } }
> = {
  mikrotik: {
    identity: ALL_IDS,
    rate: { code: 'CoA-Request', attributes: [...ALL_IDS, ['Mikrotik-Rate-Limit', '2M/4M']] },
  },
  'accel-ppp': {
    identity: ALL_IDS,
    rate: { code: 'CoA-Request', attributes: [...ALL_IDS, ['Filter-Id', '4000/2000']] },
  },
  cisco: {
    identity: BY_SESSION_ID,
    rate: {
      code: 'CoA-Request',
      attributes: [
        ...BY_SESSION_ID,
        ['Cisco-AVPair', 'ip:sub-qos-policy-in=billing-up-2000k'],
        ['Cisco-AVPair', 'ip:sub-qos-policy-out=billing-down-4000k'],
      ],
    },
  },
  juniper: {
    identity: BY_SESSION_ID,
    rate: {
      code: 'CoA-Request',
      attributes: [
        ...BY_SESSION_ID,
        ['ERX-Service-Deactivate', 'billing-rate'],
        ['ERX-Service-Activate:1', 'billing-rate(4000000,2000000)'],
      ],
    },
  },
  huawei: {
    identity: [
      ['User-Name', USER],
      ['Acct-Session-Id', SESSION_ID],
    ],
    rate: {
      code: 'CoA-Request',
      attributes: [
        ['User-Name', USER],
        ['Acct-Session-Id', SESSION_ID],
        ['Huawei-Input-Average-Rate', '2000000'],
        ['Huawei-Input-Peak-Rate', '2000000'],
        ['Huawei-Output-Average-Rate', '4000000'],
        ['Huawei-Output-Peak-Rate', '4000000'],
      ],
    },
  },
  nokia: {
    identity: BY_SESSION_ID,
    rate: {
      code: 'CoA-Request',
      attributes: [
        ...BY_SESSION_ID,
        ['Alc-Subscriber-QoS-Override', 'e:r:rate=4000'],
        ['Alc-Subscriber-QoS-Override', 'i:q:1:pir=2000'],
      ],
    },
  },
  // Nothing a CoA could change: the rate change is a Disconnect-Request.
  generic: { identity: ALL_IDS, rate: { code: 'Disconnect-Request', attributes: ALL_IDS } },
};

describe.each(VENDORS)('a session on a %s NAS', (vendor) => {
  it('is disconnected by a Disconnect-Request carrying the attributes its vendor identifies a session by', async () => {
    const result = await actions.disconnect(USER, [session(vendor)]);
    expect(result.outcome).toBe('disconnected');
    expect(sim.requests.map((r) => [r.code, r.attributes])).toEqual([
      ['Disconnect-Request', EXPECTED[vendor].identity],
    ]);
  });

  it("gets a new rate the way its profile says, with the profile's attributes", async () => {
    const result = await actions.changeRate(USER, [session(vendor)], '2M/4M');
    const { code, attributes } = EXPECTED[vendor].rate;
    expect(result.outcome).toBe(code === 'CoA-Request' ? 'applied' : 'disconnected');
    expect(sim.requests.map((r) => [r.code, r.attributes])).toEqual([[code, attributes]]);
    expect(PROFILES[vendor].rateChange).toBe(
      vendor === 'generic' ? 'disconnect' : vendor === 'juniper' ? 'reactivate' : 'coa',
    );
  });

  it('falls back to the RouterOS API only on a MikroTik when the Disconnect-Request goes unanswered', async () => {
    const quiet = await new NasSimulator({ secret: SECRET, answer: () => 'silent' }).start();
    const client = new CoaClient({ retransmits: 0, rto: { initialMs: 40, minMs: 20, maxMs: 40 } });
    try {
      const s = session(vendor);
      const result = await new RouterActions(client, {
        removePppSession: async (_t: unknown, key: PppSessionKey) => {
          kicks.push(key.names[0]);
          return 1;
        },
      } as unknown as RouterOsClient).disconnect(USER, [{ ...s, nas: { ...s.nas!, coaPort: quiet.port } }]);
      expect(quiet.requests).toHaveLength(1);
      if (vendor === 'mikrotik') {
        expect(result.outcome).toBe('kicked');
        expect(kicks).toEqual([USER]);
      } else {
        expect(result.outcome).toBe('failed');
        expect(result.sessions[0].detail).toMatch(/no API credentials/);
        expect(kicks).toEqual([]);
      }
    } finally {
      await client.close();
      await quiet.stop();
    }
  });
});

/** An IPv6-only session (no Framed-IP-Address in radacct): its address, WAN prefix and delegated prefix. */
const V6 = { address: '2001:db8:5::1', prefix: '2001:db8:5::/64', delegated: '2001:db8:a500::/56' };
const v6Session = (vendor: Vendor): LiveSession => ({
  ...session(vendor),
  framedIp: null,
  framedIpv6Address: V6.address,
  framedIpv6Prefix: V6.prefix,
  delegatedIpv6Prefix: V6.delegated,
});
const V6_IDS: [string, string][] = [
  ['User-Name', USER],
  ['Acct-Session-Id', SESSION_ID],
  ['Framed-IPv6-Address', V6.address],
  ['Framed-IPv6-Prefix', V6.prefix],
  ['Delegated-IPv6-Prefix', V6.delegated],
];

describe.each(VENDORS)('an IPv6-only session on a %s NAS', (vendor) => {
  // The vendors that find a session by its address (MikroTik, Accel-PPP, generic) get its IPv6 ones.
  const byAddress = PROFILES[vendor].identity.framedIp;
  const identity = byAddress ? V6_IDS : EXPECTED[vendor].identity;

  it('is disconnected by a Disconnect-Request carrying its IPv6 address and prefixes where the vendor identifies by address', async () => {
    const result = await actions.disconnect(USER, [v6Session(vendor)]);
    expect(result.outcome).toBe('disconnected');
    expect(result.sessions[0].ip_address).toBe(V6.address);
    expect(sim.requests.map((r) => [r.code, r.attributes])).toEqual([['Disconnect-Request', identity]]);
  });

  it('gets a new rate with the same identification', async () => {
    await actions.changeRate(USER, [v6Session(vendor)], '2M/4M');
    const { code, attributes } = EXPECTED[vendor].rate;
    const rate = attributes.slice(EXPECTED[vendor].identity.length);
    expect(sim.requests.map((r) => [r.code, r.attributes])).toEqual([[code, [...identity, ...rate]]]);
  });

  it('sends only the prefixes accounting recorded (a session with a delegated prefix alone)', async () => {
    await actions.disconnect(USER, [{ ...v6Session(vendor), framedIpv6Address: null, framedIpv6Prefix: null }]);
    expect(sim.requests[0].attributes).toEqual(
      byAddress ? [...V6_IDS.slice(0, 2), ['Delegated-IPv6-Prefix', V6.delegated]] : EXPECTED[vendor].identity,
    );
  });
});

test('a dual-stack session is identified by its IPv4 address alone', async () => {
  await actions.disconnect(USER, [{ ...v6Session('mikrotik'), framedIp: FRAMED_IP }]);
  expect(sim.requests[0].attributes).toEqual(ALL_IDS);
});

function radclient(port: number, attributes: string): Promise<string> {
  return new Promise((resolve) => {
    const child = execFile(
      'radclient',
      // The simulator answers on this jest worker, which a loaded CI run kept from it for over 2 s.
      ['-x', '-r', '1', '-t', '10', `127.0.0.1:${port}`, 'coa', SECRET],
      // How radclient ended is part of the output, so a failed match says whether it timed out,
      // failed or was killed.
      (err, stdout, stderr) =>
        resolve(
          `${stdout}${stderr}${err ? `\n[radclient ended: code ${err.code ?? '-'}, signal ${err.signal ?? '-'}]` : ''}`,
        ),
    );
    child.stdin!.end(attributes);
  });
}

describe("the encoder writes each vendor's attributes as FreeRADIUS does", () => {
  beforeAll(() => requireTool('radclient'));

  it.each(VENDORS.filter((v) => v !== 'generic'))('%s', async (vendor) => {
    const pairs = PROFILES[vendor].coaRate('2M/4M');
    const input = [`Acct-Session-Id = "${SESSION_ID}"`, ...pairs.map((p) => `${p.attribute} = "${p.value}"`)].join(
      '\n',
    );
    expect(await radclient(sim.port, `${input}\n`)).toMatch(/Received CoA-ACK/);
    const packet = sim.requests.at(-1)!.packet;
    const ours = Buffer.concat(
      [[44, Buffer.from(SESSION_ID)] as const, ...encodeAttributes(pairs)].map(([type, value]) =>
        Buffer.concat([Buffer.from([type, 2 + value.length]), value]),
      ),
    );
    // radclient adds a Message-Authenticator (80) after the attributes it was given: compare what precedes it.
    expect(packet.subarray(20, 20 + ours.length).toString('hex')).toBe(ours.toString('hex'));
    expect(sim.requests.at(-1)!.attributes.slice(0, 1 + pairs.length)).toEqual([
      ['Acct-Session-Id', SESSION_ID],
      ...pairs.map((p) => [p.attribute, p.value]),
    ]);
  });
});

test("the IPv6 identification is written as radclient writes it from Debian's dictionaries", async () => {
  requireTool('radclient');
  const input = [
    `Framed-IPv6-Address = ${V6.address}`,
    `Framed-IPv6-Prefix = ${V6.prefix}`,
    `Delegated-IPv6-Prefix = ${V6.delegated}`,
  ].join('\n');
  expect(await radclient(sim.port, `${input}\n`)).toMatch(/Received CoA-ACK/);
  const theirs = sim.requests.at(-1)!.packet;
  const ours = encodeRequest('CoA-Request', 1, SECRET, {
    framedIpv6Address: V6.address,
    framedIpv6Prefix: V6.prefix,
    delegatedIpv6Prefix: V6.delegated,
  });
  expect(theirs.subarray(20, ours.length).toString('hex')).toBe(ours.subarray(20).toString('hex'));
  expect(sim.requests.at(-1)!.attributes.slice(0, 3)).toEqual(V6_IDS.slice(2));
});

test('a MikroTik CoA-Request through the profile is byte for byte the one the client wrote before profiles', () => {
  const ids = { userName: USER, acctSessionId: SESSION_ID, framedIp: FRAMED_IP };
  const before = encodeRequest('CoA-Request', 42, SECRET, { ...ids, rateLimit: '2M/4M' });
  const now = encodeRequest('CoA-Request', 42, SECRET, {
    ...ids,
    extra: encodeAttributes(PROFILES.mikrotik.coaRate('2M/4M')),
  });
  expect(now.toString('hex')).toBe(before.toString('hex'));
});
