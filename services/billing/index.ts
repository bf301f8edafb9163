import type { ServiceSchema } from 'moleculer';
import { documentsService } from './documents.service';
import { invoicesService } from './invoices.service';

/** Invoices, payments, the ledger, wallet credit, commissions and proration (issue: billing). */
export const billingSchemas: ServiceSchema[] = [invoicesService, documentsService];
