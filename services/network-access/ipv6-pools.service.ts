/**
 * GET/POST /api/ipv6-pools and DELETE /api/ipv6-pools/:name (admin): the IPv6 pools the billing
 * keeps and hands out from (shared/access/ipv6-pools.ts). A plan names one in `framed_ipv6_pool` or
 * `delegated_ipv6_pool`; docs/ipv6.md, "Pools".
 */
import type { ServiceSchema } from 'moleculer';
import { recordAudit } from '../../shared/audit';
import { createPool, deletePool, listPools } from '../../shared/access/ipv6-pools';
import { requireAdmin } from '../../shared/auth/policy';
import { db } from '../../shared/db/client';
import { FAILURES } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { adminErrors, object, type Infer } from '../../shared/http/schemas';

const poolName = { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' } as const;
const poolBody = object(
  {
    name: poolName,
    /** The parent prefix, e.g. 2001:db8::/40. */
    prefix: { type: 'string', minLength: 3, maxLength: 50 },
    /** The length of each prefix handed out, e.g. 56. */
    prefix_length: { type: 'integer', minimum: 1, maximum: 128 },
  },
  ['name', 'prefix', 'prefix_length'],
);
const nameParams = object({ name: poolName }, ['name']);

export const ipv6PoolsService: ServiceSchema = {
  name: 'ipv6Pools',
  actions: {
    list: {
      rest: 'GET /api/ipv6-pools',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'IPv6 pools the billing hands prefixes out from, with how many are used',
        tag: 'nas',
        errors: adminErrors,
      },
      async handler(ctx: Ctx): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        return { data: await listPools(db()) };
      },
    },
    create: {
      rest: 'POST /api/ipv6-pools',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Create an IPv6 pool: a parent prefix split into prefixes of prefix_length',
        tag: 'nas',
        success: 201,
        body: poolBody,
        errors: {
          ...adminErrors,
          400: `a field is invalid; ${FAILURES.ipv6PoolLengthUnfitForPlan.message('<length>', '<plan>', '<field>', '<column>', '<lengths>')}`,
          409: `${FAILURES.ipv6PoolTaken.message('<name>')}; ${FAILURES.ipv6PoolNamedForBoth.message('<plan>', '<name>')}`,
        },
      },
      async handler(ctx: Ctx<Infer<typeof poolBody>>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const { name, prefix, prefix_length } = ctx.params;
        const pool = await db().transaction(async (tx) => {
          const created = await createPool(tx, name, prefix, prefix_length);
          await recordAudit(tx, ctx.meta.auth, {
            action: 'ipv6_pool.create',
            entity: 'ipv6_pool',
            entityId: null,
            details: { name, prefix: created.prefix, prefix_length },
          });
          return created;
        });
        return { data: pool };
      },
    },
    remove: {
      rest: 'DELETE /api/ipv6-pools/:name',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Remove an IPv6 pool none of whose prefixes is held',
        tag: 'nas',
        params: nameParams,
        errors: {
          ...adminErrors,
          404: FAILURES.ipv6PoolNotFound.message,
          409: FAILURES.ipv6PoolInUse.message('<name>'),
        },
      },
      async handler(ctx: Ctx<{ name: string }>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        await db().transaction(async (tx) => {
          await deletePool(tx, ctx.params.name);
          await recordAudit(tx, ctx.meta.auth, {
            action: 'ipv6_pool.delete',
            entity: 'ipv6_pool',
            entityId: null,
            details: { name: ctx.params.name },
          });
        });
        return { data: { name: ctx.params.name, deleted: true } };
      },
    },
  },
};
