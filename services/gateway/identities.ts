/**
 * Managers as the database has them now, for the gateway's check of every authenticated request:
 * a token names its manager, the row says whether that manager still exists, is active, and what
 * it may do. Rows are kept at most `maxAgeMs` (1 s), and a `manager.changed` broadcast drops one
 * at once on every gateway, so a deletion, a disabling or a cut permission takes effect within a
 * second even if the event is lost. The gateway reads the row itself (one prepared statement on a
 * miss): authentication must not stop when the unit that edits managers is down or restarting.
 */
import type { Role } from '../../shared/auth/claims';
import { pgPool } from '../../shared/db/client';

export interface Identity {
  id: number;
  active: boolean;
  role: Role;
  resellerId: number | null;
  permissions: string[];
  tokenVersion: number;
}

interface Entry {
  at: number;
  value: Promise<Identity | null>;
}

export class IdentityCache {
  private readonly entries = new Map<number, Entry>();

  constructor(
    private readonly load: (id: number) => Promise<Identity | null>,
    private readonly maxAgeMs = 1000,
    private readonly maxEntries = 10_000,
  ) {}

  /** Concurrent requests of one manager share one load; a failed load is not kept. */
  get(id: number, now = Date.now()): Promise<Identity | null> {
    const hit = this.entries.get(id);
    if (hit && now - hit.at < this.maxAgeMs) return hit.value;
    this.entries.delete(id);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as number);
    const entry: Entry = { at: now, value: this.load(id) };
    this.entries.set(id, entry);
    entry.value.catch(() => {
      if (this.entries.get(id) === entry) this.entries.delete(id);
    });
    return entry.value;
  }

  invalidate(id: number): void {
    this.entries.delete(id);
  }
}

const IDENTITY = {
  name: 'gateway_manager_identity',
  text: `select id, active, role, reseller_id as "resellerId", permissions, token_version as "tokenVersion"
           from managers where id = $1`,
};

export async function loadIdentity(id: number): Promise<Identity | null> {
  const { rows } = await pgPool().query<Identity>({ ...IDENTITY, values: [id] });
  return rows[0] ?? null;
}
