import { and, count, eq, ne, sql } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import type { Auth, Role } from '../../shared/auth/claims';
import { hashPassword } from '../../shared/auth/passwords';
import { isPermission, PERMISSIONS } from '../../shared/auth/permissions';
import { requireAdmin, requireSignedIn } from '../../shared/auth/policy';
import { config } from '../../shared/config';
import { db } from '../../shared/db/client';
import { recordAudit } from '../../shared/audit';
import { managers, resellers } from '../../shared/db/schema';
import { FAILURES, fail } from '../../shared/failures';
import { pageOf, type Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { isoTimestamp } from '../../shared/http/schemas';
import { conflictOnDuplicate } from '../../shared/db/errors';
import { adminErrors, idParams, pageQuery, type IdPath, type PageQuery } from '../../shared/http/schemas';
import { grantsAdminSignIn } from './admin-grants';
import { managerCreateBody, managerUpdateBody, type ManagerInput, type NewManagerInput } from './schemas';

type ManagerRow = typeof managers.$inferSelect;

function view(m: ManagerRow) {
  return {
    id: m.id,
    username: m.username,
    role: m.role,
    reseller_id: m.resellerId,
    permissions: m.permissions,
    active: m.active,
    /** Whether sign-in asks this manager for a TOTP code (docs/two-factor.md). */
    two_factor: m.totpEnabledAt !== null,
    created_at: isoTimestamp(m.createdAt),
  };
}

/** Every gateway drops its cached row of this manager at once (services/gateway/identities.ts). */
function announceChange(ctx: Ctx<unknown>, id: number): Promise<void> {
  return ctx.broadcast('manager.changed', { id });
}

/** What an update changes that the audit log should say: enable/disable, password, role, scope. */
function auditedChanges(current: ManagerRow, next: ManagerRow): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  if (current.active !== next.active) changes.active = next.active;
  if (current.tokenVersion !== next.tokenVersion) changes.password = 'changed';
  if (current.role !== next.role) changes.role = next.role;
  if (current.resellerId !== next.resellerId) changes.reseller_id = next.resellerId;
  if (JSON.stringify(current.permissions) !== JSON.stringify(next.permissions)) changes.permissions = next.permissions;
  if (current.username !== next.username) changes.username = next.username;
  return changes;
}

async function checkRoleAndReseller(role: Role, resellerId: number | null | undefined): Promise<void> {
  if (role === 'reseller' && !resellerId) throw fail('resellerRequiredForRole');
  if (role === 'admin' && resellerId) throw fail('resellerForbiddenForAdmin');
  if (resellerId) {
    const [r] = await db().select({ id: resellers.id }).from(resellers).where(eq(resellers.id, resellerId));
    if (!r) throw fail('referenceNotFound', 'reseller_id');
  }
}

/**
 * A change that grants admin sign-in (./admin-grants.ts): never by an API key, and with a current
 * code of the caller's own when it has two-factor sign-in on (issue 43, finding 5). Asked after
 * the request's own checks, so a request refused by them does not use up the code (a taken
 * username shows only at the insert, after it).
 */
async function requireFreshFactor(ctx: Ctx<{ two_factor_code?: string }>, auth: Auth): Promise<void> {
  requireSignedIn(auth, 'keyCannotGrantAdmin');
  await ctx.call('two-factor.requireFreshCode', { two_factor_code: ctx.params.two_factor_code });
}

/** Names the first permission that shared/auth/permissions does not list. */
function checkPermissions(names: string[] | undefined): void {
  const unknown = names?.find((name) => !isPermission(name));
  if (unknown !== undefined) throw fail('unknownPermission', unknown);
}

/** The first admin, from ADMIN_USERNAME / ADMIN_PASSWORD, created once when no admin exists. */
async function ensureFirstAdmin(log: (msg: string) => void): Promise<void> {
  const cfg = config();
  const [{ admins }] = await db().select({ admins: count() }).from(managers).where(eq(managers.role, 'admin'));
  if (admins > 0) return;
  if (!cfg.adminPassword) {
    log('no admin manager exists: set ADMIN_PASSWORD (and ADMIN_USERNAME) to create one, or use `npm run token`');
    return;
  }
  await db()
    .insert(managers)
    .values({
      username: cfg.adminUsername,
      passwordHash: await hashPassword(cfg.adminPassword),
      role: 'admin',
      permissions: [],
    })
    .onConflictDoNothing();
  log(`created the first admin manager "${cfg.adminUsername}"`);
}

/** What the steps that grant admin sign-in may answer besides the admin routes' errors. */
const grantErrors = {
  400: `${FAILURES.freshCodeRequired.message('two_factor_code')}; ${FAILURES.twoFactorCodeWrong.message}`,
  403: `${adminErrors[403]}; ${FAILURES.keyCannotGrantAdmin.message}`,
  429: FAILURES.loginLocked.message,
};

export const managersService: ServiceSchema = {
  name: 'managers',
  async started() {
    await ensureFirstAdmin((m) => this.logger.info(m));
  },
  actions: {
    create: {
      rest: 'POST /api/managers',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Create a manager (admin, reseller or user account)',
        tag: 'managers',
        success: 201,
        body: managerCreateBody,
        errors: { ...adminErrors, ...grantErrors, 409: FAILURES.usernameTaken.message },
      },
      async handler(ctx: Ctx<NewManagerInput>): Promise<ActionResult> {
        const auth = requireAdmin(ctx.meta.auth);
        const p = ctx.params;
        const role = p.role;
        checkPermissions(p.permissions);
        await checkRoleAndReseller(role, p.reseller_id);
        if (grantsAdminSignIn(undefined, role, true)) await requireFreshFactor(ctx, auth);
        const passwordHash = await hashPassword(p.password);
        return conflictOnDuplicate('usernameTaken', () =>
          db().transaction(async (tx) => {
            const [row] = await tx
              .insert(managers)
              .values({
                username: p.username,
                passwordHash,
                role,
                resellerId: p.reseller_id ?? null,
                permissions: p.permissions ?? [],
                active: p.active ?? true,
              })
              .returning();
            await recordAudit(tx, ctx.meta.auth, {
              action: 'manager.create',
              entity: 'manager',
              entityId: row.id,
              resellerId: row.resellerId,
              details: {
                username: row.username,
                role: row.role,
                reseller_id: row.resellerId,
                permissions: row.permissions,
              },
            });
            return { data: view(row) };
          }),
        );
      },
    },
    list: {
      rest: 'GET /api/managers',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'List managers',
        tag: 'managers',
        query: pageQuery,
        errors: adminErrors,
      },
      async handler(ctx: Ctx<PageQuery>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const { page, limit, offset } = pageOf(ctx.params);
        const rows = await db().select().from(managers).orderBy(managers.id).limit(limit).offset(offset);
        const [{ total }] = await db().select({ total: count() }).from(managers);
        return { data: rows.map(view), pagination: { page, limit, total } };
      },
    },
    permissions: {
      rest: 'GET /api/permissions',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'The permissions a manager can hold (the console offers these)',
        tag: 'managers',
        data: { type: 'array', items: { type: 'string', enum: [...PERMISSIONS] } },
        errors: adminErrors,
      },
      handler(ctx: Ctx<unknown>): ActionResult {
        requireAdmin(ctx.meta.auth);
        return { data: PERMISSIONS };
      },
    },
    update: {
      rest: 'PUT /api/managers/:id',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Update a manager',
        tag: 'managers',
        params: idParams(),
        body: managerUpdateBody,
        errors: {
          ...adminErrors,
          ...grantErrors,
          404: FAILURES.managerNotFound.message,
          409: 'username already exists, or cannot demote the last admin',
        },
      },
      async handler(ctx: Ctx<ManagerInput & IdPath>): Promise<ActionResult> {
        const auth = requireAdmin(ctx.meta.auth);
        const p = ctx.params;
        const [current] = await db().select().from(managers).where(eq(managers.id, p.id));
        if (!current) throw fail('managerNotFound');
        const role = (p.role ?? current.role) as Role;
        const resellerId = p.reseller_id === undefined ? current.resellerId : p.reseller_id;
        checkPermissions(p.permissions);
        await checkRoleAndReseller(role, resellerId);
        const active = p.active ?? current.active;
        if (current.role === 'admin' && role !== 'admin') await assertAnotherAdmin(current.id, 'lastAdminDemote');
        if (current.role === 'admin' && current.active && !active)
          await assertAnotherAdmin(current.id, 'lastAdminDisable');
        if (grantsAdminSignIn(current.role as Role, role, p.password !== undefined))
          await requireFreshFactor(ctx, auth);
        const row = await conflictOnDuplicate('usernameTaken', async () =>
          db().transaction(async (tx) => {
            const [updated] = await tx
              .update(managers)
              .set({
                username: p.username ?? current.username,
                passwordHash: p.password ? await hashPassword(p.password) : current.passwordHash,
                // A new password ends every token issued under the old one.
                tokenVersion: p.password ? sql`${managers.tokenVersion} + 1` : current.tokenVersion,
                role,
                resellerId: role === 'admin' ? null : resellerId,
                permissions: p.permissions ?? current.permissions,
                active,
                updatedAt: sql`now()`,
              })
              .where(eq(managers.id, p.id))
              .returning();
            const changes = auditedChanges(current, updated);
            const action =
              changes.active === undefined ? 'manager.update' : active ? 'manager.enable' : 'manager.disable';
            await recordAudit(tx, ctx.meta.auth, {
              action,
              entity: 'manager',
              entityId: p.id,
              resellerId: updated.resellerId,
              details: changes,
            });
            return updated;
          }),
        );
        await announceChange(ctx, p.id);
        return { data: view(row) };
      },
    },
    remove: {
      rest: 'DELETE /api/managers/:id',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Delete a manager',
        tag: 'managers',
        params: idParams(),
        errors: { ...adminErrors, 404: FAILURES.managerNotFound.message, 409: FAILURES.lastAdminDelete.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const [current] = await db().select().from(managers).where(eq(managers.id, ctx.params.id));
        if (!current) throw fail('managerNotFound');
        if (current.role === 'admin') await assertAnotherAdmin(current.id, 'lastAdminDelete');
        await db().transaction(async (tx) => {
          await tx.delete(managers).where(eq(managers.id, ctx.params.id));
          await recordAudit(tx, ctx.meta.auth, {
            action: 'manager.delete',
            entity: 'manager',
            entityId: current.id,
            resellerId: current.resellerId,
            details: { username: current.username },
          });
        });
        await announceChange(ctx, current.id);
        return { data: { id: current.id, deleted: true } };
      },
    },
  },
};

async function assertAnotherAdmin(
  exceptId: number,
  refusal: 'lastAdminDemote' | 'lastAdminDisable' | 'lastAdminDelete',
): Promise<void> {
  const [{ others }] = await db()
    .select({ others: count() })
    .from(managers)
    .where(and(eq(managers.role, 'admin'), eq(managers.active, true), ne(managers.id, exceptId)));
  if (others === 0) throw fail(refusal);
}
