/**
 * `/api/api-keys`: a manager's keys for scripts and integrations (docs/security.md). A key belongs
 * to a manager and carries a subset of its permissions and scope: either the listed permissions
 * (acting as a `user` over the manager's tree, or a subtree of it; an admin's key gets no admin
 * bypass) or, created as `full`, the manager's whole authority. The secret is shown once and
 * stored hashed; revocation is broadcast (`apikey.changed`) so every gateway drops the key at once.
 */
import { and, count, desc, eq, type SQL } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { API_KEY_PREFIX, isAddressOrCidr, newApiKey } from '../../shared/auth/api-keys';
import type { Auth } from '../../shared/auth/claims';
import { PERMISSIONS } from '../../shared/auth/permissions';
import { targetReseller } from '../../shared/auth/policy';
import { db } from '../../shared/db/client';
import { recordAudit } from '../../shared/audit';
import { apiKeys, managers } from '../../shared/db/schema';
import { FAILURES, fail } from '../../shared/failures';
import { authOf, pageOf, type Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import {
  freshCodeProperty,
  idParams,
  idSchema,
  isoTimestamp,
  object,
  type IdPath,
  type Infer,
} from '../../shared/http/schemas';

const createBody = object(
  {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    /** Another manager's key: admins only. */
    manager_id: idSchema,
    full: { type: 'boolean', default: false },
    permissions: { type: 'array', items: { type: 'string', enum: [...PERMISSIONS] }, uniqueItems: true, maxItems: 50 },
    reseller_id: idSchema,
    allowed_ips: { type: 'array', items: { type: 'string', maxLength: 50 }, maxItems: 50 },
    expires_at: { type: 'string', format: 'date-time' },
    two_factor_code: freshCodeProperty('to create a key (it works until revoked, whatever becomes of the token)'),
  },
  ['name'],
);
type CreateInput = Infer<typeof createBody>;

const listQuery = object({
  manager_id: idSchema,
  page: { type: 'integer', minimum: 1, maximum: 100_000 },
  limit: { type: 'integer', minimum: 1, maximum: 200 },
});
type ListInput = Infer<typeof listQuery>;

type KeyRow = typeof apiKeys.$inferSelect;

function view(k: KeyRow) {
  return {
    id: k.id,
    name: k.name,
    manager_id: k.managerId,
    prefix: `${API_KEY_PREFIX}${k.lookup}`,
    full: k.full,
    permissions: k.permissions,
    reseller_id: k.resellerId,
    allowed_ips: k.allowedIps,
    expires_at: isoTimestamp(k.expiresAt),
    revoked_at: isoTimestamp(k.revokedAt),
    last_used_at: isoTimestamp(k.lastUsedAt),
    last_used_ip: k.lastUsedIp,
    created_at: isoTimestamp(k.createdAt),
  };
}

/** Keys manage no keys: a leaked key must not mint another that outlives its revocation. */
function managerCaller(ctx: Ctx<unknown>): Auth {
  const auth = authOf(ctx);
  if (auth.keyId !== undefined) throw fail('keyCannotManageKeys');
  return auth;
}

/** Who sees a key: an admin every key, any other manager its own. */
function visible(auth: Auth): SQL | undefined {
  return auth.role === 'admin' ? undefined : eq(apiKeys.managerId, auth.managerId);
}

export const apiKeysService: ServiceSchema = {
  name: 'apiKeys',
  actions: {
    create: {
      rest: 'POST /api/api-keys',
      http: {
        auth: 'jwt',
        access: 'any authenticated manager (its own keys; admin: any manager), not a key',
        summary: 'Create an API key; the secret (`key`) is in this answer only',
        tag: 'api-keys',
        body: createBody,
        success: 201,
        errors: {
          400: `${FAILURES.keyPermissionNotHeld.message('<permission>')}; allowed_ips or expires_at invalid; ${FAILURES.freshCodeRequired.message('two_factor_code')}; ${FAILURES.twoFactorCodeWrong.message}`,
          403: `${FAILURES.keyCannotManageKeys.message}; another manager's key (not an admin); reseller_id outside the manager's tree`,
          404: FAILURES.managerNotFound.message,
        },
      },
      async handler(ctx: Ctx<CreateInput>): Promise<ActionResult> {
        const caller = managerCaller(ctx);
        const p = ctx.params;
        const ownerId = p.manager_id ?? caller.managerId;
        if (ownerId !== caller.managerId && caller.role !== 'admin') throw fail('notAuthorized');
        const [owner] = await db().select().from(managers).where(eq(managers.id, ownerId));
        if (!owner) throw fail('managerNotFound');
        const ownerAuth: Auth = {
          managerId: owner.id,
          role: owner.role as Auth['role'],
          resellerId: owner.resellerId,
          permissions: owner.permissions,
          jti: '',
          exp: 0,
        };
        const permissions = p.full ? [] : (p.permissions ?? []);
        if (owner.role !== 'admin') {
          const missing = permissions.find((name) => !owner.permissions.includes(name));
          if (missing) throw fail('keyPermissionNotHeld', missing);
        }
        const resellerId = p.reseller_id === undefined ? null : await targetReseller(db(), ownerAuth, p.reseller_id);
        const allowedIps = p.allowed_ips ?? [];
        allowedIps.forEach((entry, i) => {
          if (!isAddressOrCidr(entry)) throw fail('allowedIpInvalid', i);
        });
        const expiresAt = p.expires_at ? new Date(p.expires_at) : null;
        if (expiresAt && expiresAt.getTime() <= Date.now()) throw fail('expiryInPast');
        // A key outlives the token that made it: a stolen token of a manager with two-factor on must
        // not be enough to leave one behind (issue 43, finding 5). Checked last: a refused request
        // does not use the code up.
        await ctx.call('two-factor.requireFreshCode', { two_factor_code: p.two_factor_code });
        const fresh = newApiKey();
        const row = await db().transaction(async (tx) => {
          const [inserted] = await tx
            .insert(apiKeys)
            .values({
              managerId: owner.id,
              name: p.name,
              lookup: fresh.lookup,
              secretHash: fresh.secretHash,
              full: p.full ?? false,
              permissions,
              resellerId: p.full ? null : resellerId,
              allowedIps,
              expiresAt,
            })
            .returning();
          await recordAudit(tx, caller, {
            action: 'api_key.create',
            entity: 'api_key',
            entityId: inserted.id,
            details: {
              name: p.name,
              owner: owner.id,
              full: inserted.full,
              permissions,
              reseller_id: inserted.resellerId,
            },
            resellerId: owner.resellerId,
          });
          return inserted;
        });
        return { data: { ...view(row), key: fresh.key } };
      },
    },

    list: {
      rest: 'GET /api/api-keys',
      http: {
        auth: 'jwt',
        access: 'any authenticated manager (its own keys; admin: every key), not a key',
        summary: 'API keys without their secrets: prefix, permissions, expiry, revocation, last use',
        tag: 'api-keys',
        query: listQuery,
        errors: { 403: FAILURES.keyCannotManageKeys.message },
      },
      async handler(ctx: Ctx<ListInput>): Promise<ActionResult> {
        const auth = managerCaller(ctx);
        const { page, limit, offset } = pageOf(ctx.params);
        const where = and(
          visible(auth),
          ctx.params.manager_id === undefined ? undefined : eq(apiKeys.managerId, ctx.params.manager_id),
        );
        const rows = await db()
          .select()
          .from(apiKeys)
          .where(where)
          .orderBy(desc(apiKeys.id))
          .limit(limit)
          .offset(offset);
        const [{ total }] = await db().select({ total: count() }).from(apiKeys).where(where);
        return { data: rows.map(view), pagination: { page, limit, total } };
      },
    },

    revoke: {
      rest: 'DELETE /api/api-keys/:id',
      http: {
        auth: 'jwt',
        access: "any authenticated manager (the key's own manager, or admin), not a key",
        summary: 'Revoke an API key: refused on every gateway at once',
        tag: 'api-keys',
        params: idParams(),
        errors: { 403: FAILURES.keyCannotManageKeys.message, 404: FAILURES.apiKeyNotFound.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        const auth = managerCaller(ctx);
        const row = await db().transaction(async (tx) => {
          const [current] = await tx
            .select()
            .from(apiKeys)
            .where(and(eq(apiKeys.id, ctx.params.id), visible(auth)))
            .for('update');
          if (!current) throw fail('apiKeyNotFound');
          if (current.revokedAt) return current;
          const [revoked] = await tx
            .update(apiKeys)
            .set({ revokedAt: new Date() })
            .where(eq(apiKeys.id, current.id))
            .returning();
          await recordAudit(tx, auth, {
            action: 'api_key.revoke',
            entity: 'api_key',
            entityId: current.id,
            details: { name: current.name, owner: current.managerId },
          });
          return revoked;
        });
        await ctx.broadcast('apikey.changed', { id: row.id });
        return { data: view(row) };
      },
    },
  },
};
