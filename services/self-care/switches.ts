/**
 * The operator's switches of self-care (settings `self_care_*`, docs/self-care.md): the whole door
 * (`self_care_enabled`) and each feature behind it.
 */
import { fail } from '../../shared/failures';
import { db } from '../../shared/db/client';
import { cachedSettings, loadSettings, type SettingKey, type Settings } from '../../shared/settings';

export type Feature =
  | 'self_care_code_sign_in'
  | 'self_care_payments'
  | 'self_care_renew'
  | 'self_care_topup'
  | 'self_care_redeem'
  | 'self_care_change_plan'
  | 'self_care_password'
  | 'self_care_auto_renew';

/** Words of the refusal: what is turned off. */
const NAMES: Record<Feature, string> = {
  self_care_code_sign_in: 'sign-in with a code',
  self_care_payments: 'online payment',
  self_care_renew: 'renewal',
  self_care_topup: 'data top-up',
  self_care_redeem: 'card redemption',
  self_care_change_plan: 'plan change',
  self_care_password: 'password change',
  self_care_auto_renew: 'auto-renew',
};

/**
 * 403 unless self-care, and `feature` when named, are on; answers those settings with `extra`. The
 * switches come from the settings cache (shared/settings.ts): every /api/my request checks them, a
 * sign-in included. `extra` (what prices a write: tax rate, currency, offers) is read as it is now.
 */
export async function requireSelfCare<K extends SettingKey = never>(
  feature?: Feature,
  extra: K[] = [],
): Promise<Pick<Settings, K | Feature | 'self_care_enabled'>> {
  const s = await cachedSettings<Feature | 'self_care_enabled'>(['self_care_enabled', ...(feature ? [feature] : [])]);
  if (!s.self_care_enabled) throw fail('selfCareDisabled');
  if (feature && !s[feature]) throw fail('selfCareFeatureOff', NAMES[feature]);
  return extra.length
    ? { ...(await loadSettings(db(), extra)), ...s }
    : (s as Pick<Settings, K | Feature | 'self_care_enabled'>);
}
