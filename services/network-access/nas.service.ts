import { asc, count, eq } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { changedFields, recordAudit } from '../../shared/audit';
import { requireAdmin } from '../../shared/auth/policy';
import { encrypt } from '../../shared/auth/secrets';
import { db } from '../../shared/db/client';
import { conflictOnDuplicate } from '../../shared/db/errors';
import { nas } from '../../shared/db/schema';
import { FAILURES, fail } from '../../shared/failures';
import { pageOf, type Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { isoTimestamp } from '../../shared/http/schemas';
import { adminErrors, idParams, pageQuery, type IdPath, type PageQuery } from '../../shared/http/schemas';
import { writeAllVendorRows } from '../../shared/access/vendor-rows';
import { DEFAULT_VENDOR, PROFILES } from '../../shared/vendors/profiles';
import { nasCreateBody, nasUpdateBody, type NasInput } from './nas-schemas';

type NasRow = typeof nas.$inferSelect;

/** Secrets (RADIUS shared secret, API password) are write-only. */
export function nasView(n: NasRow) {
  return {
    id: n.id,
    name: n.shortname,
    ip_address: n.nasname,
    type: n.type,
    vendor: n.vendor,
    coa_port: n.coaPort,
    api_port: n.apiPort,
    api_username: n.apiUsername,
    has_api_password: !!n.apiPasswordEnc,
    description: n.description,
    created_at: isoTimestamp(n.createdAt),
  };
}

function columns(p: NasInput): Partial<typeof nas.$inferInsert> {
  const out: Partial<typeof nas.$inferInsert> = {};
  if (p.name !== undefined) out.shortname = p.name;
  if (p.ip_address !== undefined) out.nasname = p.ip_address;
  if (p.secret !== undefined) out.secret = p.secret;
  if (p.coa_port !== undefined) out.coaPort = p.coa_port;
  if (p.type !== undefined) out.type = p.type;
  if (p.vendor !== undefined) out.vendor = p.vendor;
  if (p.api_port !== undefined) out.apiPort = p.api_port;
  if (p.api_username !== undefined) out.apiUsername = p.api_username;
  if (p.api_password !== undefined) out.apiPasswordEnc = p.api_password ? encrypt(p.api_password) : null;
  if (p.description !== undefined) out.description = p.description;
  return out;
}

const uniqueIp = <T>(write: () => Promise<T>) => conflictOnDuplicate('nasIpTaken', write);

export const nasService: ServiceSchema = {
  name: 'nas',
  actions: {
    create: {
      rest: 'POST /api/nas',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Register an access server (written to the FreeRADIUS nas table)',
        tag: 'nas',
        success: 201,
        body: nasCreateBody,
        errors: { ...adminErrors, 409: FAILURES.nasIpTaken.message },
      },
      async handler(ctx: Ctx<NasInput>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const vendor = ctx.params.vendor ?? DEFAULT_VENDOR;
        const values = {
          type: 'mikrotik',
          vendor,
          coaPort: PROFILES[vendor].coaPort,
          ...columns(ctx.params),
        } as typeof nas.$inferInsert;
        const row = await uniqueIp(() =>
          db().transaction(async (tx) => {
            const [inserted] = await tx.insert(nas).values(values).returning();
            if (vendor !== DEFAULT_VENDOR) await writeAllVendorRows(tx);
            await recordAudit(tx, ctx.meta.auth, {
              action: 'nas.create',
              entity: 'nas',
              entityId: inserted.id,
              details: changedFields(null, inserted),
            });
            return inserted;
          }),
        );
        return { data: nasView(row) };
      },
    },
    list: {
      rest: 'GET /api/nas',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'List access servers (secrets never returned)',
        tag: 'nas',
        query: pageQuery,
        errors: adminErrors,
      },
      async handler(ctx: Ctx<PageQuery>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const { page, limit, offset } = pageOf(ctx.params);
        const rows = await db().select().from(nas).orderBy(asc(nas.id)).limit(limit).offset(offset);
        const [{ total }] = await db().select({ total: count() }).from(nas);
        return { data: rows.map(nasView), pagination: { page, limit, total } };
      },
    },
    update: {
      rest: 'PUT /api/nas/:id',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Update an access server',
        tag: 'nas',
        params: idParams(),
        body: nasUpdateBody,
        errors: { ...adminErrors, 404: FAILURES.nasNotFound.message, 409: FAILURES.nasIpTaken.message },
      },
      async handler(ctx: Ctx<NasInput & IdPath>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const { id, ...input } = ctx.params;
        const row = await uniqueIp(() =>
          db().transaction(async (tx) => {
            const [before] = await tx.select().from(nas).where(eq(nas.id, id)).for('update');
            if (!before) throw fail('nasNotFound');
            const [updated] = await tx.update(nas).set(columns(input)).where(eq(nas.id, id)).returning();
            if (updated.vendor !== before.vendor && updated.vendor !== DEFAULT_VENDOR) await writeAllVendorRows(tx);
            await recordAudit(tx, ctx.meta.auth, {
              action: 'nas.update',
              entity: 'nas',
              entityId: id,
              details: changedFields(before, updated),
            });
            return updated;
          }),
        );
        return { data: nasView(row) };
      },
    },
    remove: {
      rest: 'DELETE /api/nas/:id',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Remove an access server',
        tag: 'nas',
        params: idParams(),
        errors: { ...adminErrors, 404: FAILURES.nasNotFound.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const row = await db().transaction(async (tx) => {
          const [removed] = await tx.delete(nas).where(eq(nas.id, ctx.params.id)).returning();
          if (!removed) throw fail('nasNotFound');
          await recordAudit(tx, ctx.meta.auth, {
            action: 'nas.delete',
            entity: 'nas',
            entityId: removed.id,
            details: changedFields(removed, null),
          });
          return removed;
        });
        return { data: { id: row.id, deleted: true } };
      },
    },
  },
};
