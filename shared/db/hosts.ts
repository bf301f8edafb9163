import { Client } from 'pg';

/**
 * libpq's multi-host connection strings for node-postgres, which has none: `DATABASE_URL=
 * postgres://u:p@pg-a:5432,pg-b:5432/billing?target_session_attrs=read-write` (docs/operations.md,
 * "A database that fails over"). A new connection tries the hosts, the last one that suited
 * first, then the rest in order, and takes the first whose role suits: `read-write` / `primary`
 * not in recovery, `standby` in recovery, `prefer-standby` a standby else any, `any` (libpq's
 * default) the first that answers. A failover then costs the requests that were running on the
 * old primary; the pool's next connections find the new one. A URL with one host is left to pg
 * untouched.
 */
export type SessionAttrs = 'any' | 'read-write' | 'primary' | 'standby' | 'prefer-standby';
const ATTRS: readonly string[] = ['any', 'read-write', 'primary', 'standby', 'prefer-standby'];

export interface HostList {
  hosts: { host: string; port: number }[];
  attrs: SessionAttrs;
  /** The URL with the first host only and without target_session_attrs (pg parses the rest). */
  base: string;
}

/** A URL with several hosts or a target_session_attrs, else undefined (a plain single-host URL). */
export function parseHostList(url: string): HostList | undefined {
  const m = /^(postgres(?:ql)?:\/\/)(?:([^@/]*)@)?([^/?#]*)(.*)$/.exec(url);
  if (!m) return undefined;
  const [, scheme, auth, hostPart, rest] = m;
  const query = new URLSearchParams(rest.includes('?') ? rest.slice(rest.indexOf('?') + 1) : '');
  const attrs = query.get('target_session_attrs');
  if (!hostPart.includes(',') && attrs === null) return undefined;
  if (attrs !== null && !ATTRS.includes(attrs))
    throw new Error(`target_session_attrs=${attrs} is not supported (one of ${ATTRS.join(', ')})`);
  const hosts = hostPart.split(',').map((h) => {
    const hm = /^(\[[^\]]+\]|[^:]*)(?::(\d+))?$/.exec(h);
    if (!hm || !hm[1]) throw new Error(`database URL: bad host "${h}"`);
    return { host: hm[1].replace(/^\[|\]$/g, ''), port: hm[2] ? Number(hm[2]) : 5432 };
  });
  query.delete('target_session_attrs');
  const path = rest.includes('?') ? rest.slice(0, rest.indexOf('?')) : rest;
  const q = query.toString();
  const first = hosts[0].host.includes(':') ? `[${hosts[0].host}]` : hosts[0].host;
  return {
    hosts,
    attrs: (attrs ?? 'any') as SessionAttrs,
    base: `${scheme}${auth !== undefined ? `${auth}@` : ''}${first}:${hosts[0].port}${path}${q ? `?${q}` : ''}`,
  };
}

const PROBE_TIMEOUT_MS = 3000;

/** `base` with its host and port replaced (a connection string's host wins over pg's `host` option). */
function urlAt(base: string, target: { host: string; port: number }): string {
  const u = new URL(base);
  u.hostname = target.host.includes(':') ? `[${target.host}]` : target.host;
  u.port = String(target.port);
  return u.toString();
}

/** Whether the server at `target` is in recovery (a standby); rejects when it does not answer. */
async function inRecovery(base: string, target: { host: string; port: number }): Promise<boolean> {
  const probe = new Client({ connectionString: urlAt(base, target), connectionTimeoutMillis: PROBE_TIMEOUT_MS });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    const r = await probe.query<{ r: boolean }>('select pg_is_in_recovery() as r');
    return r.rows[0].r;
  } finally {
    await probe.end().catch(() => undefined);
  }
}

/** After a round that found no suitable server, picks fail at once for this long (no probe storm). */
const NONE_HOLD_MS = 250;

/**
 * Picks the host a new connection goes to, remembering the last one that suited. Concurrent picks
 * share one round of probes: a pool refilling after a failover probes each host once, not once per
 * waiting request.
 */
export class HostPicker {
  private last = 0;
  private round: Promise<{ host: string; port: number }> | undefined;
  private failed: { at: number; err: Error } | undefined;
  constructor(readonly list: HostList) {}

  pick(): Promise<{ host: string; port: number }> {
    if (this.failed && Date.now() - this.failed.at < NONE_HOLD_MS) return Promise.reject(this.failed.err);
    this.round ??= this.probeAll().then(
      (t) => {
        this.round = undefined;
        this.failed = undefined;
        return t;
      },
      (err: Error) => {
        this.round = undefined;
        this.failed = { at: Date.now(), err };
        throw err;
      },
    );
    return this.round;
  }

  private async probeAll(): Promise<{ host: string; port: number }> {
    const { hosts, attrs } = this.list;
    const order = [...hosts.keys()].map((i) => (i + this.last) % hosts.length);
    let fallback: number | undefined;
    const errors: string[] = [];
    for (const i of order) {
      let standby: boolean;
      try {
        standby = await inRecovery(this.list.base, hosts[i]);
      } catch (err) {
        errors.push(`${hosts[i].host}:${hosts[i].port} ${(err as Error).message}`);
        continue;
      }
      const wanted = attrs === 'any' || (attrs === 'standby' || attrs === 'prefer-standby' ? standby : !standby);
      if (wanted) {
        this.last = i;
        return hosts[i];
      }
      fallback ??= i;
    }
    if (attrs === 'prefer-standby' && fallback !== undefined) return hosts[fallback];
    const seen = errors.length ? ` (${errors.join('; ')})` : '';
    throw new Error(`no ${attrs} server among ${hosts.map((h) => `${h.host}:${h.port}`).join(', ')}${seen}`);
  }

  /** A single-host URL of the server pick() chooses now (migrations, LISTEN). */
  async url(): Promise<string> {
    return urlAt(this.list.base, await this.pick());
  }
}

type Callback = (err: Error | null) => void;

/** A pg Client class (for pg.Pool's `Client` option) whose connections go where `picker` says. */
export function pickingClient(picker: HostPicker): typeof Client {
  class PickingClient extends Client {
    override connect(): Promise<Client>;
    override connect(callback: Callback): void;
    override connect(callback?: Callback): Promise<Client> | void {
      const done = picker.pick().then((t) => {
        // Read by pg's own connect: the host was fixed at construction from the base URL.
        this.host = t.host;
        this.port = t.port;
        return super.connect();
      });
      if (!callback) return done;
      done.then(
        () => callback(null),
        (err: Error) => callback(err),
      );
    }
  }
  return PickingClient;
}

/** A single-host URL for one connection now: `url` itself unless it names several hosts or attrs. */
export async function resolveUrl(url: string): Promise<string> {
  const list = parseHostList(url);
  return list ? new HostPicker(list).url() : url;
}
