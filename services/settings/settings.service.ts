import type { ServiceSchema } from 'moleculer';
import { requireAdmin } from '../../shared/auth/policy';
import { db } from '../../shared/db/client';
import { FAILURES, fail } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { eq, sql } from 'drizzle-orm';
import { isCurrency } from '../../shared/money';
import { isCountry } from '../../shared/phone';
import { resellers } from '../../shared/db/schema';
import { changedFields, recordAudit } from '../../shared/audit';
import { checkOutgoingUrl, fetchSmall } from '../../shared/net/address-policy';
import {
  LOGO_MAX_BYTES,
  forgetCachedSettings,
  isSecretSetting,
  loadSettings,
  publicView,
  saveSettings,
  type SettingKey,
} from '../../shared/settings';
import { adminErrors } from '../../shared/http/schemas';
import { lockWalletCurrency } from '../../shared/billing';
import { kickBlockedOnline, writeBlockedGroup } from '../../shared/access/garden';
import { checkVendorTemplates } from '../../shared/vendors/profiles';
import { parseRadiusPairs, type BlockedAccessMode } from '../../shared/domain/access';
import { settingsUpdateSchema } from '../../shared/settings';

/** Provider addresses and the secrets sent to them: a new address needs its secret again. */
const PROVIDER_SECRETS = [
  ['whatsapp_base_url', 'whatsapp_access_token'],
  ['telegram_base_url', 'telegram_bot_token'],
  ['stripe_api_base_url', 'stripe_secret_key'],
] as const satisfies readonly (readonly [SettingKey, SettingKey])[];

const LOGO_TYPES = /^image\/(png|jpeg|gif|webp)$/;

/**
 * The outgoing side of a settings change (docs/security.md): a chat provider's URL may change
 * only with its token in the same request (else a masked token could be sent to a host of the
 * caller's choosing), and must be a public address unless allow_private_targets; an http(s) logo
 * is fetched here once, under the same policy, and kept as a data: URL, so no renderer and no
 * reader's browser ever fetches it.
 */
async function guardOutgoing(changes: Partial<Record<SettingKey, unknown>>): Promise<void> {
  const current = await loadSettings(db(), ['allow_private_targets', ...PROVIDER_SECRETS.map(([url]) => url)]);
  const allowPrivate = (changes.allow_private_targets ?? current.allow_private_targets) === true;
  for (const [urlKey, secretKey] of PROVIDER_SECRETS) {
    const next = changes[urlKey];
    // Unchanged (the console saves every field): nothing to judge here; sending checks it again.
    if (typeof next !== 'string' || next === current[urlKey]) continue;
    const secret = changes[secretKey];
    if (typeof secret !== 'string' || !secret) throw fail('secretRequired', secretKey, urlKey);
    await checkOutgoingUrl(urlKey, next, allowPrivate);
  }
  const logo = changes.operator_logo_url;
  if (typeof logo === 'string' && logo) changes.operator_logo_url = await logoAsData(logo, allowPrivate);
}

async function logoAsData(logo: string, allowPrivate: boolean): Promise<string> {
  const inline = /^data:(image\/[a-z+.-]+);base64,([A-Za-z0-9+/]*={0,2})$/i.exec(logo);
  if (inline) {
    if (!LOGO_TYPES.test(inline[1].toLowerCase())) throw fail('logoNotImage');
    if (Buffer.from(inline[2], 'base64').length > LOGO_MAX_BYTES) {
      throw fail('targetNotAllowed', 'operator_logo_url', `larger than ${LOGO_MAX_BYTES} bytes`);
    }
    return logo;
  }
  if (!/^https?:\/\//i.test(logo)) throw fail('logoNotImage');
  const { contentType, body } = await fetchSmall('operator_logo_url', logo, {
    allowPrivate,
    maxBytes: LOGO_MAX_BYTES,
    timeoutMs: 5000,
  });
  const type = contentType.split(';')[0].trim().toLowerCase();
  if (!LOGO_TYPES.test(type)) throw fail('logoNotImage');
  return `data:${type};base64,${body.toString('base64')}`;
}

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
        errors: { ...adminErrors, 409: FAILURES.currencyChangeNeedsEmptyWallets.message('<currency>') },
      },
      async handler(ctx: Ctx<Partial<Record<SettingKey, unknown>>>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const changes = ctx.params;
        if (typeof changes.currency === 'string' && !isCurrency(changes.currency)) {
          throw fail('currencyInvalid');
        }
        if (typeof changes.default_country === 'string' && !isCountry(changes.default_country)) {
          throw fail('invalidRequest', 'default_country must be an ISO 3166 country code');
        }
        if (typeof changes.default_reseller_id === 'number') {
          const [found] = await db()
            .select({ id: resellers.id })
            .from(resellers)
            .where(eq(resellers.id, changes.default_reseller_id));
          if (!found) throw fail('referenceNotFound', 'default_reseller_id');
        }
        if (typeof changes.walled_garden_attributes === 'string') {
          try {
            parseRadiusPairs(changes.walled_garden_attributes);
          } catch (err) {
            throw fail('gardenAttributesInvalid', (err as Error).message);
          }
        }
        if (changes.walled_garden_vendor_attributes !== undefined) {
          try {
            checkVendorTemplates(changes.walled_garden_vendor_attributes as Record<string, string>);
          } catch (err) {
            throw fail('vendorGardenInvalid', (err as Error).message);
          }
        }
        await guardOutgoing(changes);
        const view = await db().transaction(async (tx) => {
          const before = publicView(await loadSettings(tx));
          // A wallet holds minor units of the system currency and no currency of its own: 10.00 USD
          // left in one would read as 1,000 yen after the change.
          if (typeof changes.currency === 'string' && changes.currency !== before.currency) {
            // Alone: a wallet credit under way is waited for and counted, one after it sees the change.
            await lockWalletCurrency(tx, 'change');
            const { rows } = await tx.execute(
              sql`select 1 from subscribers where wallet_balance <> 0 and deleted_at is null limit 1`,
            );
            if (rows.length) throw fail('currencyChangeNeedsEmptyWallets', String(before.currency));
          }
          await saveSettings(tx, changes);
          // Secrets appear as whether they are set (publicView), never as values.
          const after = publicView(await loadSettings(tx));
          await recordAudit(tx, ctx.meta.auth, {
            action: 'settings.update',
            entity: 'settings',
            details: {
              ...changedFields(before, after),
              // A secret replaced by another shows the same mask: say that it changed.
              ...Object.fromEntries(
                (Object.keys(changes) as SettingKey[])
                  .filter((k) => isSecretSetting(k))
                  .map((k) => [k, [before[k], changes[k] ? 'changed' : '']]),
              ),
            },
          });
          if (
            changes.blocked_access !== undefined ||
            changes.walled_garden_attributes !== undefined ||
            changes.walled_garden_vendor_attributes !== undefined
          ) {
            await writeBlockedGroup(
              tx,
              after.blocked_access as BlockedAccessMode,
              after.walled_garden_attributes as string,
              after.walled_garden_vendor_attributes as Record<string, string>,
            );
            if (before.blocked_access !== after.blocked_access) await kickBlockedOnline(tx);
          }
          return after;
        });
        // This process's cached settings before the answer; the other processes' on the event.
        forgetCachedSettings();
        // The lifecycle sweep recomputes who is blocked under settings such as the overdue grace.
        ctx.broadcast('settings.changed', { keys: Object.keys(changes) });
        return { data: view };
      },
    },
  },
};
