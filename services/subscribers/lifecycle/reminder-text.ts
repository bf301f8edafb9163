/**
 * The words of an expiry reminder, in the operator's language (setting `language`), English for
 * every language without its own list, like the documents and the captive portal. Pure: the
 * sweep passes in what the message says.
 */
import { formatMinor } from '../../../shared/money';

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

type Words = (f: ReminderFacts, price: string) => string[];

const en: Words = (f, price) => [
  `${f.operator}: your internet subscription ${f.username} ` +
    (f.days === 0
      ? `ends today (${f.expiryDate}).`
      : `ends on ${f.expiryDate}, in ${f.days} ${f.days === 1 ? 'day' : 'days'}.`),
  `Renewal price: ${price}.`,
  f.autoRenew
    ? 'It renews by itself from your wallet when the wallet holds the price.'
    : 'Renew in time to stay connected.',
  `Details and how to pay: ${f.portalUrl}`,
];

const ar: Words = (f, price) => [
  `${f.operator}: ينتهي اشتراك الإنترنت الخاص بك ${f.username} ` +
    (f.days === 0
      ? `اليوم (${f.expiryDate}).`
      : `في ${f.expiryDate}، بعد ${f.days} ${f.days === 1 ? 'يوم' : f.days === 2 ? 'يومين' : 'أيام'}.`),
  `سعر التجديد: ${price}.`,
  f.autoRenew ? 'يتجدد اشتراكك تلقائيًا من محفظتك عندما يتوفر فيها المبلغ.' : 'جدّد في الوقت المناسب لتبقى متصلًا.',
  `التفاصيل وطريقة الدفع: ${f.portalUrl}`,
];

const WORDS: Record<string, Words> = { en, ar };

export function reminderText(language: string, facts: ReminderFacts): string {
  const price = `${formatMinor(facts.price, facts.currency)} ${facts.currency}`;
  return (WORDS[language] ?? en)(facts, price).join('\n');
}
