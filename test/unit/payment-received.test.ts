/**
 * Issue 43: what an online payment's event says arrived, judged against what its checkout asked
 * (services/payments/received.ts).
 */
import { judgeReceived } from '../../services/payments/received';

const asked = { amount: 5000, currency: 'USD' };

test('the price or more in its currency is full', () => {
  expect(judgeReceived(asked, { amount: 5000, currency: 'USD' })).toEqual({ kind: 'full', amount: 5000 });
  expect(judgeReceived(asked, { amount: 5001, currency: 'USD' })).toEqual({ kind: 'full', amount: 5001 });
});

test('less in its currency is short, and the note says how much of what', () => {
  expect(judgeReceived(asked, { amount: 1, currency: 'USD' })).toEqual({
    kind: 'short',
    amount: 1,
    note: '0.01 USD of 50.00 USD received: booked as received',
  });
  expect(judgeReceived(asked, { amount: 0, currency: 'USD' }).kind).toBe('short');
});

test('another currency, or no amount at all, is a mismatch whatever the number', () => {
  expect(judgeReceived(asked, { amount: 5000, currency: 'EUR' })).toEqual({
    kind: 'mismatch',
    note: '50.00 EUR received for 50.00 USD asked: nothing booked',
  });
  expect(judgeReceived(asked, { amount: null, currency: 'USD' }).kind).toBe('mismatch');
  expect(judgeReceived(asked, { amount: 5000, currency: null }).kind).toBe('mismatch');
});
