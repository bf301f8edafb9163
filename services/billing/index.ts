import type { ServiceSchema } from 'moleculer';
import { documentsService } from './documents.service';
import { invoicesService } from './invoices.service';
import { ledgerService } from './ledger.service';
import { portalService } from './portal/portal.service';

/**
 * Invoices, payments, the ledger (and its list, GET /api/transactions), wallet credit, commissions and proration (issue: billing), and
 * the captive portal that shows a blocked subscriber what it owes.
 */
export const billingSchemas: ServiceSchema[] = [invoicesService, documentsService, portalService, ledgerService];
