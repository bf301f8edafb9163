/**
 * A MikroTik RouterOS API server (TCP) for tests and `bench:coa`: the length-prefixed word
 * protocol, sentences, `.tag`, post-6.43 `/login`, `!re` / `!done` / `!trap` / `!fatal`, and
 * RouterOS 7.18+'s `!empty` for a command with no rows. It keeps a table of active PPP sessions
 * and answers `/ppp/active/print` (with `?name=`, `?address=` and `=.proplist=`), `/ppp/active/remove`,
 * `/ping` and `/tool/torch` (sections one tick apart). A session's IPv6 shows where RouterOS keeps it:
 * its delegated prefix as a binding of the dynamic DHCPv6 server RouterOS creates on the session's
 * interface (`/ipv6/dhcp-server/binding`, `/ipv6/dhcp-server`), its WAN prefix as the route it
 * installs towards that interface (`/ipv6/route`); `/ppp/active`'s `address` is IPv4 only, empty
 * for an IPv6-only session. Removing the session removes them.
 */
import net from 'node:net';

export interface PppSession {
  name: string;
  /** IPv4 address; absent for an IPv6-only session (RouterOS then prints an empty `address`). */
  address?: string;
  /** WAN prefix (Framed-IPv6-Prefix / remote-ipv6-prefix-pool): a route to the session's interface. */
  ipv6Prefix?: string;
  /** Delegated prefix: a binding of the session's dynamic DHCPv6 server. */
  delegatedPrefix?: string;
  /** Interface the router gives the session (default `<pppoe-NAME>`). */
  interface?: string;
  callerId?: string;
  /** What `/ppp/active/print` shows as `uptime` (default `1h`). */
  uptime?: string;
}

export interface TorchFlow {
  protocol: string;
  src: string;
  srcPort?: number;
  dst: string;
  dstPort?: number;
  /** Bits per second, as torch reports them on the PPPoE interface (tx: to the subscriber). */
  tx: number;
  rx: number;
}

export interface RouterOsSimulatorOptions {
  username: string;
  password: string;
  /** RouterOS 7.18+ answers a command with no rows with `!empty` before `!done`. */
  emptyReply?: boolean;
  /** Round trips of /ping per target address (ms); `null` is a lost packet. Default: 1 ms, none lost. */
  pingRtts?: Record<string, (number | null)[]>;
  /** Flows per interface name (`<pppoe-user>`) for /tool/torch. */
  torch?: Record<string, TorchFlow[]>;
  /** Milliseconds between ping replies and between torch sections (RouterOS: 1 s). */
  tickMs?: number;
  /** Command words that are never answered (to test timeouts). */
  silentCommands?: string[];
  /** Delay before each answer. */
  latencyMs?: number;
  /** Commands answered with this reply word instead (a word a client does not know). */
  oddReplies?: Record<string, string>;
}

type Sentence = string[];

export function encodeLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  if (n < 0x4000) return Buffer.from([(n >> 8) | 0x80, n & 0xff]);
  if (n < 0x200000) return Buffer.from([(n >> 16) | 0xc0, (n >> 8) & 0xff, n & 0xff]);
  if (n < 0x10000000) return Buffer.from([(n >>> 24) | 0xe0, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]);
  return Buffer.from([0xf0, (n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]);
}

export function encodeSentence(words: string[]): Buffer {
  const parts: Buffer[] = [];
  for (const w of words) {
    const bytes = Buffer.from(w, 'utf8');
    parts.push(encodeLength(bytes.length), bytes);
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

/** Splits a byte stream into sentences; keeps an incomplete tail for the next chunk. */
export class SentenceReader {
  private buffer = Buffer.alloc(0);
  private words: string[] = [];

  push(chunk: Buffer): Sentence[] {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    const out: Sentence[] = [];
    for (;;) {
      const decoded = decodeLength(this.buffer);
      if (!decoded) break;
      const [headerLength, length] = decoded;
      if (this.buffer.length < headerLength + length) break;
      const word = this.buffer.subarray(headerLength, headerLength + length).toString('utf8');
      this.buffer = this.buffer.subarray(headerLength + length);
      if (length === 0) {
        out.push(this.words);
        this.words = [];
      } else this.words.push(word);
    }
    return out;
  }
}

function decodeLength(b: Buffer): [number, number] | undefined {
  if (b.length === 0) return undefined;
  const c = b[0];
  const need = c < 0x80 ? 1 : c < 0xc0 ? 2 : c < 0xe0 ? 3 : c < 0xf0 ? 4 : 5;
  if (b.length < need) return undefined;
  if (need === 1) return [1, c];
  if (need === 2) return [2, ((c & 0x3f) << 8) | b[1]];
  if (need === 3) return [3, ((c & 0x1f) << 16) | (b[1] << 8) | b[2]];
  if (need === 4) return [4, (c & 0x0f) * 0x1000000 + (b[1] << 16) + (b[2] << 8) + b[3]];
  return [5, b.readUInt32BE(1)];
}

export interface RouterOsSimulatorStats {
  connections: number;
  logins: number;
  failedLogins: number;
  commands: string[];
  /** Most commands received and not yet answered at once (with `latencyMs`). */
  peakOutstanding: number;
}

export class RouterOsSimulator {
  readonly stats: RouterOsSimulatorStats = {
    connections: 0,
    logins: 0,
    failedLogins: 0,
    commands: [],
    peakOutstanding: 0,
  };
  private outstanding = 0;
  readonly sessions = new Map<string, PppSession & { id: string }>();
  private readonly server = net.createServer((socket) => this.onConnection(socket));
  private readonly sockets = new Set<net.Socket>();
  private nextId = 1;
  port = 0;

  constructor(readonly options: RouterOsSimulatorOptions) {}

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Connections open now (a client's idle close shows here). */
  get openConnections(): number {
    return this.sockets.size;
  }

  /** Cuts every open connection, as a rebooting router would. */
  dropConnections(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  addSession(s: PppSession): string {
    const id = `*${(this.nextId++).toString(16).toUpperCase()}`;
    this.sessions.set(id, { ...s, id });
    return id;
  }

  private onConnection(socket: net.Socket): void {
    this.stats.connections++;
    this.sockets.add(socket);
    const reader = new SentenceReader();
    const state = { loggedIn: false };
    socket.on('data', (chunk) => {
      for (const sentence of reader.push(chunk)) this.onSentence(socket, state, sentence);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
  }

  private onSentence(socket: net.Socket, state: { loggedIn: boolean }, sentence: Sentence): void {
    const [command, ...rest] = sentence;
    if (!command) return;
    const attrs = new Map<string, string>();
    const queries = new Map<string, string>();
    let tag: string | undefined;
    for (const w of rest) {
      if (w.startsWith('.tag=')) tag = w.slice(5);
      else if (w.startsWith('=')) {
        const eq = w.indexOf('=', 1);
        attrs.set(w.slice(1, eq), w.slice(eq + 1));
      } else if (w.startsWith('?')) {
        const eq = w.indexOf('=');
        queries.set(w.slice(1, eq), w.slice(eq + 1));
      }
    }
    this.stats.commands.push(command);
    if (this.options.silentCommands?.includes(command)) return;
    const odd = this.options.oddReplies?.[command];
    const send = (words: string[]) => {
      if (!socket.destroyed) socket.write(encodeSentence(tag === undefined ? words : [...words, `.tag=${tag}`]));
    };
    const reply = (fn: () => void): void => {
      if (!this.options.latencyMs) return fn();
      this.stats.peakOutstanding = Math.max(this.stats.peakOutstanding, ++this.outstanding);
      setTimeout(() => {
        this.outstanding--;
        fn();
      }, this.options.latencyMs);
    };
    const trap = (message: string) =>
      reply(() => {
        send(['!trap', `=message=${message}`]);
        send(['!done']);
      });
    const rows = (list: Record<string, string>[]) =>
      reply(() => {
        for (const r of list) send(['!re', ...Object.entries(r).map(([k, v]) => `=${k}=${v}`)]);
        if (list.length === 0 && this.options.emptyReply) send(['!empty']);
        send(['!done']);
      });

    if (command === '/login') {
      if (attrs.get('name') === this.options.username && attrs.get('password') === this.options.password) {
        state.loggedIn = true;
        this.stats.logins++;
        return rows([]);
      }
      this.stats.failedLogins++;
      return trap('invalid user name or password (6)');
    }
    if (!state.loggedIn) return trap('not logged in');
    if (odd)
      return reply(() => {
        send([odd]);
        send(['!done']);
      });

    switch (command) {
      case '/ppp/active/print': {
        const found = [...this.sessions.values()].filter((s) =>
          [...queries].every(([k, v]) =>
            k === 'name' ? s.name === v : k === 'address' ? (s.address ?? '') === v : true,
          ),
        );
        const props = attrs.get('.proplist')?.split(',');
        return rows(
          found.map((s) =>
            pick(
              {
                '.id': s.id,
                name: s.name,
                service: 'pppoe',
                'caller-id': s.callerId ?? '',
                address: s.address ?? '',
                uptime: s.uptime ?? '1h',
              },
              props,
            ),
          ),
        );
      }
      case '/ppp/active/remove': {
        const id = attrs.get('.id') ?? attrs.get('numbers') ?? '';
        if (!this.sessions.delete(id)) return trap('no such item');
        return rows([]);
      }
      case '/ipv6/dhcp-server/binding/print':
        return rows(
          this.ipv6Rows(
            queries,
            (s) => s.delegatedPrefix,
            (s, i) => ({ '.id': `*B${i}`, address: s.delegatedPrefix!, server: dhcpServerOf(s), status: 'bound' }),
            attrs,
          ),
        );
      case '/ipv6/dhcp-server/print':
        return rows(
          this.ipv6Rows(
            queries,
            (s) => s.delegatedPrefix,
            (s, i) => ({ '.id': `*D${i}`, name: dhcpServerOf(s), interface: interfaceOf(s), dynamic: 'true' }),
            attrs,
          ),
        );
      case '/ipv6/route/print':
        return rows(
          this.ipv6Rows(
            queries,
            (s) => s.ipv6Prefix,
            (s, i) => ({ '.id': `*R${i}`, 'dst-address': s.ipv6Prefix!, gateway: interfaceOf(s), dynamic: 'true' }),
            attrs,
          ),
        );
      case '/ping':
        return this.ping(attrs, send);
      case '/tool/torch':
        return this.torch(attrs, send, trap);
      case '#':
        return rows([]);
      default:
        return trap('no such command prefix');
    }
  }

  /** The rows of an IPv6 table derived from the sessions that have `has`, filtered by `?field=value`. */
  private ipv6Rows(
    queries: Map<string, string>,
    has: (s: PppSession) => string | undefined,
    row: (s: PppSession, i: number) => Record<string, string>,
    attrs: Map<string, string>,
  ): Record<string, string>[] {
    const props = attrs.get('.proplist')?.split(',');
    return [...this.sessions.values()]
      .filter((s) => has(s))
      .map((s, i) => row(s, i))
      .filter((r) => [...queries].every(([k, v]) => r[k] === v))
      .map((r) => pick(r, props));
  }

  private ping(attrs: Map<string, string>, send: (words: string[]) => void): void {
    const address = attrs.get('address') ?? '';
    const count = Number(attrs.get('count') ?? 4);
    const size = attrs.get('size') ?? '56';
    const rtts = this.options.pingRtts?.[address] ?? [];
    const tick = this.options.tickMs ?? 0;
    let received = 0;
    const times: number[] = [];
    for (let seq = 0; seq < count; seq++) {
      setTimeout(() => {
        const rtt = seq < rtts.length ? rtts[seq] : 1;
        const row: Record<string, string> = { seq: String(seq), host: address };
        if (rtt === null) row.status = 'timeout';
        else {
          received++;
          times.push(rtt);
          Object.assign(row, { size, ttl: '64', time: rosTime(rtt) });
        }
        Object.assign(row, {
          sent: String(seq + 1),
          received: String(received),
          'packet-loss': String(Math.round(((seq + 1 - received) / (seq + 1)) * 100)),
        });
        if (times.length) {
          Object.assign(row, {
            'min-rtt': rosTime(Math.min(...times)),
            'avg-rtt': rosTime(times.reduce((a, b) => a + b, 0) / times.length),
            'max-rtt': rosTime(Math.max(...times)),
          });
        }
        send(['!re', ...Object.entries(row).map(([k, v]) => `=${k}=${v}`)]);
        if (seq === count - 1) send(['!done']);
      }, tick * seq);
    }
  }

  private torch(attrs: Map<string, string>, send: (words: string[]) => void, trap: (m: string) => void): void {
    const iface = attrs.get('interface') ?? '';
    const flows = this.options.torch?.[iface];
    if (!flows) return trap('input does not match any value of interface');
    const sections = Math.max(1, parseSeconds(attrs.get('duration')));
    const tick = this.options.tickMs ?? 0;
    // Torch breaks down IPv6 flows only when asked for IPv6 (src-address6 / dst-address6); otherwise
    // their traffic shows as one row with no addresses, as on a router.
    const ipv6 = attrs.has('src-address6') || attrs.has('dst-address6');
    const shown = flows.filter((f) => ipv6 || !f.src.includes(':'));
    const hidden = flows.filter((f) => !shown.includes(f));
    for (let section = 0; section < sections; section++) {
      setTimeout(
        () => {
          for (const f of shown) {
            send([
              '!re',
              `=.section=${section}`,
              `=ip-protocol=${f.protocol}`,
              `=src-address=${f.src}`,
              `=src-port=${f.srcPort ?? ''}`,
              `=dst-address=${f.dst}`,
              `=dst-port=${f.dstPort ?? ''}`,
              `=tx=${f.tx}`,
              `=rx=${f.rx}`,
              `=tx-packets=${Math.round(f.tx / 12000)}`,
              `=rx-packets=${Math.round(f.rx / 12000)}`,
            ]);
          }
          if (hidden.length)
            send([
              '!re',
              `=.section=${section}`,
              `=tx=${hidden.reduce((n, f) => n + f.tx, 0)}`,
              `=rx=${hidden.reduce((n, f) => n + f.rx, 0)}`,
            ]);
          if (section === sections - 1) send(['!done']);
        },
        tick * (section + 1),
      );
    }
  }
}

const interfaceOf = (s: PppSession) => s.interface ?? `<pppoe-${s.name}>`;
/** Not RouterOS's naming: the client must not rely on the dynamic server's name, only on its `interface`. */
const dhcpServerOf = (s: PppSession) => `dhcpv6-${interfaceOf(s)}`;

function pick(row: Record<string, string>, props: string[] | undefined): Record<string, string> {
  if (!props) return row;
  return Object.fromEntries(props.filter((p) => p in row).map((p) => [p, row[p]]));
}

/** RouterOS 7 durations: `12ms345us`. */
function rosTime(ms: number): string {
  const whole = Math.floor(ms);
  const us = Math.round((ms - whole) * 1000);
  return us ? `${whole}ms${us}us` : `${whole}ms`;
}

function parseSeconds(text: string | undefined): number {
  const m = /^(\d+)s?$/.exec(text ?? '');
  return m ? Number(m[1]) : 1;
}
