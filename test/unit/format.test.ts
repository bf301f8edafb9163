/** The one money and date format of documents, the portal and chat messages (shared/format.ts). */
import { formatDate, formatDateTime, formatMoney, isolate, ltrIsolate } from '../../shared/format';
import { reminderText } from '../../services/subscribers/lifecycle/reminder-text';

describe('formatMoney', () => {
  it('prints the ISO 4217 digits of the currency, whatever the amount', () => {
    expect(formatMoney(25_000_000, 'IQD')).toBe('25,000.000 IQD');
    expect(formatMoney(5_833_333, 'IQD')).toBe('5,833.333 IQD');
    expect(formatMoney(30250, 'USD')).toBe('302.50 USD');
    expect(formatMoney(1234, 'JPY')).toBe('1,234 JPY');
    expect(formatMoney(-5, 'USD')).toBe('-0.05 USD');
  });
});

describe('formatDate and formatDateTime', () => {
  it('write a calendar date in the language with Latin digits, the same day in every time zone', () => {
    expect(formatDate('2025-03-15', 'en')).toBe('Mar 15, 2025');
    expect(formatDate('2025-03-15', 'ar')).toBe('15 مارس 2025');
    expect(formatDate(new Date('2025-03-15T23:30:00Z'), 'en')).toBe('Mar 15, 2025');
  });

  it('write an instant to the minute in 24 hours, UTC', () => {
    expect(formatDateTime('2026-11-28T03:17:37.309Z', 'en')).toBe('Nov 28, 2026, 03:17');
    expect(formatDateTime('2026-11-28T15:17:37.309Z', 'ar')).toMatch(/^28 نوفمبر 2026.* 15:17$/);
  });

  it('fall back to English for a language code Intl does not take, and leave a non-date as it is', () => {
    expect(formatDate('2025-03-15', 'x')).toBe('Mar 15, 2025');
    expect(formatDate('soon', 'en')).toBe('soon');
  });
});

describe('chat text in a right-to-left language', () => {
  const facts = {
    operator: 'Skyline',
    username: 'layla@isp',
    expiryDate: '2025-03-15',
    days: 3,
    price: 25_000_000,
    currency: 'IQD',
    portalUrl: 'http://billing.test/portal',
    autoRenew: false,
  };

  it('isolates the username, price and link, and writes the date in Arabic', () => {
    const text = reminderText('ar', facts);
    expect(text).toContain(ltrIsolate('layla@isp'));
    expect(text).toContain(ltrIsolate('25,000.000 IQD'));
    expect(text).toContain(ltrIsolate('http://billing.test/portal'));
    expect(text).toContain(isolate('15 مارس 2025'));
  });

  it('leaves English text without isolates', () => {
    const text = reminderText('en', facts);
    expect(text).toContain('ends on Mar 15, 2025, in 3 days.');
    expect(text).toContain('Renewal price: 25,000.000 IQD.');
    expect(text).not.toMatch(/[\u2066-\u2069]/);
  });
});
