/**
 * The signed-in subscriber's token, the only thing the page keeps (sessionStorage: gone when the
 * tab or the installed app closes; the token itself lives 30 minutes). Passwords and codes are
 * sent once and never stored or kept in the page. The language a subscriber picks is remembered in
 * localStorage: it is a preference, not a secret.
 */
import { t } from '/console/i18n.js';

const KEY = 'isp-billing.my.token';
const LANGUAGE_KEY = 'isp-billing.my.language';
const listeners = new Set();

function expiry(token) {
  try {
    const claims = JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
    return Number(claims.exp) * 1000;
  } catch {
    return 0;
  }
}

function stored() {
  const token = sessionStorage.getItem(KEY);
  return token && expiry(token) > Date.now() ? token : null;
}

export const session = {
  token: stored(),
  /** Why the last session ended, shown on the sign-in screen. */
  notice: null,

  start(token) {
    sessionStorage.setItem(KEY, token);
    Object.assign(this, { token, notice: null });
    listeners.forEach((l) => l());
  },
  /** A fresh token for the same subscriber (after a password change): nothing else changes. */
  replace(token) {
    sessionStorage.setItem(KEY, token);
    this.token = token;
  },
  end(notice = null) {
    sessionStorage.removeItem(KEY);
    Object.assign(this, { token: null, notice });
    listeners.forEach((l) => l());
  },
  expire() {
    this.end(t('Your session has ended. Please sign in again.'));
  },
  onChange(listener) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

export const preferredLanguage = () => localStorage.getItem(LANGUAGE_KEY);

/** The page is served in a language: switching loads it again in the chosen one. */
export function switchLanguage(language) {
  localStorage.setItem(LANGUAGE_KEY, language);
  const url = new URL(location.href);
  url.searchParams.set('lang', language);
  location.replace(url.toString());
}
