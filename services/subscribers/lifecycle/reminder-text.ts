/**
 * The words of an expiry reminder, in the operator's language (setting `language`), English for
 * every language without its own list, like the documents and the captive portal. Pure: the
 * sweep passes in what the message says.
 */
import { formatDate, formatMoney, isolate, isRtl, ltrIsolate } from '../../../shared/format';

export interface ReminderFacts {
  operator: string;
  username: string;
  /** `YYYY-MM-DD`: the last paid day. */
  expiryDate: string;
  /** Days from today to `expiryDate` (0: today is the last day). */
  days: number;
  /** Renewal price in the plan's minor units, and its currency. */
  price: number;
  currency: string;
  portalUrl: string;
  /** Renewed from the wallet at expiry only when the wallet covers the price (auto_renew). */
  autoRenew: boolean;
}

/** The facts as the message prints them: formatted (shared/format.ts), isolated in right-to-left text. */
interface Shown {
  username: string;
  expiryDate: string;
  price: string;
  portalUrl: string;
}

type Words = (f: ReminderFacts, s: Shown) => string[];

const en: Words = (f, s) => [
  `${f.operator}: your internet subscription ${s.username} ` +
    (f.days === 0
      ? `ends today (${s.expiryDate}).`
      : `ends on ${s.expiryDate}, in ${f.days} ${f.days === 1 ? 'day' : 'days'}.`),
  `Renewal price: ${s.price}.`,
  f.autoRenew
    ? 'It renews by itself from your wallet when the wallet holds the price.'
    : 'Renew in time to stay connected.',
  `Details and how to pay: ${s.portalUrl}`,
];

const ar: Words = (f, s) => [
  `${f.operator}: ينتهي اشتراك الإنترنت الخاص بك ${s.username} ` +
    (f.days === 0
      ? `اليوم (${s.expiryDate}).`
      : `في ${s.expiryDate}، بعد ${f.days} ${f.days === 1 ? 'يوم' : f.days === 2 ? 'يومين' : 'أيام'}.`),
  `سعر التجديد: ${s.price}.`,
  f.autoRenew ? 'يتجدد اشتراكك تلقائيًا من محفظتك عندما يتوفر فيها المبلغ.' : 'جدّد في الوقت المناسب لتبقى متصلًا.',
  `التفاصيل وطريقة الدفع: ${s.portalUrl}`,
];

const WORDS: Record<string, Words> = { en, ar };

export function reminderText(language: string, facts: ReminderFacts): string {
  // Chat apps lay a message out by its first letters: in a right-to-left one, the username, the
  // price and the link are left-to-right islands and the date keeps its own direction.
  const rtl = isRtl(language);
  const island = (text: string) => (rtl ? ltrIsolate(text) : text);
  const shown: Shown = {
    username: island(facts.username),
    expiryDate: rtl ? isolate(formatDate(facts.expiryDate, language)) : formatDate(facts.expiryDate, language),
    price: island(formatMoney(facts.price, facts.currency)),
    portalUrl: island(facts.portalUrl),
  };
  return (WORDS[language] ?? en)(facts, shown).join('\n');
}
