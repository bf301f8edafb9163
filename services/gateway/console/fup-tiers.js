/**
 * A plan's fair-use tiers (`fup_tiers`: up to three `{ level, threshold_gb, rate_limit }`) in the
 * plan form and the plans table. The form has a pair of fields per level; a level whose two fields
 * are empty has no tier, so clearing them removes it. The rule itself: shared/domain/fup.ts.
 */
import { addTexts, t } from './i18n.js';
import { html } from './ui.js';

addTexts(
  {
    ar: {
      'Fair use': 'الاستخدام العادل',
      'Tier {level}: after GB this month': 'الشريحة {level}: بعد (غيغابايت) هذا الشهر',
      'Tier {level}: rate limit (e.g. 2M/2M)': 'الشريحة {level}: حد السرعة (مثل 2M/2M)',
      'No tier': 'لا شرائح',
      'Tier {level}: {rate} after {gb} GB': 'الشريحة {level}: {rate} بعد {gb} غيغابايت',
      'Tier {level} needs both its GB and its rate limit.': 'الشريحة {level} تحتاج الغيغابايت وحد السرعة معًا.',
    },
  },
  { fup_tiers: ['Fair-use tiers', 'شرائح الاستخدام العادل'] },
);

const LEVELS = [1, 2, 3];
const gbName = (level) => `fup_${level}_threshold_gb`;
const rateName = (level) => `fup_${level}_rate_limit`;

/** The form's fields of plan `p`'s tiers (its current ones filled in). */
export function tierFields(p = {}) {
  const byLevel = new Map((p.fup_tiers ?? []).map((tier) => [tier.level, tier]));
  return LEVELS.flatMap((level) => [
    {
      name: gbName(level),
      label: t('Tier {level}: after GB this month', { level }),
      type: 'number',
      min: 0,
      max: 10000,
      value: byLevel.get(level)?.threshold_gb,
    },
    {
      name: rateName(level),
      label: t('Tier {level}: rate limit (e.g. 2M/2M)', { level }),
      value: byLevel.get(level)?.rate_limit,
    },
  ]);
}

/**
 * The form's values with the tier fields folded into `fup_tiers` (every level, so a cleared one
 * is removed); a level with only one of its two fields is refused before the API is asked.
 */
export function withTiers(values) {
  const out = {};
  const tiers = [];
  for (const [k, v] of Object.entries(values)) if (!/^fup_\d_/.test(k)) out[k] = v;
  for (const level of LEVELS) {
    const gb = values[gbName(level)];
    const rate = values[rateName(level)];
    if (gb === undefined && rate === undefined) continue;
    if (gb === undefined || rate === undefined) {
      throw new Error(t('Tier {level} needs both its GB and its rate limit.', { level }));
    }
    tiers.push({ level, threshold_gb: gb, rate_limit: rate });
  }
  return { ...out, fup_tiers: tiers };
}

/** The tiers of a plan as short lines for its table row. */
export function TierList({ tiers }) {
  if (!tiers?.length) return html`<span class="muted">${t('No tier')}</span>`;
  return html`<ul class="tiers">${[...tiers]
    .sort((a, b) => a.level - b.level)
    .map(
      (tier) =>
        html`<li key=${tier.level}>${t('Tier {level}: {rate} after {gb} GB', {
          level: tier.level,
          rate: tier.rate_limit,
          gb: tier.threshold_gb,
        })}</li>`,
    )}</ul>`;
}
