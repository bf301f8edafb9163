/**
 * The gateway's check of an API key (docs/security.md): the row by its lookup, kept at most
 * IDENTITY_CACHE_MS and dropped at once on `apikey.changed` or `manager.changed` from any process,
 * so a revocation, a manager's deletion, disablement or lost permission applies on every gateway
 * within the same second. The gateway reads the row itself: authentication does not depend on the
 * unit that edits keys.
 */
import { addressAllowed, apiKeyMatches } from '../../shared/auth/api-keys';
import type { Auth } from '../../shared/auth/claims';
import { pgPool } from '../../shared/db/client';
import { fail } from '../../shared/failures';
import type { Identity } from './identities';

export interface KeyRecord {
  id: number;
  managerId: number;
  secretHash: string;
  full: boolean;
  permissions: string[];
  resellerId: number | null;
  allowedIps: string[];
  expiresAt: Date | null;
  revokedAt: Date | null;
  /** The key's reseller is (still) in its manager's tree. */
  inTree: boolean;
}

const KEY = {
  name: 'gateway_api_key',
  text: `select k.id, k.manager_id as "managerId", k.secret_hash as "secretHash", k.full, k.permissions,
                k.reseller_id as "resellerId", k.allowed_ips as "allowedIps", k.expires_at as "expiresAt",
                k.revoked_at as "revokedAt",
                (k.reseller_id is null or m.reseller_id is null or kr.path like mr.path || '%') as "inTree"
           from api_keys k
           join managers m on m.id = k.manager_id
           left join resellers kr on kr.id = k.reseller_id
           left join resellers mr on mr.id = m.reseller_id
          where k.lookup = $1`,
};

async function loadKey(lookup: string): Promise<KeyRecord | null> {
  const { rows } = await pgPool().query<KeyRecord>({ ...KEY, values: [lookup] });
  return rows[0] ?? null;
}

interface Entry {
  at: number;
  value: Promise<KeyRecord | null>;
}

export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly touched = new Map<number, number>();

  constructor(private readonly maxAgeMs: number) {}

  get(lookup: string, now = Date.now()): Promise<KeyRecord | null> {
    const hit = this.entries.get(lookup);
    if (hit && now - hit.at < this.maxAgeMs) return hit.value;
    if (this.entries.size >= 10_000) this.entries.clear();
    const entry: Entry = { at: now, value: loadKey(lookup) };
    this.entries.set(lookup, entry);
    entry.value.catch(() => {
      if (this.entries.get(lookup) === entry) this.entries.delete(lookup);
    });
    return entry.value;
  }

  /** A key or a manager changed somewhere: every key is read again (they are few, reads are cheap). */
  clear(): void {
    this.entries.clear();
  }

  /** Records the key's last use, at most once a minute per key and gateway; never fails the request. */
  touch(id: number, ip: string, onError: (err: unknown) => void, now = Date.now()): void {
    if (now - (this.touched.get(id) ?? 0) < 60_000) return;
    this.touched.set(id, now);
    pgPool()
      .query('update api_keys set last_used_at = now(), last_used_ip = $2 where id = $1', [id, ip])
      .catch(onError);
  }
}

/**
 * The caller a key stands for: a full key its manager as the row is now; a restricted key a `user`
 * with the key's permissions that its manager still holds (all of them for an admin's key, but no
 * admin role), over the key's reseller tree or the manager's.
 */
export function keyAuth(
  bearer: string,
  key: KeyRecord | null,
  manager: Identity | null,
  ip: string,
  now = Date.now(),
): Auth {
  if (!key || !apiKeyMatches(bearer, key.secretHash)) throw fail('tokenInvalid');
  if (key.revokedAt) throw fail('apiKeyRevoked');
  if (key.expiresAt && key.expiresAt.getTime() <= now) throw fail('apiKeyExpired');
  if (!addressAllowed(key.allowedIps, ip)) throw fail('apiKeyAddress');
  if (!manager) throw fail('managerGone');
  if (!manager.active) throw fail('managerDisabled');
  if (!key.inTree) throw fail('notAuthorized');
  const exp = key.expiresAt ? Math.floor(key.expiresAt.getTime() / 1000) : Math.floor(now / 1000) + 86_400;
  const base = { managerId: manager.id, jti: `key:${key.id}`, exp, keyId: key.id };
  if (key.full) {
    return { ...base, role: manager.role, resellerId: manager.resellerId, permissions: manager.permissions };
  }
  return {
    ...base,
    role: 'user',
    resellerId: key.resellerId ?? manager.resellerId,
    permissions:
      manager.role === 'admin' ? key.permissions : key.permissions.filter((p) => manager.permissions.includes(p)),
  };
}
