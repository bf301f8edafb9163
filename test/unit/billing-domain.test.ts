import fc from 'fast-check';
import { allocateFifo, fifoOrder, type OpenInvoice } from '../../shared/domain/allocation';
import { invoiceTotals, lineAmount } from '../../shared/domain/invoice-math';
import {
  canDelete,
  canEdit,
  isOverdue,
  paymentRefusal,
  statusAfterPayment,
  type InvoiceStatus,
} from '../../shared/domain/invoice-state';
import { formatInvoiceNumber } from '../../shared/billing/invoices';
import { addDays } from '../../shared/billing/dates';

const money = fc.integer({ min: 0, max: 10_000_000 });
const qty = fc.integer({ min: 1, max: 1_000_000 }).map((n) => (n / 1000).toFixed(3));
const rate = fc.integer({ min: 0, max: 10_000 }).map((n) => (n / 100).toFixed(2));

describe('invoice totals', () => {
  it('rounds each line half-up once', () => {
    expect(lineAmount('1.005', 100)).toBe(101); // 100.5 -> 101
    expect(lineAmount('0.333', 100)).toBe(33); // 33.3 -> 33
    expect(lineAmount(3, 1050)).toBe(3150);
    expect(lineAmount('2.5', 1)).toBe(3);
  });

  it('tax and commission are on the amount before tax, half-up', () => {
    const t = invoiceTotals([{ description: 'a', qty: 1, unitPrice: 1005 }], '7.5', '12.5');
    expect(t).toMatchObject({ amount: 1005, taxAmount: 75, total: 1080, commissionAmount: 126 });
  });

  it('refuses a total that would not stay exact', () => {
    expect(() => invoiceTotals([{ description: 'a', qty: 1_000_000, unitPrice: 1e14 }], 0, 0)).toThrow(RangeError);
  });

  it('property: amount = sum of lines; total = amount + tax; tax within one unit of the exact value', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ qty, unitPrice: money }), { minLength: 1, maxLength: 20 }),
        rate,
        rate,
        (lines, taxRate, commission) => {
          const items = lines.map((l) => ({ description: 'x', ...l }));
          const t = invoiceTotals(items, taxRate, commission);
          expect(t.amount).toBe(t.items.reduce((s, it) => s + it.amount, 0));
          expect(t.total).toBe(t.amount + t.taxAmount);
          const exactTax = BigInt(t.amount) * BigInt(Math.round(Number(taxRate) * 100)); // scaled by 10^4
          const diff = BigInt(t.taxAmount) * 10000n - exactTax;
          expect(diff <= 5000n && diff > -5000n).toBe(true); // |error| <= half a minor unit
          for (const it of t.items) {
            expect(Number.isSafeInteger(it.amount)).toBe(true);
            expect(it.amount).toBeGreaterThanOrEqual(0);
          }
          expect(t.taxAmount).toBeGreaterThanOrEqual(0);
          expect(t.commissionAmount).toBeLessThanOrEqual(t.amount);
        },
      ),
    );
  });
});

describe('invoice state', () => {
  it('payment transitions of spec 3.1', () => {
    expect(statusAfterPayment('pending', 1000, 400)).toBe('partial');
    expect(statusAfterPayment('partial', 1000, 1000)).toBe('paid');
    expect(statusAfterPayment('pending', 1000, 1000)).toBe('paid');
    expect(statusAfterPayment('overdue', 1000, 500)).toBe('overdue');
    expect(statusAfterPayment('overdue', 1000, 1000)).toBe('paid');
  });

  it('refusals', () => {
    expect(paymentRefusal('void', 1000, 0, 1)).toBe('void');
    expect(paymentRefusal('pending', 1000, 0, 0)).toBe('not_positive');
    expect(paymentRefusal('partial', 1000, 600, 401)).toBe('exceeds_balance');
    expect(paymentRefusal('paid', 1000, 1000, 1)).toBe('exceeds_balance');
    expect(paymentRefusal('overdue', 1000, 600, 400)).toBeNull();
  });

  it('edit, delete and overdue rules', () => {
    expect(canEdit('pending')).toBe(true);
    for (const s of ['partial', 'paid', 'overdue', 'void']) expect(canEdit(s)).toBe(false);
    expect(canDelete('paid')).toBe(false);
    expect(canDelete('void')).toBe(true);
    expect(isOverdue('pending', '2024-01-01', '2024-01-02', 100, 0)).toBe(true);
    expect(isOverdue('pending', '2024-01-02', '2024-01-02', 100, 0)).toBe(false); // due today is not late
    expect(isOverdue('partial', '2024-01-01', '2024-01-02', 100, 100)).toBe(false);
    expect(isOverdue('void', '2024-01-01', '2024-01-02', 100, 0)).toBe(false);
    expect(isOverdue('paid', '2024-01-01', '2024-01-02', 100, 100)).toBe(false);
  });

  it('property: a sequence of valid payments never overpays and ends paid exactly at the total', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.array(fc.integer({ min: 1, max: 1_000_000 }), { maxLength: 30 }),
        (total, attempts) => {
          let status: InvoiceStatus = 'pending';
          let paid = 0;
          for (const amount of attempts) {
            if (paymentRefusal(status, total, paid, amount) !== null) continue;
            paid += amount;
            status = statusAfterPayment(status, total, paid);
            expect(total - paid).toBeGreaterThanOrEqual(0);
          }
          expect(status === 'paid').toBe(paid === total);
        },
      ),
    );
  });
});

const status = fc.constantFrom('pending', 'partial', 'paid', 'overdue', 'void');
const invoiceArb = fc
  .record({
    issueDate: fc.integer({ min: 0, max: 60 }).map((d) => addDays('2024-01-01', d)),
    status,
    total: fc.integer({ min: 0, max: 100_000 }),
    paidFraction: fc.double({ min: 0, max: 1, noNaN: true }),
  })
  .map((r) => ({ ...r, paidAmount: r.status === 'paid' ? r.total : Math.floor(r.total * r.paidFraction) }));
const invoicesArb = fc.array(invoiceArb, { maxLength: 15 }).map((list) =>
  list.map((r, i): OpenInvoice => ({
    id: i + 1,
    issueDate: r.issueDate,
    status: r.status,
    total: r.total,
    paidAmount: r.paidAmount,
  })),
);

describe('FIFO allocation', () => {
  it('oldest issue date first, then id; partial on the last; excess remains', () => {
    const invs: OpenInvoice[] = [
      { id: 3, issueDate: '2024-01-02', status: 'pending', total: 500, paidAmount: 0 },
      { id: 1, issueDate: '2024-01-05', status: 'pending', total: 500, paidAmount: 0 },
      { id: 2, issueDate: '2024-01-02', status: 'partial', total: 500, paidAmount: 200 },
      { id: 4, issueDate: '2024-01-01', status: 'void', total: 500, paidAmount: 0 },
    ];
    expect(allocateFifo(invs, 700)).toEqual({
      allocations: [
        { invoiceId: 2, amount: 300 },
        { invoiceId: 3, amount: 400 },
      ],
      remaining: 0,
    });
    expect(allocateFifo(invs, 2000)).toEqual({
      allocations: [
        { invoiceId: 2, amount: 300 },
        { invoiceId: 3, amount: 500 },
        { invoiceId: 1, amount: 500 },
      ],
      remaining: 700,
    });
  });

  it('property: sum of allocations + remaining = amount; each within balance; never void or paid; oldest first', () => {
    fc.assert(
      fc.property(invoicesArb, fc.integer({ min: 0, max: 500_000 }), (invs, amount) => {
        const { allocations, remaining } = allocateFifo(invs, amount);
        const byId = new Map(invs.map((i) => [i.id, i]));
        expect(allocations.reduce((s, a) => s + a.amount, 0) + remaining).toBe(amount);
        expect(remaining).toBeGreaterThanOrEqual(0);
        for (const a of allocations) {
          const inv = byId.get(a.invoiceId)!;
          expect(['void', 'paid']).not.toContain(inv.status);
          expect(a.amount).toBeGreaterThan(0);
          expect(a.amount).toBeLessThanOrEqual(inv.total - inv.paidAmount);
        }
        // Oldest first: allocations follow FIFO order, and every invoice before the last allocated one
        // is fully covered.
        const order = fifoOrder(allocations.map((a) => byId.get(a.invoiceId)!)).map((i) => i.id);
        expect(allocations.map((a) => a.invoiceId)).toEqual(order);
        allocations.slice(0, -1).forEach((a) => {
          const inv = byId.get(a.invoiceId)!;
          expect(a.amount).toBe(inv.total - inv.paidAmount);
        });
        // Money is left over only when every open balance was covered.
        const openBalance = invs
          .filter((i) => ['pending', 'partial', 'overdue'].includes(i.status))
          .reduce((s, i) => s + Math.max(0, i.total - i.paidAmount), 0);
        expect(remaining).toBe(Math.max(0, amount - openBalance));
      }),
    );
  });
});

describe('invoice numbers and dates', () => {
  it('prefix-year-6 digits', () => {
    expect(formatInvoiceNumber('INV', 2026, 42)).toBe('INV-2026-000042');
    expect(formatInvoiceNumber('X', 2026, 1234567)).toBe('X-2026-1234567');
  });
  it('adds days across month and leap-year ends', () => {
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2023-12-31', 1)).toBe('2024-01-01');
  });
});
