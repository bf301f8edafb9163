import { and, count, eq, ne, sql } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import type { Role } from '../../shared/auth/claims';
import { hashPassword } from '../../shared/auth/passwords';
import { requireAdmin } from '../../shared/auth/policy';
import { config } from '../../shared/config';
import { db } from '../../shared/db/client';
import { managers, resellers } from '../../shared/db/schema';
import { badRequest, conflict, notFound } from '../../shared/errors';
import { pageOf, type Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { isoTimestamp } from '../../shared/http/schemas';
import { conflictOnDuplicate } from '../../shared/db/errors';

type ManagerRow = typeof managers.$inferSelect;

interface ManagerInput {
  username?: string;
  password?: string;
  role?: Role;
  reseller_id?: number | null;
  permissions?: string[];
}

function view(m: ManagerRow) {
  return {
    id: m.id,
    username: m.username,
    role: m.role,
    reseller_id: m.resellerId,
    permissions: m.permissions,
    created_at: isoTimestamp(m.createdAt),
  };
}

async function checkRoleAndReseller(role: Role, resellerId: number | null | undefined): Promise<void> {
  if (role === 'reseller' && !resellerId) throw badRequest('reseller_id is required for role reseller');
  if (role === 'admin' && resellerId) throw badRequest('reseller_id must be empty for role admin');
  if (resellerId) {
    const [r] = await db().select({ id: resellers.id }).from(resellers).where(eq(resellers.id, resellerId));
    if (!r) throw badRequest('reseller_id not found');
  }
}

/** The first admin, from ADMIN_USERNAME / ADMIN_PASSWORD, created once when no admin exists. */
export async function ensureFirstAdmin(log: (msg: string) => void): Promise<void> {
  const cfg = config();
  const [{ admins }] = await db().select({ admins: count() }).from(managers).where(eq(managers.role, 'admin'));
  if (admins > 0) return;
  if (!cfg.adminPassword) {
    log('no admin manager exists: set ADMIN_PASSWORD (and ADMIN_USERNAME) to create one, or use `npm run token`');
    return;
  }
  await db()
    .insert(managers)
    .values({ username: cfg.adminUsername, passwordHash: await hashPassword(cfg.adminPassword), role: 'admin', permissions: [] })
    .onConflictDoNothing();
  log(`created the first admin manager "${cfg.adminUsername}"`);
}

export const managersService: ServiceSchema = {
  name: 'managers',
  actions: {
    create: {
      async handler(ctx: Ctx<ManagerInput>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const p = ctx.params;
        const role = p.role as Role;
        await checkRoleAndReseller(role, p.reseller_id);
        return conflictOnDuplicate('username already exists', async () => {
          const [row] = await db()
            .insert(managers)
            .values({
              username: p.username as string,
              passwordHash: await hashPassword(p.password as string),
              role,
              resellerId: p.reseller_id ?? null,
              permissions: p.permissions ?? [],
            })
            .returning();
          return { data: view(row) };
        });
      },
    },
    list: {
      async handler(ctx: Ctx<{ page?: number; limit?: number }>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const { page, limit, offset } = pageOf(ctx.params);
        const rows = await db().select().from(managers).orderBy(managers.id).limit(limit).offset(offset);
        const [{ total }] = await db().select({ total: count() }).from(managers);
        return { data: rows.map(view), pagination: { page, limit, total } };
      },
    },
    update: {
      async handler(ctx: Ctx<ManagerInput & { id: number }>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const p = ctx.params;
        const [current] = await db().select().from(managers).where(eq(managers.id, p.id));
        if (!current) throw notFound('manager not found');
        const role = (p.role ?? current.role) as Role;
        const resellerId = p.reseller_id === undefined ? current.resellerId : p.reseller_id;
        await checkRoleAndReseller(role, resellerId);
        if (current.role === 'admin' && role !== 'admin') await assertAnotherAdmin(current.id, 'cannot demote the last admin');
        return conflictOnDuplicate('username already exists', async () => {
          const [row] = await db()
            .update(managers)
            .set({
              username: p.username ?? current.username,
              passwordHash: p.password ? await hashPassword(p.password) : current.passwordHash,
              role,
              resellerId: role === 'admin' ? null : resellerId,
              permissions: p.permissions ?? current.permissions,
              updatedAt: sql`now()`,
            })
            .where(eq(managers.id, p.id))
            .returning();
          return { data: view(row) };
        });
      },
    },
    remove: {
      async handler(ctx: Ctx<{ id: number }>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const [current] = await db().select().from(managers).where(eq(managers.id, ctx.params.id));
        if (!current) throw notFound('manager not found');
        if (current.role === 'admin') await assertAnotherAdmin(current.id, 'cannot delete the last admin');
        await db().delete(managers).where(eq(managers.id, ctx.params.id));
        return { data: { id: current.id, deleted: true } };
      },
    },
  },
};

async function assertAnotherAdmin(exceptId: number, message: string): Promise<void> {
  const [{ others }] = await db()
    .select({ others: count() })
    .from(managers)
    .where(and(eq(managers.role, 'admin'), ne(managers.id, exceptId)));
  if (others === 0) throw conflict(message);
}
