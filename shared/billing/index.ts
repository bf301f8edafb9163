/**
 * Billing writes that take a transaction handle (`Tx`), shared by the billing service's actions and
 * by the subscribers unit (renewals, change of plan, add-balance). Amounts are integer minor units.
 * Lock order everywhere: the subscriber row, then its invoices by ascending id.
 * Errors are failures of the catalogue (shared/failures.ts, `fail`); let them propagate.
 */
export { consolidateInvoices, type ConsolidateInput, type ConsolidateResult } from './consolidation';
export { addDays, todayUtc } from './dates';
export {
  checkItems,
  checkTaxRate,
  createInvoice,
  createInvoices,
  deleteInvoice,
  formatInvoiceNumber,
  loadItems,
  lockInvoice,
  lockPendingInvoices,
  readInvoiceForPayment,
  updatePendingInvoice,
  voidInvoices,
  voidUnpaidInvoice,
  type CreateInvoiceInput,
  type InvoiceChanges,
} from './invoices';
export { applyPayment, payFifo, type FifoInput, type FifoResult, type PaymentInput } from './payments';
export { recordPayment, recordPaymentUnlocked, type PaymentDetails } from './record-payment';
export {
  quoteServiceChange,
  settleServiceChange,
  type ServiceChangeQuote,
  type ServiceChangeSettlement,
} from './service-change';
export { lockSubscriber, lockSubscriberEvenDeleted, type LockedSubscriber } from './subscribers';
export * from './types';
export {
  creditWallet,
  lockWalletCurrency,
  payFromWallet,
  type WalletCreditInput,
  type WalletCreditResult,
  type WalletPaymentInput,
  type WalletPaymentResult,
} from './wallet';
export { settleFromWallet, type WalletSettlement } from './wallet-settle';
export { RENEWAL_COLUMNS, renewalParties, type RenewalColumns } from './renewal-terms';
export { payNewInvoicesFromWallets, type WalletDraw } from './wallet-batch';
