/**
 * The MikroTik API through node-routeros, made safe to use from a long-running service:
 * - every connection has 'error' and 'close' handlers (the library emits a bare 'error' on a
 *   socket timeout, which would otherwise kill the process);
 * - every command has its own deadline, and a connection that fails rejects the commands still
 *   waiting on it (the library would leave them pending for ever);
 * - `!empty` (RouterOS 7.18+) is "no rows" (compat.ts);
 * - one connection per router and user, shared by concurrent commands (the API multiplexes them
 *   by tag), closed by the library's idle timeout when nothing uses it.
 */
import type { Socket } from 'node:net';
import { RouterOSAPI } from 'node-routeros';
import { applyRouterOsCompat } from './compat';
import { pingResult, torchResult, type PingResult, type Row, type TorchResult } from './parse';

applyRouterOsCompat();

export interface RouterOsTarget {
  host: string;
  port: number;
  username: string;
  password: string;
}

export type RouterOsErrorKind = 'connect' | 'login' | 'timeout' | 'trap' | 'closed';

export class RouterOsError extends Error {
  constructor(
    readonly kind: RouterOsErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'RouterOsError';
  }
}

export interface RouterOsClientOptions {
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  /** Seconds without traffic after which the library closes a connection (RouterOS API `timeout`). */
  idleSeconds: number;
  /** Commands outstanding at once on one connection; a bulk fallback of hundreds of kicks queues. */
  maxConcurrentCommands: number;
}

export const DEFAULT_ROUTEROS_OPTIONS: RouterOsClientOptions = {
  connectTimeoutMs: 5000,
  commandTimeoutMs: 10_000,
  idleSeconds: 10,
  maxConcurrentCommands: 16,
};

interface Connection {
  api: RouterOSAPI;
  /** Rejecters of the commands waiting on this connection. */
  waiting: Set<(err: RouterOsError) => void>;
  dead: boolean;
  /** Commands sent and not yet answered, and the ones queued behind `maxConcurrentCommands`. */
  active: number;
  queue: (() => void)[];
}

/** PPPoE server sessions show up on the router as a dynamic interface named like this. */
export const pppoeInterface = (username: string) => `<pppoe-${username}>`;

/**
 * The PPP session name in a dynamic PPP interface's name (`<pppoe-ali@north>`, `<l2tp-x>`), also as
 * a route's gateway (`<pppoe-x>`, or `fe80::1%<pppoe-x>` for a link-local next hop); null otherwise.
 */
export function pppNameOfInterface(text: string | undefined): string | null {
  const iface = text?.slice(text.lastIndexOf('%') + 1);
  const m = iface ? /^<(?:pppoe|l2tp|pptp|sstp|ovpn|ppp)-(.+)>$/.exec(iface) : null;
  return m ? m[1] : null;
}

/** What identifies one PPP session on a router: see `RouterOsClient.findPppSessions`. */
export interface PppSessionKey {
  /** Names the router may know the session by, tried in order. */
  names: string[];
  ipv4?: string | null;
  /** The session's WAN prefix (Framed-IPv6-Prefix) as accounting recorded it. */
  framedIpv6Prefix?: string | null;
  /** The session's delegated prefix (Delegated-IPv6-Prefix) as accounting recorded it. */
  delegatedIpv6Prefix?: string | null;
  /**
   * The Calling-Station-Id accounting recorded (the CPE's MAC on PPPoE): a session found by an
   * address must show it as its `caller-id`, since a pooled address may have passed to another
   * subscriber since accounting last heard of this one. Null: accounting had none, nothing to check.
   */
  callerId?: string | null;
}

/** A MAC or other caller id in one spelling: `aa-bb-cc...`, `AA:BB:CC...` and `aabb.cc...` are one. */
function sameCaller(a: string | undefined, b: string): boolean {
  const norm = (v: string) => v.toLowerCase().replace(/[^0-9a-z]/g, '');
  return a !== undefined && norm(a) === norm(b);
}

export class RouterOsClient {
  readonly options: RouterOsClientOptions;
  private readonly connections = new Map<string, Promise<Connection>>();

  constructor(options: Partial<RouterOsClientOptions> = {}) {
    this.options = { ...DEFAULT_ROUTEROS_OPTIONS, ...options };
  }

  /** One command; resolves with its `!re` rows ([] for `!empty`), rejects with a RouterOsError. */
  async run(
    target: RouterOsTarget,
    command: string,
    words: string[] = [],
    timeoutMs = this.options.commandTimeoutMs,
  ): Promise<Row[]> {
    const conn = await this.connection(target);
    await this.turn(conn);
    if (conn.dead) {
      this.done(conn);
      throw new RouterOsError('closed', `connection to ${target.host} closed`);
    }
    return new Promise<Row[]>((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        conn.waiting.delete(fail);
        this.done(conn);
        fn();
      };
      const fail = (err: RouterOsError) => settle(() => reject(err));
      const timer = setTimeout(() => {
        fail(new RouterOsError('timeout', `${command} got no answer within ${timeoutMs} ms`));
        // A router that stopped answering one command is not trusted with the next.
        void this.closeConnection(conn);
      }, timeoutMs);
      conn.waiting.add(fail);
      conn.api.write(command, words).then(
        (rows) => settle(() => resolve(rows as Row[])),
        (err: unknown) => fail(new RouterOsError('trap', messageOf(err))),
      );
    });
  }

  /**
   * The router's `/ppp/active` rows (`.id`, `name`) of one session, found by the first key that
   * finds any: a name the router may know it by (accounting's, then the subscriber's current one:
   * after a rename the router keeps the old), its IPv4 address (`/ppp/active`'s `address`, IPv4
   * only), its delegated prefix (a binding of the DHCPv6 server RouterOS creates on the session's
   * interface: binding -> server -> interface), its WAN prefix (the route RouterOS installs to the
   * session's interface). An interface names its PPP session: `<pppoe-NAME>`, `<l2tp-NAME>`...
   * A session found by an address counts only when its `caller-id` is the key's `callerId`.
   */
  async findPppSessions(target: RouterOsTarget, key: PppSessionKey): Promise<Row[]> {
    const print = async (query: string, byAddress: boolean) => {
      const rows = await this.run(target, '/ppp/active/print', [query, '=.proplist=.id,name,caller-id']);
      const callerId = key.callerId;
      const held = byAddress && callerId ? rows.filter((r) => sameCaller(r['caller-id'], callerId)) : rows;
      return held.map((r) => ({ '.id': r['.id'], name: r.name }));
    };
    for (const name of new Set(key.names)) {
      const rows = await print(`?name=${name}`, false);
      if (rows.length) return rows;
    }
    if (key.ipv4) {
      const rows = await print(`?address=${key.ipv4}`, true);
      if (rows.length) return rows;
    }
    const interfaces: string[] = [];
    if (key.delegatedIpv6Prefix) {
      const bindings = await this.run(target, '/ipv6/dhcp-server/binding/print', [
        `?address=${key.delegatedIpv6Prefix}`,
        '=.proplist=server',
      ]);
      for (const server of new Set(bindings.map((b) => b.server).filter(Boolean))) {
        const servers = await this.run(target, '/ipv6/dhcp-server/print', [`?name=${server}`, '=.proplist=interface']);
        interfaces.push(...servers.map((r) => r.interface));
      }
    }
    if (!interfaces.length && key.framedIpv6Prefix) {
      const routes = await this.run(target, '/ipv6/route/print', [
        `?dst-address=${key.framedIpv6Prefix}`,
        '=.proplist=gateway',
      ]);
      interfaces.push(...routes.map((r) => r.gateway));
    }
    for (const name of new Set(interfaces.map(pppNameOfInterface).filter((n): n is string => !!n))) {
      const rows = await print(`?name=${name}`, true);
      if (rows.length) return rows;
    }
    return [];
  }

  /**
   * Removes a subscriber's active PPP session(s) (`/ppp/active/remove`), found as `findPppSessions`
   * says. The number removed, 0 when the router has none.
   */
  async removePppSession(target: RouterOsTarget, key: PppSessionKey): Promise<number> {
    const rows = await this.findPppSessions(target, key);
    let removed = 0;
    for (const row of rows) {
      try {
        await this.run(target, '/ppp/active/remove', [`=.id=${row['.id']}`]);
        removed++;
      } catch (err) {
        // Gone between print and remove (the client hung up on its own): that is the goal anyway.
        if (!(err instanceof RouterOsError && err.kind === 'trap' && /no such item/.test(err.message))) throw err;
      }
    }
    return removed;
  }

  /** `/ping` from the router; `intervalMs` apart (RouterOS's own default is 1 s). */
  async ping(
    target: RouterOsTarget,
    p: { address: string; count: number; size: number; intervalMs: number },
  ): Promise<PingResult> {
    const rows = await this.run(
      target,
      '/ping',
      [`=address=${p.address}`, `=count=${p.count}`, `=size=${p.size}`, `=interval=${p.intervalMs}ms`],
      p.count * p.intervalMs + this.options.commandTimeoutMs,
    );
    return pingResult(p.address, rows);
  }

  /** `/tool/torch` on an interface for `durationSeconds`, broken down per connection. */
  async torch(target: RouterOsTarget, iface: string, durationSeconds: number): Promise<TorchResult> {
    const rows = await this.run(
      target,
      '/tool/torch',
      [
        `=interface=${iface}`,
        `=duration=${durationSeconds}s`,
        '=src-address=0.0.0.0/0',
        '=dst-address=0.0.0.0/0',
        // Without these torch breaks down IPv4 flows only: an IPv6-only session would show none.
        '=src-address6=::/0',
        '=dst-address6=::/0',
        '=ip-protocol=any',
        '=port=any',
      ],
      durationSeconds * 1000 + this.options.commandTimeoutMs,
    );
    return torchResult(iface, durationSeconds, rows);
  }

  async close(): Promise<void> {
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(
      all.map(async (pending) => {
        const conn = await pending.catch(() => undefined);
        if (conn) await this.closeConnection(conn);
      }),
    );
  }

  // ---------------------------------------------------------------- connections

  /** A place among the connection's outstanding commands; a freed place passes to the next in line. */
  private async turn(conn: Connection): Promise<void> {
    if (conn.active < this.options.maxConcurrentCommands) {
      conn.active++;
      return;
    }
    await new Promise<void>((wake) => conn.queue.push(wake));
  }

  private done(conn: Connection): void {
    const next = conn.queue.shift();
    if (next) next();
    else conn.active--;
  }

  /** The shared connection to a router, opened when there is none or the last one failed. */
  private async connection(target: RouterOsTarget): Promise<Connection> {
    const key = keyOf(target);
    for (;;) {
      let pending = this.connections.get(key);
      if (!pending) {
        pending = this.open(target);
        this.connections.set(key, pending);
      }
      const forget = () => {
        if (this.connections.get(key) === pending) this.connections.delete(key);
      };
      let conn: Connection;
      try {
        conn = await pending;
      } catch (err) {
        forget();
        throw err;
      }
      if (!conn.dead) return conn;
      forget();
    }
  }

  private async open(target: RouterOsTarget): Promise<Connection> {
    const api = new RouterOSAPI({
      host: target.host,
      port: target.port,
      user: target.username,
      password: target.password,
      timeout: this.options.idleSeconds,
    });
    const conn: Connection = { api, waiting: new Set(), dead: false, active: 0, queue: [] };
    api.on('error', (err: unknown) =>
      this.fail(conn, new RouterOsError('closed', `connection to ${target.host} failed: ${messageOf(err)}`)),
    );
    api.on('close', () => this.fail(conn, new RouterOsError('closed', `connection to ${target.host} closed`)));
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        api.connect(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new RouterOsError(
                  'connect',
                  `no API connection to ${target.host}:${target.port} within ${this.options.connectTimeoutMs} ms`,
                ),
              ),
            this.options.connectTimeoutMs,
          );
        }),
      ]);
    } catch (err) {
      conn.dead = true;
      destroy(api);
      if (err instanceof RouterOsError) throw err;
      const login =
        (err as { errno?: unknown } | null)?.errno === 'CANTLOGIN' ||
        /invalid user name|cannot log in/i.test(messageOf(err));
      throw new RouterOsError(login ? 'login' : 'connect', `API ${target.host}:${target.port}: ${messageOf(err)}`);
    } finally {
      clearTimeout(timer);
    }
    // The library writes each word of a sentence separately: without this, Nagle's algorithm and
    // the router's delayed ACK add tens of milliseconds to every command.
    internals(api).connector?.socket?.setNoDelay(true);
    return conn;
  }

  private fail(conn: Connection, err: RouterOsError): void {
    conn.dead = true;
    for (const reject of [...conn.waiting]) reject(err);
  }

  private async closeConnection(conn: Connection): Promise<void> {
    conn.dead = true;
    for (const reject of [...conn.waiting]) reject(new RouterOsError('closed', 'connection closed'));
    // close() waits for the router to end the TCP session; one that never does is cut.
    await Promise.race([conn.api.close().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
    destroy(conn.api);
  }
}

function keyOf(t: RouterOsTarget): string {
  return `${t.host}:${t.port}:${t.username}`;
}

/** The library keeps its socket private: reached for no-delay and to abandon a connect in progress. */
function internals(api: RouterOSAPI): { connector?: { destroy(): void; socket?: Socket } | null } {
  return api as unknown as { connector?: { destroy(): void; socket?: Socket } | null };
}

function destroy(api: RouterOSAPI): void {
  internals(api).connector?.destroy();
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message || (err as { errno?: string }).errno || err.name;
  return String(err);
}
