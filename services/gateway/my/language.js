/**
 * The language switch: the installed languages (the catalogue's, i18n.js), each named in itself.
 * The page is served in the operator's language; a subscriber's own choice is remembered on the
 * device and wins from then on.
 */
import { addTexts, installedLanguages, language, t } from '/console/i18n.js';
import { html } from '/console/ui.js';
import { preferredLanguage, switchLanguage } from './session.js';

addTexts({ ar: { Language: 'اللغة' } });

/** Language names in themselves. */
const NAMES = { en: 'English', ar: 'العربية', fa: 'فارسی', fr: 'Français', tr: 'Türkçe', ur: 'اردو' };

const chosen = preferredLanguage();
const asked = new URL(location.href).searchParams.get('lang');
if (chosen && !asked && chosen !== language && installedLanguages().includes(chosen)) switchLanguage(chosen);

export function LanguageSwitch() {
  const languages = installedLanguages();
  if (languages.length < 2) return null;
  return html`<label class="language">
    <span>${t('Language')}</span>
    <select onChange=${(e) => switchLanguage(e.currentTarget.value)}>
      ${languages.map((l) => html`<option value=${l} lang=${l} selected=${l === language}>${NAMES[l] ?? l}</option>`)}
    </select>
  </label>`;
}
