import type { ServiceSchema } from 'moleculer';
import { requireAdmin } from '../../shared/auth/policy';
import { db } from '../../shared/db/client';
import { fail } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { isCurrency } from '../../shared/money';
import { loadSettings, publicView, saveSettings, type SettingKey } from '../../shared/settings';
import { adminErrors } from '../../shared/http/schemas';
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
        await saveSettings(db(), changes);
        return { data: publicView(await loadSettings(db())) };
      },
    },
  },
};
