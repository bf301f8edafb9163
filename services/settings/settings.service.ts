import type { ServiceSchema } from 'moleculer';
import { requireAdmin } from '../../shared/auth/policy';
import { db } from '../../shared/db/client';
import { fail } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { isCurrency } from '../../shared/money';
import { loadSettings, publicView, saveSettings, type SettingKey } from '../../shared/settings';
import { adminErrors } from '../../shared/http/schemas';
import { kickBlockedOnline, writeBlockedGroup } from '../../shared/access/garden';
import { parseRadiusPairs, type BlockedAccessMode } from '../../shared/domain/access';
import { settingsUpdateSchema } from '../../shared/settings';

export const settingsService: ServiceSchema = {
  name: 'settings',
  actions: {
    get: {
      rest: 'GET /api/settings',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'All system settings (secrets masked)',
        tag: 'settings',
        errors: adminErrors,
      },
      async handler(ctx: Ctx): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        return { data: publicView(await loadSettings(db())) };
      },
    },
    update: {
      rest: 'PUT /api/settings',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Change any subset of the settings; unknown keys or wrong types are 400',
        tag: 'settings',
        body: settingsUpdateSchema,
        errors: adminErrors,
      },
      async handler(ctx: Ctx<Partial<Record<SettingKey, unknown>>>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const changes = ctx.params;
        if (typeof changes.currency === 'string' && !isCurrency(changes.currency)) {
          throw fail('currencyInvalid');
        }
        if (typeof changes.walled_garden_attributes === 'string') {
          try {
            parseRadiusPairs(changes.walled_garden_attributes);
          } catch (err) {
            throw fail('gardenAttributesInvalid', (err as Error).message);
          }
        }
        await db().transaction(async (tx) => {
          const { blocked_access: modeBefore } = await loadSettings(tx, ['blocked_access']);
          await saveSettings(tx, changes);
          if (changes.blocked_access === undefined && changes.walled_garden_attributes === undefined) return;
          const now = await loadSettings(tx, ['blocked_access', 'walled_garden_attributes']);
          await writeBlockedGroup(tx, now.blocked_access as BlockedAccessMode, now.walled_garden_attributes);
          if (modeBefore !== now.blocked_access) await kickBlockedOnline(tx);
        });
        // The lifecycle sweep recomputes who is blocked under settings such as the overdue grace.
        ctx.broadcast('settings.changed', { keys: Object.keys(changes) });
        return { data: publicView(await loadSettings(db())) };
      },
    },
  },
};
