/**
 * FIFO allocation of one amount over a subscriber's open invoices (quick-pay): oldest issue date
 * first, then lowest id; each invoice takes at most its balance; the invoice where the money runs
 * out takes a partial amount; void and paid invoices (and anything with no balance) take nothing.
 * What is left over is `remaining` (the caller credits it to the wallet).
 */
import { isOpen } from './invoice-state';

export interface OpenInvoice {
  id: number;
  issueDate: string;
  status: string;
  total: number;
  paidAmount: number;
}

export interface Allocation {
  invoiceId: number;
  amount: number;
}

export function fifoOrder<T extends { id: number; issueDate: string }>(list: T[]): T[] {
  return [...list].sort((a, b) => (a.issueDate < b.issueDate ? -1 : a.issueDate > b.issueDate ? 1 : a.id - b.id));
}

export function allocateFifo(
  invoices: OpenInvoice[],
  amount: number,
): { allocations: Allocation[]; remaining: number } {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new RangeError('amount must be a non-negative integer');
  const allocations: Allocation[] = [];
  let left = amount;
  for (const inv of fifoOrder(invoices)) {
    if (left === 0) break;
    const balance = inv.total - inv.paidAmount;
    if (!isOpen(inv.status) || balance <= 0) continue;
    const take = Math.min(balance, left);
    allocations.push({ invoiceId: inv.id, amount: take });
    left -= take;
  }
  return { allocations, remaining: left };
}
