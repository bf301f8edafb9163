import net from 'node:net';
import {
  pppNameOfInterface,
  pppoeInterface,
  RouterOsClient,
  RouterOsError,
} from '../../services/network-access/routeros/client';
import { waitFor } from '../helpers/wait';
import { RouterOsSimulator, type RouterOsSimulatorOptions } from '../sim/routeros-simulator';

const CREDS = { username: 'billing', password: 'api-pass' };
let sim: RouterOsSimulator | undefined;
let client: RouterOsClient;

async function setup(
  options: Partial<RouterOsSimulatorOptions> = {},
  clientOptions: ConstructorParameters<typeof RouterOsClient>[0] = {},
) {
  sim = await new RouterOsSimulator({ ...CREDS, ...options }).start();
  // Generous: a loaded 2-core CI machine answered a simulator's command after more than 1 s (the
  // timeout tests set their own).
  client = new RouterOsClient({ connectTimeoutMs: 5000, commandTimeoutMs: 5000, ...clientOptions });
  return { sim, target: { host: '127.0.0.1', port: sim.port, ...CREDS } };
}

afterEach(async () => {
  await client?.close();
  await sim?.stop();
  sim = undefined;
});

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err as RouterOsError,
  );

it("logs in and removes the subscriber's active PPP session by name", async () => {
  const { sim, target } = await setup();
  sim.addSession({ name: 'ali@north', address: '10.0.0.9' });
  sim.addSession({ name: 'other', address: '10.0.0.10' });
  expect(await client.removePppSession(target, { names: ['ali@north'] })).toBe(1);
  expect([...sim.sessions.values()].map((s) => s.name)).toEqual(['other']);
  expect(sim.stats.commands).toEqual(['/login', '/ppp/active/print', '/ppp/active/remove']);
});

it.each([true, false])('no session on the router is 0 removed (RouterOS 7.18+ !empty: %s)', async (emptyReply) => {
  const { sim, target } = await setup({ emptyReply });
  expect(await client.removePppSession(target, { names: ['nobody'] })).toBe(0);
  expect(await client.run(target, '/ppp/active/print')).toEqual([]);
  // The connection is still usable after !empty.
  sim.addSession({ name: 'late', address: '10.0.0.11' });
  expect(await client.run(target, '/ppp/active/print', ['=.proplist=name'])).toEqual([{ name: 'late' }]);
});

it('concurrent commands share one connection, at most maxConcurrentCommands outstanding', async () => {
  const { sim, target } = await setup({ latencyMs: 5 }, { maxConcurrentCommands: 4 });
  for (let i = 0; i < 40; i++) sim.addSession({ name: `u${i}`, address: `10.0.1.${i}` });
  const removed = await Promise.all(
    Array.from({ length: 40 }, (_, i) => client.removePppSession(target, { names: [`u${i}`] })),
  );
  expect(removed.every((n) => n === 1)).toBe(true);
  expect(sim.sessions.size).toBe(0);
  expect(sim.stats.connections).toBe(1);
  expect(sim.stats.peakOutstanding).toBe(4);
});

it('a wrong password is a login error', async () => {
  const { target } = await setup();
  const err = await rejection(client.run({ ...target, password: 'nope' }, '/ppp/active/print'));
  expect(err).toBeInstanceOf(RouterOsError);
  expect(err.kind).toBe('login');
});

it('a closed port is a connect error', async () => {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  client = new RouterOsClient({ connectTimeoutMs: 1000 });
  const err = await rejection(client.run({ host: '127.0.0.1', port, ...CREDS }, '/ppp/active/print'));
  expect(err.kind).toBe('connect');
});

it('a command the router never answers times out, and the next one gets a fresh connection', async () => {
  const { sim, target } = await setup({ silentCommands: ['/ppp/active/print'] }, { commandTimeoutMs: 200 });
  const err = await rejection(client.run(target, '/ppp/active/print'));
  expect(err.kind).toBe('timeout');
  sim.options.silentCommands = [];
  expect(await client.run(target, '/ppp/active/print')).toEqual([]);
  expect(sim.stats.connections).toBe(2);
});

it("a trap rejects the command with the router's message", async () => {
  const { target } = await setup();
  const err = await rejection(client.run(target, '/ppp/active/remove', ['=.id=*99']));
  expect(err).toMatchObject({ kind: 'trap', message: 'no such item' });
});

it('a reply word the library does not know fails that command only', async () => {
  const { sim, target } = await setup({ oddReplies: { '/system/resource/print': '!weird' } });
  const err = await rejection(client.run(target, '/system/resource/print'));
  expect(err.kind).toBe('trap');
  sim.addSession({ name: 'a', address: '10.0.0.1' });
  expect(await client.removePppSession(target, { names: ['a'] })).toBe(1);
});

it('a router that drops the connection fails the waiting command; the next command reconnects', async () => {
  const { sim, target } = await setup({ silentCommands: ['/ppp/active/print'] }, { commandTimeoutMs: 5000 });
  const waiting = rejection(client.run(target, '/ppp/active/print'));
  await waitFor('the command at the router', () => sim.stats.commands.includes('/ppp/active/print'), 10_000);
  sim.dropConnections();
  expect((await waiting).kind).toBe('closed');
  sim.options.silentCommands = [];
  expect(await client.run(target, '/ppp/active/print')).toEqual([]);
});

it('an idle connection closed by the socket timeout raises no unhandled error and is replaced', async () => {
  const { sim, target } = await setup({}, { idleSeconds: 1 });
  expect(await client.run(target, '/ppp/active/print')).toEqual([]);
  await waitFor('the idle connection closed', () => sim.openConnections === 0, 10_000);
  expect(await client.run(target, '/ppp/active/print')).toEqual([]);
  expect(sim.stats.connections).toBe(2);
});

it("ping: round trips, loss and the router's output", async () => {
  const { target } = await setup({ pingRtts: { '10.0.0.9': [5, null, 7.5] } });
  const r = await client.ping(target, { address: '10.0.0.9', count: 3, size: 100, intervalMs: 10 });
  expect(r).toMatchObject({
    address: '10.0.0.9',
    sent: 3,
    received: 2,
    loss_percent: 33,
    min_ms: 5,
    avg_ms: 6.25,
    max_ms: 7.5,
  });
  expect(r.replies).toEqual([
    { seq: 0, time_ms: 5, size: 100, ttl: 64, status: null },
    { seq: 1, time_ms: null, size: null, ttl: null, status: 'timeout' },
    { seq: 2, time_ms: 7.5, size: 100, ttl: 64, status: null },
  ]);
  expect(r.raw).toContain('timeout');
  expect(r.raw).toContain('7ms500us');
  expect(r.raw).toMatch(/sent=3 received=2 packet-loss=33%/);
});

it('torch: per-connection download and upload in bits per second over the window', async () => {
  const iface = pppoeInterface('ali@north');
  const { target } = await setup({
    tickMs: 10,
    torch: {
      [iface]: [
        {
          protocol: 'tcp',
          src: '142.250.1.1',
          srcPort: 443,
          dst: '10.0.0.9',
          dstPort: 50000,
          tx: 8_000_000,
          rx: 200_000,
        },
        { protocol: 'udp', src: '1.1.1.1', srcPort: 53, dst: '10.0.0.9', dstPort: 40000, tx: 1000, rx: 500 },
      ],
    },
  });
  const r = await client.torch(target, iface, 2);
  expect(r).toMatchObject({
    interface: iface,
    duration_seconds: 2,
    samples: 2,
    download_bps: 8_001_000,
    upload_bps: 200_500,
  });
  expect(r.connections[0]).toEqual({
    protocol: 'tcp',
    src_address: '142.250.1.1',
    src_port: 443,
    dst_address: '10.0.0.9',
    dst_port: 50000,
    download_bps: 8_000_000,
    upload_bps: 200_000,
  });
  const err = await rejection(client.torch(target, pppoeInterface('nobody'), 1));
  expect(err.kind).toBe('trap');
});

describe('IPv6-only sessions (no IPv4 address on the router)', () => {
  // The router knows these sessions under names accounting no longer has (a rename since they
  // started), so a lookup by name finds nothing: before the address lookup, removed 0.
  const six = { name: 'old-six@north', ipv6Prefix: '2001:db8:6::/64', delegatedPrefix: '2001:db8:6600::/56' };

  it('found by its delegated prefix: DHCPv6 binding -> its server -> the interface -> the PPP session', async () => {
    const { sim, target } = await setup({ emptyReply: true });
    sim.addSession(six);
    sim.addSession({ name: 'other', ipv6Prefix: '2001:db8:7::/64', delegatedPrefix: '2001:db8:7700::/56' });
    const removed = await client.removePppSession(target, {
      names: ['new-six@north'],
      framedIpv6Prefix: six.ipv6Prefix,
      delegatedIpv6Prefix: six.delegatedPrefix,
    });
    expect(removed).toBe(1);
    expect([...sim.sessions.values()].map((s) => s.name)).toEqual(['other']);
    expect(sim.stats.commands.slice(1)).toEqual([
      '/ppp/active/print',
      '/ipv6/dhcp-server/binding/print',
      '/ipv6/dhcp-server/print',
      '/ppp/active/print',
      '/ppp/active/remove',
    ]);
  });

  it('found by its WAN prefix (the route RouterOS installs to its interface) when it has no delegated one', async () => {
    const { sim, target } = await setup({ emptyReply: true });
    sim.addSession({ name: six.name, ipv6Prefix: six.ipv6Prefix });
    expect(await client.removePppSession(target, { names: ['new-six@north'], framedIpv6Prefix: six.ipv6Prefix })).toBe(
      1,
    );
    expect(sim.sessions.size).toBe(0);
    expect(sim.stats.commands).toContain('/ipv6/route/print');
  });

  it('by name first; an address nobody holds finds nothing; IPv4 by /ppp/active address', async () => {
    const { sim, target } = await setup({ emptyReply: true });
    sim.addSession({ name: 'v4-old', address: '10.0.0.9' });
    sim.addSession({ name: 'six', delegatedPrefix: '2001:db8:6600::/56' });
    expect(await client.findPppSessions(target, { names: ['six'], delegatedIpv6Prefix: '2001:db8:9900::/56' })).toEqual(
      [{ '.id': expect.any(String), name: 'six' }],
    );
    expect(
      await client.findPppSessions(target, {
        names: ['nobody'],
        framedIpv6Prefix: '2001:db8:99::/64',
        delegatedIpv6Prefix: '2001:db8:9900::/56',
      }),
    ).toEqual([]);
    expect(await client.findPppSessions(target, { names: ['v4-new'], ipv4: '10.0.0.9' })).toEqual([
      { '.id': expect.any(String), name: 'v4-old' },
    ]);
  });

  it('an address now held by another CPE finds nothing: the pooled address passed on since accounting heard', async () => {
    const { sim, target } = await setup({ emptyReply: true });
    sim.addSession({ name: 'newcomer', address: '10.0.0.9', callerId: 'AA:BB:CC:00:00:02' });
    sim.addSession({
      name: 'newcomer6',
      delegatedPrefix: '2001:db8:6600::/56',
      ipv6Prefix: '2001:db8:6::/64',
      callerId: 'AA:BB:CC:00:00:03',
    });
    const stale = { names: ['gone'], callerId: 'aa-bb-cc-00-00-01' };
    expect(await client.removePppSession(target, { ...stale, ipv4: '10.0.0.9' })).toBe(0);
    expect(
      await client.removePppSession(target, {
        ...stale,
        delegatedIpv6Prefix: '2001:db8:6600::/56',
        framedIpv6Prefix: '2001:db8:6::/64',
      }),
    ).toBe(0);
    expect([...sim.sessions.values()].map((s) => s.name).sort()).toEqual(['newcomer', 'newcomer6']);
    // The same CPE under a new name (a rename) is found, whatever the MAC's spelling.
    expect(
      await client.removePppSession(target, { names: ['renamed'], ipv4: '10.0.0.9', callerId: 'aabb.cc00.0002' }),
    ).toBe(1);
    expect([...sim.sessions.values()].map((s) => s.name)).toEqual(['newcomer6']);
  });

  it('reads the PPP name in an interface or a route gateway', () => {
    expect(pppNameOfInterface('<pppoe-ali@north>')).toBe('ali@north');
    expect(pppNameOfInterface('fe80::1%<pppoe-ali@north>')).toBe('ali@north');
    expect(pppNameOfInterface('<l2tp-x>')).toBe('x');
    expect(pppNameOfInterface('ether1')).toBeNull();
    expect(pppNameOfInterface(undefined)).toBeNull();
  });

  it('torch breaks down IPv6 flows (src-address6/dst-address6), not only IPv4 ones', async () => {
    const iface = pppoeInterface('six');
    const { target } = await setup({
      torch: {
        [iface]: [
          {
            protocol: 'tcp',
            src: '2001:db8::443',
            srcPort: 443,
            dst: '2001:db8:6::2',
            dstPort: 50000,
            tx: 6000,
            rx: 600,
          },
        ],
      },
    });
    const r = await client.torch(target, iface, 1);
    expect(r.download_bps).toBe(6000);
    expect(r.connections).toEqual([
      {
        protocol: 'tcp',
        src_address: '2001:db8::443',
        src_port: 443,
        dst_address: '2001:db8:6::2',
        dst_port: 50000,
        download_bps: 6000,
        upload_bps: 600,
      },
    ]);
  });
});
