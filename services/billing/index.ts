import type { ServiceSchema } from 'moleculer';

/** Invoices, payments, the ledger, wallet credit, commissions and proration (issue: billing). */
export const billingSchemas: ServiceSchema[] = [{ name: 'billing' }];
